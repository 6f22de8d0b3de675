package hacienda

import (
	"strings"
	"testing"
)

// a parses a decimal literal for tests.
func a(s string) Amount { return MustAmount(s) }

// iva returns an IVA tax of code 01 with the given rate code.
func iva(codigoTarifa string) Impuesto {
	return Impuesto{Codigo: ImpuestoIVA, CodigoTarifaIVA: codigoTarifa}
}

func goods(n int, cant, precio string, taxes ...Impuesto) LineaDetalle {
	return LineaDetalle{NumeroLinea: n, CodigoCABYS: "2392000000000", Cantidad: a(cant), UnidadMedida: "Unid",
		Detalle: "Mercancía de prueba", PrecioUnitario: a(precio), Impuesto: taxes}
}

func service(n int, cant, precio string, taxes ...Impuesto) LineaDetalle {
	return LineaDetalle{NumeroLinea: n, CodigoCABYS: "8314100000000", Cantidad: a(cant), UnidadMedida: "Sp",
		Detalle: "Servicio de prueba", PrecioUnitario: a(precio), Impuesto: taxes}
}

func crcDoc(t DocumentType, lines ...LineaDetalle) *Document {
	return &Document{Type: t, CondicionVenta: CondicionContado, DetalleServicio: lines,
		ResumenFactura: ResumenFactura{CodigoTipoMoneda: CodigoTipoMoneda{CodigoMoneda: "CRC", TipoCambio: a("1")},
			MedioPago: []MedioPago{{TipoMedioPago: MedioPagoEfectivo}}}}
}

// eq fails the test when got does not equal want numerically (and when
// got is absent).
func eq(t *testing.T, name string, got Amount, want string) {
	t.Helper()
	if !got.IsSet() {
		t.Errorf("%s is absent, want %s", name, want)
		return
	}
	if got.Cmp(a(want)) != 0 {
		t.Errorf("%s = %s, want %s", name, got, want)
	}
}

func mustCalc(t *testing.T, d *Document) {
	t.Helper()
	if err := Calculate(d); err != nil {
		t.Fatalf("Calculate: %v", err)
	}
}

type desglose struct{ codigo, tarifa, total string }

func checkDesglose(t *testing.T, got []TotalDesgloseImpuesto, want []desglose) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("TotalDesgloseImpuesto has %d groups %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Codigo != w.codigo || g.CodigoTarifaIVA != w.tarifa || g.TotalMontoImpuesto.Cmp(a(w.total)) != 0 {
			t.Errorf("desglose[%d] = (%s,%s) %s, want (%s,%s) %s", i, g.Codigo, g.CodigoTarifaIVA, g.TotalMontoImpuesto,
				w.codigo, w.tarifa, w.total)
		}
	}
}

