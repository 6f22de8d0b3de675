package hacienda

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"
)

// randomDoc builds a random, calculable document with wider ranges than the
// generator: quantities with 3 decimals, prices with 5, every rate code the
// type allows, discounts by amount and percentage, partial exonerations,
// other charges, several payments.
func randomDoc(r *rand.Rand) *Document {
	types := []DocumentType{TypeFE, TypeND, TypeNC, TypeTE, TypeFEC, TypeFEE}
	t := types[r.IntN(len(types))]
	d := &Document{Type: t, CondicionVenta: "01"}
	rates := []string{"01", "02", "03", "04", "08", "09", "10", "11"}
	if t.IsNote() {
		rates = append(rates, "05", "06", "07")
	}
	n := 1 + r.IntN(12)
	for i := 0; i < n; i++ {
		cant := decimal.New(1+r.Int64N(999999), -int32(r.IntN(4)))
		precio := decimal.New(1+r.Int64N(9999999999), -int32(r.IntN(6)))
		cabys := "2392000000000"
		if r.IntN(2) == 0 {
			cabys = "8314100000000"
		}
		if r.IntN(8) == 0 {
			cabys = "9312100000000"
		}
		l := LineaDetalle{NumeroLinea: i + 1, CodigoCABYS: cabys, Cantidad: NewAmount(cant), UnidadMedida: "Unid",
			Detalle: "Línea aleatoria", PrecioUnitario: NewAmount(precio)}
		rc := rates[r.IntN(len(rates))]
		tx := Impuesto{Codigo: "01", CodigoTarifaIVA: rc}
		rate, _ := TarifaIVA(rc)
		if t != TypeFEE && rate.Sign() > 0 && r.IntN(4) == 0 {
			te := decimal.New(r.Int64N(rate.Mul(decimal.New(100, 0)).IntPart()+1), -2)
			tx.Exoneracion = &Exoneracion{TipoDocumentoEX1: "03", NumeroDocumento: "LEY-7293", Articulo: 1, NombreInstitucion: "01", TarifaExonerada: NewAmount(te)}
		}
		l.Impuesto = []Impuesto{tx}
		if r.IntN(3) == 0 {
			l.Impuesto = append([]Impuesto{{Codigo: "02", Tarifa: NewAmount(decimal.New(r.Int64N(5000), -2))}}, l.Impuesto...)
		}
		for k := 0; k < r.IntN(4); k++ {
			if r.IntN(2) == 0 {
				l.Descuento = append(l.Descuento, Descuento{CodigoDescuento: "07", PorcentajeDescuento: NewAmount(decimal.New(r.Int64N(3000), -2))})
			} else {
				l.Descuento = append(l.Descuento, Descuento{CodigoDescuento: "04", MontoDescuento: NewAmount(decimal.New(r.Int64N(100000), -3))})
			}
		}
		d.DetalleServicio = append(d.DetalleServicio, l)
	}
	for k := 0; k < r.IntN(3); k++ {
		oc := OtroCargo{TipoDocumentoOC: "06", Detalle: "Cargo"}
		if r.IntN(2) == 0 {
			oc.PorcentajeOC = NewAmount(decimal.New(1+r.Int64N(2000), -2))
		} else {
			oc.MontoCargo = NewAmount(decimal.New(1+r.Int64N(10000000), -3))
		}
		d.OtrosCargos = append(d.OtrosCargos, oc)
	}
	d.ResumenFactura.CodigoTipoMoneda = CodigoTipoMoneda{CodigoMoneda: "USD", TipoCambio: MustAmount("506.12")}
	d.ResumenFactura.MedioPago = []MedioPago{{TipoMedioPago: []string{"01", "02"}[r.IntN(2)]}}
	return d
}

// discountsFit drops the discounts that would exceed the line amount, so
// that the random document is calculable.
func discountsFit(d *Document) {
	for i := range d.DetalleServicio {
		l := &d.DetalleServicio[i]
		mt := l.Cantidad.Decimal().Mul(l.PrecioUnitario.Decimal()).Round(5)
		rest := mt
		var kept []Descuento
		for _, ds := range l.Descuento {
			m := ds.MontoDescuento.Decimal()
			if ds.PorcentajeDescuento.IsSet() {
				m = rest.Mul(ds.PorcentajeDescuento.Decimal()).Shift(-2).Round(5)
			}
			if m.Cmp(rest) <= 0 {
				kept = append(kept, ds)
				rest = rest.Sub(m)
			}
		}
		l.Descuento = kept
		if mt.Cmp(decimal.RequireFromString("999999999999")) > 0 {
			l.Cantidad = AmountFromInt(1)
		}
	}
}

