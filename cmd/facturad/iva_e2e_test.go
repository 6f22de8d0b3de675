package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/hacienda"
	"facturad/signer/certmint"
	"facturad/tenant"
)

// TestIVASummaryEndToEnd: a company's month through the real API and the
// built-in sandbox (A.15). It issues documents at every IVA rate code that
// counts differently (13 %, 4 %, 2 %, 1 %, exempt 10, 0 % 01 and 11), a
// selectivo, a partially and a fully exonerated line, an invoice in
// dollars, a credit note and a debit note about accepted documents; receives a supplier's documents
// accepted with mensaje 1 and 2 declaring creditable tax (and one rejected
// with mensaje 3, which counts nothing); then reads the month's summary as
// JSON and as CSV and compares every figure with the hand computation
// below, to the céntimo. On both stores.
func TestIVASummaryEndToEnd(t *testing.T) {
	notQuick(t, "an end-to-end drill (the Quick start runs one)")
	onBothStores(t, func(t *testing.T, storeArgs []string) {
		_, api, _, stop := startService(t, t.TempDir(), append([]string{
			"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken}, storeArgs...)...)
		defer stop()
		ivaMonth(t, api)
	})
}

// ivaReceptor is the customer of the company's sales.
const ivaReceptor = `{"nombre":"Cliente S.A.","identificacion":{"tipo":"02","numero":"3101998877"},"correoElectronico":"compras@example.com"}`

// ivaSale is a send body of tipo with the given lines and references.
func ivaSale(id, tipo, receptor string, lines []string, ref string) []byte {
	b := `{"id_externo":"` + id + `","tipo_documento":"` + tipo + `","condicion_venta":"01","receptor":` + receptor +
		`,"detalleServicio":[` + strings.Join(lines, ",") + `],` +
		`"resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}`
	if ref != "" {
		b += `,"informacionReferencia":[` + ref + `]`
	}
	return []byte(b + "}")
}

// ivaLine is line n: cantidad × precio with the taxes given (JSON).
func ivaLine(n int, cantidad, precio string, taxes ...string) string {
	return fmt.Sprintf(`{"numeroLinea":%d,"codigoCABYS":"8314100000000","cantidad":%s,"unidadMedida":"Sp","detalle":"Servicio %d",`+
		`"precioUnitario":%s,"impuesto":[%s]}`, n, cantidad, n, precio, strings.Join(taxes, ","))
}

// iva is an IVA tax at rate code rc.
func iva(rc string) string { return `{"codigo":"01","codigoTarifaIVA":"` + rc + `"}` }

// ivaExonerated is 13 % IVA exonerated at tarifaExonerada by a special
// law (03, which no registry holds).
func ivaExonerated(tarifa string) string {
	return `{"codigo":"01","codigoTarifaIVA":"08","exoneracion":{"tipoDocumentoEX1":"03","numeroDocumento":"AL-00012345-24",` +
		`"articulo":8,"inciso":2,"nombreInstitucion":"01","tarifaExonerada":` + tarifa + `,"fechaEmisionEX":"2026-01-10T00:00:00"}}`
}

// ivaRef refers to the accepted document clave.
func ivaRef(clave, codigo string) string {
	now := time.Now().In(hacienda.CostaRica).Add(-time.Minute).Format("2006-01-02T15:04:05")
	return `{"tipoDocIR":"01","numero":"` + clave + `","fechaEmisionIR":"` + now + `","codigo":"` + codigo + `","razon":"Ajuste de la factura"}`
}

// ivaIssue sends body as c and waits for the tax authority's acceptance;
// it returns the clave.
func ivaIssue(t *testing.T, c apiClient, body []byte) string {
	t.Helper()
	var sent document
	c.json("POST", "/api/documents/v4", body, 200, &sent)
	if checked := c.checkUntilVerdict(sent.Clave, ""); checked.Estado != "01" {
		t.Fatalf("document %s: %+v", sent.Clave, checked)
	}
	return sent.Clave
}

func ivaMonth(t *testing.T, api string) {
	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	const sellerID, supplierID = "3101888001", "3101888002"
	seller, companyID := createCompanyWith(t, admin, ca, sellerID, certmint.Options{}, nil)
	supplier := createCompany(t, admin, ca, supplierID)
	periodo := tenant.MonthOf(time.Now()).Periodo

	// Sales. FE A, one line per case (SubTotal = cantidad × precio; IVA =
	// BaseImponible × tarifa, 5 decimals):
	//   1  13 %  1 × 100.50             base 100.50, IVA 13.065
	//   2   4 %  3 × 33.33 = 99.99      base 99.99,  IVA 3.9996
	//   3   2 %  1 × 250                base 250,    IVA 5
	//   4   1 %  1 × 80.10              base 80.10,  IVA 0.801
	//   5  exempt (10)  1 × 40          exento 40
	//   6  0 % (01)     1 × 30          noSujeto 30
	//   7  0 % (11)     1 × 20          noSujeto 20
	//   8  selectivo 10 % on 200 = 20 (its own row: base 200, impuesto 20);
	//      IVA 13 % on BaseImponible 200 + 20 = 220: 28.6
	//   9  13 % on 1,000 = 130, exonerated at 10 %: MontoExoneracion 100,
	//      impuesto 130 − 100 = 30; the base splits by 100/130:
	//      exonerado 1000 × 100 / 130 = 769.230769… → 769.23077,
	//      baseImponible 1000 − 769.23077 = 230.76923
	//  10  13 % on 500 = 65, exonerated at 13 % (all of it): impuesto 0,
	//      exonerado 500, nothing to the base
	feA := ivaIssue(t, seller, ivaSale("iva-a", "01", ivaReceptor, []string{
		ivaLine(1, "1", "100.50", iva("08")),
		ivaLine(2, "3", "33.33", iva("04")),
		ivaLine(3, "1", "250", iva("03")),
		ivaLine(4, "1", "80.10", iva("02")),
		ivaLine(5, "1", "40", iva("10")),
		ivaLine(6, "1", "30", iva("01")),
		ivaLine(7, "1", "20", iva("11")),
		ivaLine(8, "1", "200", `{"codigo":"02","tarifa":10}`, iva("08")),
		ivaLine(9, "1", "1000", ivaExonerated("10")),
		ivaLine(10, "1", "500", ivaExonerated("13")),
	}, ""))
	// FE B: 13 % on 0.50 = 0.065.
	feB := ivaIssue(t, seller, ivaSale("iva-b", "01", ivaReceptor, []string{ivaLine(1, "1", "0.50", iva("08"))}, ""))
	// FE U, in US dollars at 500 colones: 13 % on 10.01 = 1.3013 dollars;
	// in colones base 10.01 × 500 = 5005, IVA 1.3013 × 500 = 650.65.
	ivaIssue(t, seller, bytes.Replace(ivaSale("iva-usd", "01", ivaReceptor, []string{ivaLine(1, "1", "10.01", iva("08"))}, ""),
		[]byte(`"codigoMoneda":"CRC","tipoCambio":1`), []byte(`"codigoMoneda":"USD","tipoCambio":500`), 1))
	// NC about A (subtracted): 4 % on 1 × 33.33 = 1.3332.
	ivaIssue(t, seller, ivaSale("iva-nc", "03", ivaReceptor, []string{ivaLine(1, "1", "33.33", iva("04"))}, ivaRef(feA, "02")))
	// ND about B (added): 2 % on 1 × 10.25 = 0.205.
	ivaIssue(t, seller, ivaSale("iva-nd", "02", ivaReceptor, []string{ivaLine(1, "1", "10.25", iva("03"))}, ivaRef(feB, "04")))

	// Purchases: the supplier's FEs to the company, answered through the
	// receive route.
	buyer, err := client.New(seller.base, client.WithCredentials(seller.user, seller.pass, seller.token), client.WithHTTPClient(checkedHTTP(t)))
	if err != nil {
		t.Fatal(err)
	}
	buyerParty := `{"nombre":"Empresa ` + sellerID + ` S.A.","identificacion":{"tipo":"02","numero":"` + sellerID + `"},"correoElectronico":"facturas@example.com"}`
	receive := func(id string, lines []string, answer client.ReceiveRequest) {
		t.Helper()
		clave := ivaIssue(t, supplier, ivaSale(id, "01", buyerParty, lines, ""))
		status, xml := supplier.do("GET", "/api/documents/"+clave+"/xml/v4", "", nil)
		if status != 200 {
			t.Fatalf("the supplier's XML: %d", status)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		answer.XML, answer.IDExterno = xml, "respuesta-"+id
		if _, err := buyer.Receive(ctx, &answer); err != nil {
			t.Fatalf("receive %s: %v", id, err)
		}
		final, err := buyer.WaitReceivedFinal(ctx, clave, 100*time.Millisecond)
		if err != nil || final.Estado != client.EstadoAccepted {
			t.Fatalf("the message about %s: %+v %v", id, final, err)
		}
	}
	// R1: 13 % on 1,000 = 130 and 1 % on 500 = 5; tax 135, all of it
	// credited (mensaje 1, condición 01).
	receive("compra-1", []string{ivaLine(1, "1", "1000", iva("08")), ivaLine(2, "1", "500", iva("02"))},
		client.ReceiveRequest{Mensaje: client.MensajeAceptado, CondicionImpuesto: "01", MontoTotalImpuestoAcreditar: "135"})
	// R2: 13 % on 200.03 = 26.0039 and 4 % on 100 = 4; tax 30.0039, 20 of
	// it credited (mensaje 2, condición 02).
	receive("compra-2", []string{ivaLine(1, "1", "200.03", iva("08")), ivaLine(2, "1", "100", iva("04"))},
		client.ReceiveRequest{Mensaje: client.MensajeParcial, DetalleMensaje: "Solo una parte fue recibida",
			CondicionImpuesto: "02", MontoTotalImpuestoAcreditar: "20"})
	// R3, rejected (mensaje 3): no purchase.
	receive("compra-3", []string{ivaLine(1, "1", "300", iva("08"))},
		client.ReceiveRequest{Mensaje: client.MensajeRechazado, DetalleMensaje: "No fue contratado"})

	if now := tenant.MonthOf(time.Now()).Periodo; now != periodo {
		t.Skipf("the month changed while the documents were issued (%s, then %s): the summary would split them", periodo, now)
	}

	// The hand computation. Each row adds its documents' 5-decimal figures
	// and is rounded once, half away from zero, to 2 decimals.
	//
	// Sales, by codigo / codigoTarifaIVA / tarifa:
	//   01/01/0   noSujeto 30 (A6)
	//   01/02/1   base 80.10, IVA 0.801 → 0.80 (A4)
	//   01/03/2   base 250 + 10.25 = 260.25; IVA 5 + 0.205 = 5.205 → 5.21 (A3, ND)
	//   01/04/4   base 99.99 − 33.33 = 66.66; IVA 3.9996 − 1.3332 = 2.6664 → 2.67 (A2, NC)
	//   01/08/13  base 100.50 + 220 + 230.76923 + 0.50 + 5005 = 5556.76923 → 5556.77;
	//             IVA 13.065 + 28.6 + 30 + 0 + 0.065 + 650.65 = 722.38;
	//             exonerado 769.23077 + 500 = 1269.23077 → 1269.23 (A1, A8, A9, A10, B, U)
	//             Rounding once: were each document's 13 % tax rounded first,
	//             A's 71.665 → 71.67, B's 0.065 → 0.07 and U's 650.65 would
	//             make 722.39.
	//   01/10/0   exento 40 (A5)
	//   01/11/0   noSujeto 20 (A7)
	//   02//10    base 200, impuesto 20 (A8's selectivo)
	// Sales totals: base 80.10 + 260.25 + 66.66 + 5556.76923 + 200 = 6163.77923 → 6163.78;
	//   impuesto 0.801 + 5.205 + 2.6664 + 722.38 + 20 = 751.0524 → 751.05 (the rounded
	//   rows add up to 0.80 + 5.21 + 2.67 + 722.38 + 20 = 751.06: the total is not
	//   their sum); exento 40; exonerado 1269.23; noSujeto 30 + 20 = 50;
	//   5 documents (A, B, U, NC, ND).
	//
	// Purchases (R3 left out): a document's credit splits over its rows by
	// their share of its tax, 5 decimals:
	//   R1: 13 % 135 × 130 / 135 = 130; 1 % 135 × 5 / 135 = 5
	//   R2: 13 % 20 × 26.0039 / 30.0039 = 17.333679… → 17.33368;
	//       4 % 20 × 4 / 30.0039 = 2.666320… → 2.66632
	//   01/02/1   base 500, IVA 5, acreditable 5
	//   01/04/4   base 100, IVA 4, acreditable 2.66632 → 2.67
	//   01/08/13  base 1000 + 200.03 = 1200.03; IVA 130 + 26.0039 = 156.0039 → 156.00;
	//             acreditable 130 + 17.33368 = 147.33368 → 147.33
	// Purchase totals: base 1800.03; IVA 165.0039 → 165.00; acreditable the
	//   documents' credits 135 + 20 = 155.00; 2 documents.
	row := func(codigo, rc, tarifa, base, impuesto, exento, exonerado, noSujeto string, docs int64) ivaRow {
		return ivaRow{codigo, rc, tarifa, base, impuesto, exento, exonerado, noSujeto, docs, nil}
	}
	buy := func(r ivaRow, acreditable string) ivaRow { r.ImpuestoAcreditable = &acreditable; return r }
	want := ivaSummary{
		Periodo: periodo,
		Ventas: []ivaRow{
			row("01", "01", "0", "0.00", "0.00", "0.00", "0.00", "30.00", 1),
			row("01", "02", "1", "80.10", "0.80", "0.00", "0.00", "0.00", 1),
			row("01", "03", "2", "260.25", "5.21", "0.00", "0.00", "0.00", 2),
			row("01", "04", "4", "66.66", "2.67", "0.00", "0.00", "0.00", 2),
			row("01", "08", "13", "5556.77", "722.38", "0.00", "1269.23", "0.00", 3),
			row("01", "10", "0", "0.00", "0.00", "40.00", "0.00", "0.00", 1),
			row("01", "11", "0", "0.00", "0.00", "0.00", "0.00", "20.00", 1),
			row("02", "", "10", "200.00", "20.00", "0.00", "0.00", "0.00", 1),
		},
		Compras: []ivaRow{
			buy(row("01", "02", "1", "500.00", "5.00", "0.00", "0.00", "0.00", 1), "5.00"),
			buy(row("01", "04", "4", "100.00", "4.00", "0.00", "0.00", "0.00", 1), "2.67"),
			buy(row("01", "08", "13", "1200.03", "156.00", "0.00", "0.00", "0.00", 2), "147.33"),
		},
	}
	want.Totales.Ventas = row("", "", "", "6163.78", "751.05", "40.00", "1269.23", "50.00", 5)
	want.Totales.Compras = buy(row("", "", "", "1800.03", "165.00", "0.00", "0.00", "0.00", 2), "155.00")

	path := fmt.Sprintf("/api/companies/%d/reportes/iva/v4?periodo=%s", companyID, periodo)
	status, raw := seller.do("GET", path, "", nil)
	if status != 200 {
		t.Fatalf("GET %s: %d %s", path, status, raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var got ivaSummary
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("the summary: %v: %s", err, raw)
	}
	if g, w := got.lines(), want.lines(); strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("the summary:\n got\n  %s\n want\n  %s", strings.Join(g, "\n  "), strings.Join(w, "\n  "))
	}

	// The CSV: the same rows, lado first, no totals.
	status, csv := seller.do("GET", path+"&formato=csv", "", nil)
	if status != 200 {
		t.Fatalf("the CSV: %d %s", status, csv)
	}
	wantCSV := "lado,codigo,codigoTarifaIVA,tarifa,baseImponible,impuesto,exento,exonerado,noSujeto,documentos,impuestoAcreditable\r\n"
	for _, r := range want.Ventas {
		wantCSV += "ventas," + r.csv() + ",\r\n"
	}
	for _, r := range want.Compras {
		wantCSV += "compras," + r.csv() + "," + *r.ImpuestoAcreditable + "\r\n"
	}
	if string(csv) != wantCSV {
		t.Errorf("the CSV:\n got\n%s\n want\n%s", csv, wantCSV)
	}

	// A month without documents answers empty lists; another company's
	// user does not see the company's month.
	status, raw = admin.do("GET", fmt.Sprintf("/api/companies/%d/reportes/iva/v4?periodo=%s", companyID, "2000-01"), "", nil)
	if status != 200 || !bytes.Contains(raw, []byte(`"ventas":[]`)) || !bytes.Contains(raw, []byte(`"compras":[]`)) {
		t.Errorf("a month without documents: %d %s", status, raw)
	}
	status, _ = supplier.do("GET", path, "", nil)
	if status != 404 {
		t.Errorf("another company's summary: %d, want 404", status)
	}
}

// ivaRow and ivaSummary are the contract's answer as a caller reads it.
type ivaRow struct {
	Codigo              string  `json:"codigo"`
	CodigoTarifaIVA     string  `json:"codigoTarifaIVA"`
	Tarifa              string  `json:"tarifa"`
	BaseImponible       string  `json:"baseImponible"`
	Impuesto            string  `json:"impuesto"`
	Exento              string  `json:"exento"`
	Exonerado           string  `json:"exonerado"`
	NoSujeto            string  `json:"noSujeto"`
	Documentos          int64   `json:"documentos"`
	ImpuestoAcreditable *string `json:"impuestoAcreditable,omitempty"`
}

type ivaSummary struct {
	Periodo string   `json:"periodo"`
	Ventas  []ivaRow `json:"ventas"`
	Compras []ivaRow `json:"compras"`
	Totales struct {
		Ventas  ivaRow `json:"ventas"`
		Compras ivaRow `json:"compras"`
	} `json:"totales"`
}

func (r ivaRow) csv() string {
	return strings.Join([]string{r.Codigo, r.CodigoTarifaIVA, r.Tarifa, r.BaseImponible, r.Impuesto, r.Exento, r.Exonerado,
		r.NoSujeto, fmt.Sprint(r.Documentos)}, ",")
}

func (r ivaRow) text() string {
	acr := "-"
	if r.ImpuestoAcreditable != nil {
		acr = *r.ImpuestoAcreditable
	}
	return r.csv() + " acreditable " + acr
}

// lines writes s one row a line, for a readable comparison.
func (s ivaSummary) lines() []string {
	out := []string{"periodo " + s.Periodo}
	for _, r := range s.Ventas {
		out = append(out, "ventas "+r.text())
	}
	for _, r := range s.Compras {
		out = append(out, "compras "+r.text())
	}
	return append(out, "total ventas "+s.Totales.Ventas.text(), "total compras "+s.Totales.Compras.text())
}