// TestWorkedExample1 is §11.10 of the v4.4 reference: goods with a 10 %
// discount at 13 %, a service at 4 %, exempt goods.
func TestWorkedExample1(t *testing.T) {
	l1 := goods(1, "3", "1250.50", iva("08"))
	l1.Descuento = []Descuento{{PorcentajeDescuento: a("10"), CodigoDescuento: "07"}}
	l2 := service(2, "2", "15000", iva("04"))
	l3 := goods(3, "1.5", "2000", iva("10"))
	l3.UnidadMedida = "Kg"
	d := crcDoc(TypeFE, l1, l2, l3)
	mustCalc(t, d)

	L := d.DetalleServicio
	eq(t, "L1.MontoTotal", L[0].MontoTotal, "3751.50000")
	eq(t, "L1.MontoDescuento", L[0].Descuento[0].MontoDescuento, "375.15")
	eq(t, "L1.SubTotal", L[0].SubTotal, "3376.35")
	eq(t, "L1.BaseImponible", L[0].BaseImponible, "3376.35")
	eq(t, "L1.Monto", L[0].Impuesto[0].Monto, "438.92550")
	eq(t, "L1.Tarifa", L[0].Impuesto[0].Tarifa, "13")
	eq(t, "L1.ImpuestoAsumido", L[0].ImpuestoAsumidoEmisorFabrica, "0")
	eq(t, "L1.ImpuestoNeto", L[0].ImpuestoNeto, "438.9255")
	eq(t, "L1.MontoTotalLinea", L[0].MontoTotalLinea, "3815.2755")
	eq(t, "L2.MontoTotal", L[1].MontoTotal, "30000")
	eq(t, "L2.Monto", L[1].Impuesto[0].Monto, "1200")
	eq(t, "L2.MontoTotalLinea", L[1].MontoTotalLinea, "31200")
	eq(t, "L3.MontoTotal", L[2].MontoTotal, "3000")
	eq(t, "L3.Monto", L[2].Impuesto[0].Monto, "0")
	eq(t, "L3.MontoTotalLinea", L[2].MontoTotalLinea, "3000")

	r := d.ResumenFactura
	eq(t, "TotalServGravados", r.TotalServGravados, "30000")
	eq(t, "TotalServExentos", r.TotalServExentos, "0")
	eq(t, "TotalMercanciasGravadas", r.TotalMercanciasGravadas, "3751.5")
	eq(t, "TotalMercanciasExentas", r.TotalMercanciasExentas, "3000")
	eq(t, "TotalGravado", r.TotalGravado, "33751.5")
	eq(t, "TotalExento", r.TotalExento, "3000")
	eq(t, "TotalExonerado", r.TotalExonerado, "0")
	eq(t, "TotalNoSujeto", r.TotalNoSujeto, "0")
	eq(t, "TotalVenta", r.TotalVenta, "36751.5")
	eq(t, "TotalDescuentos", r.TotalDescuentos, "375.15")
	eq(t, "TotalVentaNeta", r.TotalVentaNeta, "36376.35")
	checkDesglose(t, r.TotalDesgloseImpuesto, []desglose{{"01", "08", "438.9255"}, {"01", "04", "1200"}, {"01", "10", "0"}})
	eq(t, "TotalImpuesto", r.TotalImpuesto, "1638.9255")
	eq(t, "TotalImpAsumEmisorFabrica", r.TotalImpAsumEmisorFabrica, "0")
	eq(t, "TotalOtrosCargos", r.TotalOtrosCargos, "0")
	eq(t, "TotalIVADevuelto", r.TotalIVADevuelto, "0")
	eq(t, "TotalComprobante", r.TotalComprobante, "38015.2755")
	eq(t, "TotalMedioPago", r.MedioPago[0].TotalMedioPago, "38015.2755")
}

// TestWorkedExample2 is §11.11: full and partial exonerations, cascading
// discounts, an other charge, two means of payment.
func TestWorkedExample2(t *testing.T) {
	exo := func(tarifa string) *Exoneracion {
		return &Exoneracion{TipoDocumentoEX1: "04", NumeroDocumento: "AL-00012345-24", NombreInstitucion: "01", TarifaExonerada: a(tarifa)}
	}
	l1 := service(1, "1", "100000", Impuesto{Codigo: "01", CodigoTarifaIVA: "08", Tarifa: a("13"), Exoneracion: exo("13")})
	l2 := goods(2, "10", "5000", Impuesto{Codigo: "01", CodigoTarifaIVA: "08", Tarifa: a("13"), Exoneracion: exo("10")})
	l2.Descuento = []Descuento{
		{PorcentajeDescuento: a("5"), CodigoDescuento: "04"},
		{PorcentajeDescuento: a("2"), CodigoDescuento: "06"},
	}
	d := crcDoc(TypeFE, l1, l2)
	d.OtrosCargos = []OtroCargo{{TipoDocumentoOC: "07", Detalle: "Timbre", MontoCargo: a("1000")}}
	d.ResumenFactura.MedioPago = []MedioPago{
		{TipoMedioPago: "04", TotalMedioPago: a("100000")},
		{TipoMedioPago: "02", TotalMedioPago: a("48946.50")},
	}
	mustCalc(t, d)

	L := d.DetalleServicio
	eq(t, "L1.Monto", L[0].Impuesto[0].Monto, "13000")
	eq(t, "L1.MontoExoneracion", L[0].Impuesto[0].Exoneracion.MontoExoneracion, "13000")
	eq(t, "L1.ImpuestoNeto", L[0].ImpuestoNeto, "0")
	eq(t, "L1.MontoTotalLinea", L[0].MontoTotalLinea, "100000")
	eq(t, "L2.Descuento0", L[1].Descuento[0].MontoDescuento, "2500")
	eq(t, "L2.Descuento1", L[1].Descuento[1].MontoDescuento, "950")
	eq(t, "L2.SubTotal", L[1].SubTotal, "46550")
	eq(t, "L2.Monto", L[1].Impuesto[0].Monto, "6051.5")
	eq(t, "L2.MontoExoneracion", L[1].Impuesto[0].Exoneracion.MontoExoneracion, "4655")
	eq(t, "L2.ImpuestoNeto", L[1].ImpuestoNeto, "1396.5")
	eq(t, "L2.MontoTotalLinea", L[1].MontoTotalLinea, "47946.5")

	r := d.ResumenFactura
	eq(t, "TotalServGravados", r.TotalServGravados, "0")
	eq(t, "TotalServExonerado", r.TotalServExonerado, "100000")
	eq(t, "TotalMercanciasGravadas", r.TotalMercanciasGravadas, "11538.46154")
	eq(t, "TotalMercExonerada", r.TotalMercExonerada, "38461.53846")
	eq(t, "TotalGravado", r.TotalGravado, "11538.46154")
	eq(t, "TotalExonerado", r.TotalExonerado, "138461.53846")
	eq(t, "TotalVenta", r.TotalVenta, "150000")
	eq(t, "TotalDescuentos", r.TotalDescuentos, "3450")
	eq(t, "TotalVentaNeta", r.TotalVentaNeta, "146550")
	checkDesglose(t, r.TotalDesgloseImpuesto, []desglose{{"01", "08", "1396.5"}})
	eq(t, "TotalImpuesto", r.TotalImpuesto, "1396.5")
	eq(t, "TotalOtrosCargos", r.TotalOtrosCargos, "1000")
	eq(t, "TotalComprobante", r.TotalComprobante, "148946.5")
}