// checkInvariants asserts the summary is the sum of the lines and every
// formula of §11 holds on the computed values.
func checkInvariants(t *testing.T, label string, d *Document) {
	t.Helper()
	r := d.ResumenFactura
	sum := func(f func(l *LineaDetalle) decimal.Decimal) decimal.Decimal {
		s := decimal.Zero
		for i := range d.DetalleServicio {
			s = s.Add(f(&d.DetalleServicio[i]))
		}
		return s
	}
	same := func(name string, got Amount, want decimal.Decimal) {
		t.Helper()
		if got.Decimal().Cmp(want) != 0 {
			t.Errorf("%s: %s = %s, want %s", label, name, got, want.String())
		}
	}
	for i := range d.DetalleServicio {
		l := &d.DetalleServicio[i]
		name := label + " line " + strconv.Itoa(i+1)
		if d.Type != TypeREP {
			same(name+" MontoTotal", l.MontoTotal, l.Cantidad.Decimal().Mul(l.PrecioUnitario.Decimal()).Round(5))
		}
		desc, monto, exo := decimal.Zero, decimal.Zero, decimal.Zero
		for _, ds := range l.Descuento {
			desc = desc.Add(ds.MontoDescuento.Decimal())
		}
		for _, tx := range l.Impuesto {
			monto = monto.Add(tx.Monto.Decimal())
			if tx.Exoneracion != nil {
				exo = exo.Add(tx.Exoneracion.MontoExoneracion.Decimal())
				if tx.Exoneracion.MontoExoneracion.Cmp(tx.Monto) > 0 {
					t.Errorf("%s: MontoExoneracion above Monto", name)
				}
			}
		}
		if d.Type != TypeREP {
			same(name+" SubTotal", l.SubTotal, l.MontoTotal.Decimal().Sub(desc))
		}
		net := monto.Sub(exo).Sub(l.ImpuestoAsumidoEmisorFabrica.Decimal())
		if d.Type == TypeFEE {
			if l.ImpuestoNeto.IsSet() || l.BaseImponible.IsSet() {
				t.Errorf("%s: an export invoice line carries ImpuestoNeto or BaseImponible", name)
			}
		} else {
			same(name+" ImpuestoNeto", l.ImpuestoNeto, net)
		}
		same(name+" MontoTotalLinea", l.MontoTotalLinea, l.SubTotal.Decimal().Add(net))
	}
	if d.Type != TypeREP {
		same("TotalVenta", r.TotalVenta, sum(func(l *LineaDetalle) decimal.Decimal { return l.MontoTotal.Decimal() }))
		same("buckets", r.TotalVenta, r.TotalGravado.Decimal().Add(r.TotalExento.Decimal()).Add(r.TotalExonerado.Decimal()).Add(r.TotalNoSujeto.Decimal()))
		same("TotalGravado", r.TotalGravado, r.TotalServGravados.Decimal().Add(r.TotalMercanciasGravadas.Decimal()))
		same("TotalExento", r.TotalExento, r.TotalServExentos.Decimal().Add(r.TotalMercanciasExentas.Decimal()))
		same("TotalExonerado", r.TotalExonerado, r.TotalServExonerado.Decimal().Add(r.TotalMercExonerada.Decimal()))
		same("TotalNoSujeto", r.TotalNoSujeto, r.TotalServNoSujeto.Decimal().Add(r.TotalMercNoSujeta.Decimal()))
		same("TotalDescuentos", r.TotalDescuentos, sum(func(l *LineaDetalle) decimal.Decimal {
			s := decimal.Zero
			for _, ds := range l.Descuento {
				s = s.Add(ds.MontoDescuento.Decimal())
			}
			return s
		}))
	}
	same("TotalVentaNeta", r.TotalVentaNeta, r.TotalVenta.Decimal().Sub(r.TotalDescuentos.Decimal()))
	same("TotalImpuesto", r.TotalImpuesto, sum(func(l *LineaDetalle) decimal.Decimal { return l.MontoTotalLinea.Decimal().Sub(l.SubTotal.Decimal()) }))
	same("TotalImpAsumEmisorFabrica", r.TotalImpAsumEmisorFabrica, sum(func(l *LineaDetalle) decimal.Decimal { return l.ImpuestoAsumidoEmisorFabrica.Decimal() }))
	des := decimal.Zero
	for _, g := range r.TotalDesgloseImpuesto {
		des = des.Add(g.TotalMontoImpuesto.Decimal())
	}
	same("Σ TotalDesgloseImpuesto", r.TotalImpuesto, des)
	oc := decimal.Zero
	for _, c := range d.OtrosCargos {
		oc = oc.Add(c.MontoCargo.Decimal())
	}
	same("TotalOtrosCargos", r.TotalOtrosCargos, oc)
	same("TotalComprobante", r.TotalComprobante,
		r.TotalVentaNeta.Decimal().Add(r.TotalImpuesto.Decimal()).Add(r.TotalOtrosCargos.Decimal()).Sub(r.TotalIVADevuelto.Decimal()))
	same("Σ MontoTotalLinea", r.TotalComprobante,
		sum(func(l *LineaDetalle) decimal.Decimal { return l.MontoTotalLinea.Decimal() }).Add(oc).Sub(r.TotalIVADevuelto.Decimal()))
	if len(r.MedioPago) > 0 {
		p := decimal.Zero
		for _, m := range r.MedioPago {
			p = p.Add(m.TotalMedioPago.Decimal())
		}
		same("Σ TotalMedioPago", r.TotalComprobante, p)
	}
	if r.TotalIVADevuelto.Cmp(r.TotalImpuesto) > 0 {
		t.Errorf("%s: TotalIVADevuelto above TotalImpuesto", label)
	}
	walkAmounts(reflect.ValueOf(d).Elem(), "doc", func(path string, a Amount) {
		if a.IsSet() && a.SignificantPlaces() > 5 {
			t.Errorf("%s: %s = %s has more than 5 decimals", label, path, a.Decimal().String())
		}
		if a.Sign() < 0 {
			t.Errorf("%s: %s is negative", label, path)
		}
	})
}

