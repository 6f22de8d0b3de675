package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
	"facturad/hacienda/sandbox"
	"facturad/signer/certmint"
)

// TestAccountantMonth runs the documents that reference others (A.15)
// against a running service and a sandbox of the test's own (whose
// rejections the test controls): voids, a re-issue and payment receipts,
// each settled by the tax authority. On both stores.
func TestAccountantMonth(t *testing.T) {
	notQuick(t, "an end-to-end drill (the Quick start runs one)")
	onBothStores(t, func(t *testing.T, storeArgs []string) {
		sb := sandbox.NewTestServer(t, sandbox.Options{})
		_, api, _, stop := startService(t, t.TempDir(), append(sandboxService(t, sb), storeArgs...)...)
		defer stop()
		accountantMonth(t, api, sb)
	})
}

// readDoc is the read answer with the balance.
type readDoc struct {
	document
	SaldoPendiente *string `json:"saldoPendiente"`
}

func accountantMonth(t *testing.T, api string, sb *sandbox.TestServer) {
	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	b := createCompany(t, admin, ca, "3101888001")

	fe := func(id, condicion string) document {
		t.Helper()
		pago := `,"medioPago":[{"tipoMedioPago":"01"}]`
		plazo := ""
		if condicion == "10" {
			pago, plazo = "", `"plazo_credito":30,`
		}
		body := []byte(`{"id_externo":"` + id + `","tipo_documento":"01","condicion_venta":"` + condicion + `",` + plazo + `
		  "receptor":{"nombre":"Compradora S.A.","identificacion":{"tipo":"02","numero":"3101888999"},"correoElectronico":"compras@example.com"},
		  "detalleServicio":[
		    {"numeroLinea":1,"codigoCABYS":"2391901000000","cantidad":3,"unidadMedida":"Unid","detalle":"Cemento gris",
		     "precioUnitario":5000,"descuento":[{"montoDescuento":1000,"codigoDescuento":"07","naturalezaDescuento":"Cliente frecuente"}],
		     "impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13}]},
		    {"numeroLinea":2,"codigoCABYS":"8314100000000","cantidad":1,"unidadMedida":"Sp","detalle":"Asesoría técnica",
		     "precioUnitario":10000,"impuesto":[{"codigo":"01","codigoTarifaIVA":"04","tarifa":4}]}],
		  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1}` + pago + `}}`)
		var sent document
		b.json("POST", "/api/documents/v4", body, 200, &sent)
		return sent
	}
	settle := func(d document, want string) document {
		t.Helper()
		got := b.checkUntilVerdict(d.Clave, "")
		if got.Estado != want {
			t.Fatalf("%s ended %s (%s %v), want %s", d.Clave, got.Estado, got.Mensaje, got.Detalle, want)
		}
		return got
	}
	signed := func(clave string) *hacienda.Document {
		t.Helper()
		status, x := b.do("GET", "/api/documents/"+clave+"/xml/v4", "", nil)
		if status != 200 {
			t.Fatalf("XML of %s: %d", clave, status)
		}
		doc, err := hacienda.ParseXML(x)
		if err != nil {
			t.Fatalf("parse XML of %s: %v", clave, err)
		}
		return doc
	}
	refusedOn := func(path, body, field string) {
		t.Helper()
		status, raw := b.do("POST", path, "application/json", []byte(body))
		var e struct {
			Errors map[string][]string `json:"errors"`
		}
		if status != 400 || json.Unmarshal(raw, &e) != nil || len(e.Errors[field]) == 0 {
			t.Fatalf("POST %s %s: %d %s, want a 400 on %s", path, body, status, raw, field)
		}
	}
	numero := func(d document) int {
		n, _ := strconv.Atoi(d.Consecutivo[10:])
		return n
	}
	ref := func(doc *hacienda.Document) hacienda.InformacionReferencia {
		t.Helper()
		if len(doc.InformacionReferencia) != 1 {
			t.Fatalf("references: %+v", doc.InformacionReferencia)
		}
		return doc.InformacionReferencia[0]
	}

	// A full void of an accepted FE: code 01, TipoDocIR 01.
	fe1 := fe("fe-1", "01")
	settle(fe1, "01")
	voidBody := `{"id_externo":"nc-1","razon":"Factura emitida por error"}`
	var nc1 document
	b.json("POST", "/api/documents/"+fe1.Clave+"/anular/v4", []byte(voidBody), 200, &nc1)
	if nc1.Consecutivo[8:10] != "03" {
		t.Fatalf("the void issued %s, not a credit note", nc1.Consecutivo)
	}
	settle(nc1, "01")
	x1 := signed(nc1.Clave)
	orig1 := signed(fe1.Clave)
	if r := ref(x1); r.TipoDocIR != "01" || r.Numero != fe1.Clave || r.Codigo != "01" || !r.FechaEmisionIR.Equal(orig1.FechaEmision) {
		t.Errorf("NC reference %+v", r)
	}
	if !x1.ResumenFactura.TotalComprobante.Decimal().Equal(orig1.ResumenFactura.TotalComprobante.Decimal()) {
		t.Errorf("full void credits %s of %s", x1.ResumenFactura.TotalComprobante.Decimal(), orig1.ResumenFactura.TotalComprobante.Decimal())
	}
	// The same body again replays the same credit note.
	var again document
	b.json("POST", "/api/documents/"+fe1.Clave+"/anular/v4", []byte(voidBody), 200, &again)
	if again.Clave != nc1.Clave {
		t.Errorf("replay issued %s, want %s", again.Clave, nc1.Clave)
	}
	// Voiding it twice is refused on clave, and takes no number.
	refusedOn("/api/documents/"+fe1.Clave+"/anular/v4", `{"id_externo":"nc-1b","razon":"Otra vez"}`, "clave")
	refusedOn("/api/documents/"+fe1.Clave+"/anular/v4", `{"id_externo":"nc-1c","razon":"Otra vez","lineas":[{"numeroLinea":1,"cantidad":1}]}`, "lineas[0].cantidad")

	// A rejected FE cannot be voided; it is re-issued, referencing it
	// with TipoDocIR 10.
	if err := sb.SetFaults(sandbox.Faults{RejectNext: 1, RejectDetail: []string{"-99 Rechazo de prueba"}}); err != nil {
		t.Fatal(err)
	}
	fe3 := fe("fe-3", "01")
	settle(fe3, "02")
	refusedOn("/api/documents/"+fe3.Clave+"/anular/v4", `{"id_externo":"nc-3","razon":"Rechazada"}`, "clave")
	refusedOn("/api/documents/"+fe1.Clave+"/reemitir/v4", `{"id_externo":"re-1"}`, "clave")
	var re3 document
	b.json("POST", "/api/documents/"+fe3.Clave+"/reemitir/v4", []byte(`{"id_externo":"re-3","receptor":{"nombre":"Compradora Corregida S.A.","identificacion":{"tipo":"02","numero":"3101888999"}}}`), 200, &re3)
	if re3.Clave == fe3.Clave || re3.Consecutivo[8:10] != "01" {
		t.Fatalf("re-issue %+v", re3)
	}
	settle(re3, "01")
	xr := signed(re3.Clave)
	if r := ref(xr); r.TipoDocIR != "10" || r.Numero != fe3.Clave || r.Codigo != "04" {
		t.Errorf("re-issue reference %+v", r)
	}
	if xr.Receptor == nil || xr.Receptor.Nombre != "Compradora Corregida S.A." || len(xr.DetalleServicio) != 2 {
		t.Errorf("re-issue did not merge the new receptor over the lines: %+v", xr.Receptor)
	}

	// A partial void of goods: code 06, the discount scaled; its number
	// follows the first credit note's (the refusals took none).
	fe2 := fe("fe-2", "01")
	settle(fe2, "01")
	refusedOn("/api/documents/"+fe2.Clave+"/anular/v4", `{"id_externo":"nc-2x","razon":"Devolución","lineas":[{"numeroLinea":9,"cantidad":1}]}`, "lineas[0].numeroLinea")
	refusedOn("/api/documents/"+fe2.Clave+"/anular/v4", `{"id_externo":"nc-2y","razon":"Devolución","lineas":[{"numeroLinea":1,"cantidad":4}]}`, "lineas[0].cantidad")
	var nc2 document
	b.json("POST", "/api/documents/"+fe2.Clave+"/anular/v4", []byte(`{"id_externo":"nc-2","razon":"Devolución de un saco","lineas":[{"numeroLinea":1,"cantidad":1}]}`), 200, &nc2)
	if numero(nc2) != numero(nc1)+1 {
		t.Errorf("the second credit note is number %d, the first %d: a refusal took a number", numero(nc2), numero(nc1))
	}
	settle(nc2, "01")
	x2 := signed(nc2.Clave)
	if r := ref(x2); r.TipoDocIR != "01" || r.Numero != fe2.Clave || r.Codigo != "06" {
		t.Errorf("partial NC reference %+v", r)
	}
	if l := x2.DetalleServicio; len(l) != 1 || !l[0].Cantidad.Decimal().Equal(decimal.NewFromInt(1)) ||
		len(l[0].Descuento) != 1 || l[0].Descuento[0].MontoDescuento.Decimal().String() != "333.33333" {
		t.Errorf("partial NC lines %+v", l)
	}
	// The rest of the document, service included: code 02, then nothing
	// is left.
	var nc2b document
	b.json("POST", "/api/documents/"+fe2.Clave+"/anular/v4", []byte(`{"id_externo":"nc-2b","razon":"Resto"}`), 200, &nc2b)
	settle(nc2b, "01")
	if r := ref(signed(nc2b.Clave)); r.Codigo != "02" {
		t.Errorf("the rest's code %s, want 02", r.Codigo)
	}
	refusedOn("/api/documents/"+fe2.Clave+"/anular/v4", `{"id_externo":"nc-2c","razon":"Nada queda"}`, "clave")

	// A credit sale paid in three receipts: the balance ends at 0 and a
	// fourth payment is refused.
	refusedOn("/api/documents/"+fe1.Clave+"/recibo-pago/v4", `{"id_externo":"rep-0","monto":"1","medioPago":"04"}`, "condicion_venta")
	fe4 := fe("fe-4", "10")
	settle(fe4, "01")
	x4 := signed(fe4.Clave)
	total := x4.ResumenFactura.TotalComprobante.Decimal()
	saldo := func() string {
		t.Helper()
		var r readDoc
		b.json("GET", "/api/documents/"+fe4.Clave+"/v4", nil, 200, &r)
		if r.SaldoPendiente == nil {
			t.Fatalf("no saldoPendiente on a credit sale")
		}
		return *r.SaldoPendiente
	}
	if got := saldo(); got != total.StringFixed(5) {
		t.Fatalf("saldoPendiente %s before any payment, want %s", got, total.StringFixed(5))
	}
	first, second := decimal.RequireFromString("10000.33333"), decimal.RequireFromString("5000")
	pays := []decimal.Decimal{first, second, total.Sub(first).Sub(second)}
	var repTotal, repTax decimal.Decimal
	for i, m := range pays {
		var rep document
		b.json("POST", "/api/documents/"+fe4.Clave+"/recibo-pago/v4",
			[]byte(fmt.Sprintf(`{"id_externo":"rep-%d","monto":"%s","medioPago":"04","fecha":"2026-01-05"}`, i+1, m.String())), 200, &rep)
		if rep.Consecutivo[8:10] != "10" {
			t.Fatalf("payment %d issued %s, not a REP", i+1, rep.Consecutivo)
		}
		settle(rep, "01")
		x := signed(rep.Clave)
		if r := ref(x); r.TipoDocIR != "01" || r.Numero != fe4.Clave {
			t.Errorf("REP reference %+v", r)
		}
		if x.CondicionVenta != "11" || !x.ResumenFactura.TotalComprobante.Decimal().Equal(m) {
			t.Errorf("REP %d: condicion %s total %s, want 11 and %s", i+1, x.CondicionVenta, x.ResumenFactura.TotalComprobante.Decimal(), m)
		}
		repTotal = repTotal.Add(x.ResumenFactura.TotalComprobante.Decimal())
		repTax = repTax.Add(x.ResumenFactura.TotalImpuesto.Decimal())
		if want := total.Sub(repTotal).StringFixed(5); saldo() != want {
			t.Errorf("after payment %d saldoPendiente %s, want %s", i+1, saldo(), want)
		}
	}
	if got := saldo(); got != "0.00000" {
		t.Errorf("saldoPendiente after the last payment %q, want 0.00000", got)
	}
	if !repTax.Equal(x4.ResumenFactura.TotalImpuesto.Decimal()) {
		t.Errorf("the receipts' taxes add up to %s, the invoice's are %s", repTax, x4.ResumenFactura.TotalImpuesto.Decimal())
	}
	refusedOn("/api/documents/"+fe4.Clave+"/recibo-pago/v4", `{"id_externo":"rep-4","monto":"1","medioPago":"04"}`, "monto")
	if !strings.HasPrefix(fe4.Consecutivo, fe1.Consecutivo[:8]) {
		t.Errorf("consecutivos of one branch differ: %s %s", fe4.Consecutivo, fe1.Consecutivo)
	}
}