// TestWorkedExample3 is §11.12: a free item whose IVA the issuer bears.
func TestWorkedExample3(t *testing.T) {
	l := goods(1, "1", "1000.00", iva("08"))
	l.Descuento = []Descuento{{MontoDescuento: a("1000.00"), CodigoDescuento: "01"}}
	d := crcDoc(TypeFE, l)
	mustCalc(t, d)
	L := d.DetalleServicio[0]
	eq(t, "MontoTotal", L.MontoTotal, "1000")
	eq(t, "SubTotal", L.SubTotal, "0")
	eq(t, "BaseImponible", L.BaseImponible, "0")
	eq(t, "Monto", L.Impuesto[0].Monto, "130")
	eq(t, "ImpuestoAsumidoEmisorFabrica", L.ImpuestoAsumidoEmisorFabrica, "130")
	eq(t, "ImpuestoNeto", L.ImpuestoNeto, "0")
	eq(t, "MontoTotalLinea", L.MontoTotalLinea, "0")
	r := d.ResumenFactura
	eq(t, "TotalMercanciasGravadas", r.TotalMercanciasGravadas, "1000")
	eq(t, "TotalDescuentos", r.TotalDescuentos, "1000")
	eq(t, "TotalVentaNeta", r.TotalVentaNeta, "0")
	eq(t, "TotalImpAsumEmisorFabrica", r.TotalImpAsumEmisorFabrica, "130")
	checkDesglose(t, r.TotalDesgloseImpuesto, []desglose{{"01", "08", "0"}})
	eq(t, "TotalImpuesto", r.TotalImpuesto, "0")
	eq(t, "TotalComprobante", r.TotalComprobante, "0")
}

func TestCalculateErrorsAllAtOnce(t *testing.T) {
	l1 := goods(1, "-1", "100", iva("08"))
	l2 := goods(2, "1", "100", Impuesto{Codigo: "01", CodigoTarifaIVA: "08", Tarifa: a("4")})
	l3 := goods(3, "1", "100", iva("99"))
	l4 := goods(4, "2", "100", iva("08"))
	l4.Descuento = []Descuento{{MontoDescuento: a("250"), CodigoDescuento: "07"}}
	d := crcDoc(TypeFE, l1, l2, l3, l4)
	d.ResumenFactura.MedioPago = []MedioPago{{TipoMedioPago: "01", TotalMedioPago: a("1")}, {TipoMedioPago: "02", TotalMedioPago: a("2")}}
	err := Calculate(d)
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("Calculate error = %T %v, want *ValidationError", err, err)
	}
	for _, p := range []string{
		"detalleServicio[0].cantidad",
		"detalleServicio[1].impuesto[0].tarifa",
		"detalleServicio[2].impuesto[0].codigoTarifaIVA",
		"detalleServicio[3].descuento[0].montoDescuento",
	} {
		if !ve.Has(p) {
			t.Errorf("missing error on %s; got %v", p, ve.FieldErrors())
		}
	}
	if !strings.Contains(ve.Fields["detalleServicio[1].impuesto[0].tarifa"][0].String(), "13") {
		t.Errorf("rate message should name the expected rate: %v", ve.Fields["detalleServicio[1].impuesto[0].tarifa"])
	}
}