var amountType = reflect.TypeOf(Amount{})

// walkAmounts calls f for every Amount reachable from v.
func walkAmounts(v reflect.Value, path string, f func(string, Amount)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkAmounts(v.Elem(), path, f)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkAmounts(v.Index(i), path+"["+strconv.Itoa(i)+"]", f)
		}
	case reflect.Struct:
		if v.Type() == amountType {
			f(path, v.Interface().(Amount))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walkAmounts(v.Field(i), path+"."+v.Type().Field(i).Name, f)
			}
		}
	}
}

func TestCalculateProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 11))
	for i := 0; i < 400; i++ {
		d := randomDoc(r)
		discountsFit(d)
		if err := Calculate(d); err != nil {
			t.Fatalf("random doc %d: %v", i, err)
		}
		checkInvariants(t, "random doc "+strconv.Itoa(i), d)
		// Calculating again changes nothing (the echo of an answer is
		// accepted and gives the same figures).
		before, _ := json.Marshal(d)
		if err := Calculate(d); err != nil {
			t.Fatalf("random doc %d, second run: %v", i, err)
		}
		after, _ := json.Marshal(d)
		if string(before) != string(after) {
			t.Fatalf("random doc %d: a second Calculate changed the document", i)
		}
	}
}

func TestGeneratedDocumentsProperties(t *testing.T) {
	issuer := testIssuer(t)
	for i, req := range generatedRequests(t, 70) {
		d, err := NewDocument(req, issuer)
		if err != nil {
			t.Fatalf("generated request %d: %v", i, err)
		}
		checkInvariants(t, "doc "+strconv.Itoa(i)+" type "+string(d.Type), d)
	}
}

// TestRequestJSONRoundTrip: a request marshalled and decoded again gives
// the same calculated document.
func TestRequestJSONRoundTrip(t *testing.T) {
	issuer := testIssuer(t)
	for i, req := range generatedRequests(t, 70) {
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := DecodeSendRequest(b)
		if err != nil {
			t.Fatalf("request %d decoded again: %v", i, err)
		}
		d1, err := NewDocument(req, issuer)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		d2, err := NewDocument(cp, issuer)
		if err != nil {
			t.Fatalf("request %d after a JSON round trip: %v", i, err)
		}
		j1, _ := json.Marshal(d1)
		j2, _ := json.Marshal(d2)
		if string(j1) != string(j2) {
			t.Fatalf("request %d: the JSON round trip changed the document\n%s\n%s", i, j1, j2)
		}
	}
}
