package hacienda

import (
	"strings"
	"testing"
)

// Hand-worked cases, one per rule of §11. Each expected figure was worked
// out on paper from the formulas, not taken from the code.

type want map[string]string

// field returns a computed amount of a document by a short name:
// "L1.Monto0" (line 1, tax 0), "L1.SubTotal", "R.TotalVenta"...
func field(d *Document, name string) Amount {
	r := &d.ResumenFactura
	switch name {
	case "R.TotalServGravados":
		return r.TotalServGravados
	case "R.TotalServExentos":
		return r.TotalServExentos
	case "R.TotalServExonerado":
		return r.TotalServExonerado
	case "R.TotalServNoSujeto":
		return r.TotalServNoSujeto
	case "R.TotalMercanciasGravadas":
		return r.TotalMercanciasGravadas
	case "R.TotalMercanciasExentas":
		return r.TotalMercanciasExentas
	case "R.TotalMercExonerada":
		return r.TotalMercExonerada
	case "R.TotalMercNoSujeta":
		return r.TotalMercNoSujeta
	case "R.TotalVenta":
		return r.TotalVenta
	case "R.TotalDescuentos":
		return r.TotalDescuentos
	case "R.TotalVentaNeta":
		return r.TotalVentaNeta
	case "R.TotalImpuesto":
		return r.TotalImpuesto
	case "R.TotalImpAsumEmisorFabrica":
		return r.TotalImpAsumEmisorFabrica
	case "R.TotalIVADevuelto":
		return r.TotalIVADevuelto
	case "R.TotalOtrosCargos":
		return r.TotalOtrosCargos
	case "R.TotalComprobante":
		return r.TotalComprobante
	case "OC0", "OC1":
		return d.OtrosCargos[int(name[2]-'0')].MontoCargo
	case "MP0":
		return r.MedioPago[0].TotalMedioPago
	}
	if strings.HasPrefix(name, "L") {
		n := int(name[1] - '1')
		l := &d.DetalleServicio[n]
		f := name[3:]
		switch {
		case f == "MontoTotal":
			return l.MontoTotal
		case f == "SubTotal":
			return l.SubTotal
		case f == "BaseImponible":
			return l.BaseImponible
		case f == "Asumido":
			return l.ImpuestoAsumidoEmisorFabrica
		case f == "ImpuestoNeto":
			return l.ImpuestoNeto
		case f == "MontoTotalLinea":
			return l.MontoTotalLinea
		case strings.HasPrefix(f, "Monto"):
			return l.Impuesto[int(f[5]-'0')].Monto
		case strings.HasPrefix(f, "Exo"):
			return l.Impuesto[int(f[3]-'0')].Exoneracion.MontoExoneracion
		case strings.HasPrefix(f, "Desc"):
			return l.Descuento[int(f[4]-'0')].MontoDescuento
		case f == "Proporcion":
			for _, tx := range l.Impuesto {
				if tx.DatosImpuestoEspecifico != nil {
					return tx.DatosImpuestoEspecifico.Proporcion
				}
			}
		}
	}
	panic("unknown field " + name)
}

func specific(codigo string, cum, pct, vuc, iu string) Impuesto {
	di := &DatosImpuestoEspecifico{CantidadUnidadMedida: a(cum), ImpuestoUnidad: a(iu)}
	if pct != "" {
		di.Porcentaje = a(pct)
	}
	if vuc != "" {
		di.VolumenUnidadConsumo = a(vuc)
	}
	return Impuesto{Codigo: codigo, DatosImpuestoEspecifico: di}
}

func TestCalculateRules(t *testing.T) {
	exo := func(tarifa string) *Exoneracion {
		return &Exoneracion{TipoDocumentoEX1: "04", NumeroDocumento: "AL-1", NombreInstitucion: "01", TarifaExonerada: a(tarifa)}
	}
	tests := []struct {
		name  string
		build func() *Document
		want  want
	}{
		{"ok/discount by amount", func() *Document {
			l := goods(1, "2", "500", iva("08"))
			l.Descuento = []Descuento{{MontoDescuento: a("150"), CodigoDescuento: "07"}}
			return crcDoc(TypeFE, l)
		}, want{"L1.MontoTotal": "1000", "L1.SubTotal": "850", "L1.Monto0": "110.5", "L1.MontoTotalLinea": "960.5",
			"R.TotalMercanciasGravadas": "1000", "R.TotalDescuentos": "150", "R.TotalVentaNeta": "850", "R.TotalComprobante": "960.5"}},
		{"ok/discount by percentage cascades", func() *Document {
			l := goods(1, "1", "1000", iva("08"))
			l.Descuento = []Descuento{{PorcentajeDescuento: a("10"), CodigoDescuento: "04"}, {PorcentajeDescuento: a("10"), CodigoDescuento: "06"}}
			return crcDoc(TypeFE, l)
		}, want{"L1.Desc0": "100", "L1.Desc1": "90", "L1.SubTotal": "810", "L1.Monto0": "105.3"}},
		{"ok/rounding half away from zero at the 5th decimal", func() *Document {
			return crcDoc(TypeFE, goods(1, "1", "0.0005", iva("02")))
		}, want{"L1.MontoTotal": "0.0005", "L1.Monto0": "0.00001", "R.TotalComprobante": "0.00051"}},
		{"ok/quantity with 3 decimals", func() *Document {
			return crcDoc(TypeFE, goods(1, "1.235", "333.33333", iva("08")))
		}, want{"L1.MontoTotal": "411.66666", "L1.Monto0": "53.51667", "L1.MontoTotalLinea": "465.18333"}},
		{"ok/selectivo de consumo enters the IVA base", func() *Document {
			return crcDoc(TypeFE, goods(1, "1", "1000", Impuesto{Codigo: "02", Tarifa: a("10")}, iva("08")))
		}, want{"L1.Monto0": "100", "L1.BaseImponible": "1100", "L1.Monto1": "143", "L1.ImpuestoNeto": "243", "L1.MontoTotalLinea": "1243"}},
		{"ok/fuel tax per litre, not in the IVA base", func() *Document {
			l := goods(1, "40", "650", iva("10"), specific("03", "40", "", "", "268.75"))
			return crcDoc(TypeFE, l)
		}, want{"L1.MontoTotal": "26000", "L1.BaseImponible": "26000", "L1.Monto0": "0", "L1.Monto1": "10750",
			"L1.MontoTotalLinea": "36750", "R.TotalMercanciasExentas": "26000", "R.TotalImpuesto": "10750"}},
		{"ok/alcohol tax from ml and percentage", func() *Document {
			return crcDoc(TypeFE, goods(1, "6", "1200", specific("04", "350", "4.5", "", "0.52"), iva("08")))
		}, want{"L1.Proporcion": "15.75", "L1.Monto0": "49.14", "L1.BaseImponible": "7249.14", "L1.Monto1": "942.3882"}},
		{"ok/packaged beverage tax", func() *Document {
			l := goods(1, "12", "800", specific("05", "600", "", "250", "21.36"), iva("08"))
			l.CodigoCABYS = "2441000000100"
			return crcDoc(TypeFE, l)
		}, want{"L1.Monto0": "615.168", "L1.BaseImponible": "10215.168", "L1.Monto1": "1327.97184"}},
		{"ok/toilet soap tax by grams", func() *Document {
			l := goods(1, "3", "950", specific("05", "1", "", "100", "0.35"), iva("08"))
			l.CodigoCABYS = "3532100000100"
			return crcDoc(TypeFE, l)
		}, want{"L1.Monto0": "105", "L1.BaseImponible": "2955", "L1.Monto1": "384.15"}},
		{"ok/tobacco tax, not in the IVA base", func() *Document {
			return crcDoc(TypeFE, goods(1, "2", "2800", iva("08"), specific("06", "20", "", "", "2.1")))
		}, want{"L1.BaseImponible": "5600", "L1.Monto0": "728", "L1.Monto1": "84", "L1.ImpuestoNeto": "812"}},
		{"ok/cement tax at 5 percent", func() *Document {
			return crcDoc(TypeFE, goods(1, "10", "8000", Impuesto{Codigo: "12"}, iva("08")))
		}, want{"L1.Monto0": "4000", "L1.BaseImponible": "84000", "L1.Monto1": "10920"}},
		{"ok/other tax on the subtotal", func() *Document {
			return crcDoc(TypeFE, goods(1, "2", "3000", Impuesto{Codigo: "99", CodigoImpuestoOTRO: "Municipal", Tarifa: a("1.5")}, iva("08")))
		}, want{"L1.Monto0": "90", "L1.BaseImponible": "6000", "L1.Monto1": "780", "L1.MontoTotalLinea": "6870"}},
		{"ok/special IVA on an edited base (code 07)", func() *Document {
			l := goods(1, "5", "1000", Impuesto{Codigo: "07", CodigoTarifaIVA: "08"})
			l.BaseImponible = a("4200")
			return crcDoc(TypeFE, l)
		}, want{"L1.BaseImponible": "4200", "L1.Monto0": "546", "L1.MontoTotalLinea": "5546", "R.TotalMercanciasGravadas": "5000"}},
		{"ok/used goods by factor (code 08)", func() *Document {
			return crcDoc(TypeFE, goods(1, "1", "150000", Impuesto{Codigo: "08", FactorCalculoIVA: a("0.0345")}))
		}, want{"L1.Monto0": "5175", "R.TotalMercanciasGravadas": "150000", "R.TotalComprobante": "155175"}},
		{"ok/full exoneration of a service", func() *Document {
			return crcDoc(TypeFE, service(1, "1", "20000", Impuesto{Codigo: "01", CodigoTarifaIVA: "08", Exoneracion: exo("13")}))
		}, want{"L1.Monto0": "2600", "L1.Exo0": "2600", "L1.ImpuestoNeto": "0", "R.TotalServExonerado": "20000",
			"R.TotalServGravados": "0", "R.TotalComprobante": "20000"}},
		{"ok/partial exoneration splits gravado and exonerado", func() *Document {
			return crcDoc(TypeFE, service(1, "3", "1000", Impuesto{Codigo: "01", CodigoTarifaIVA: "08", Exoneracion: exo("4")}))
		}, want{"L1.Monto0": "390", "L1.Exo0": "120", "L1.ImpuestoNeto": "270",
			"R.TotalServExonerado": "923.07692", "R.TotalServGravados": "2076.92308", "R.TotalComprobante": "3270"}},
		{"ok/IVA exoneration on a base that includes selectivo de consumo", func() *Document {
			return crcDoc(TypeFE, service(1, "1", "2000", Impuesto{Codigo: "02", Tarifa: a("10")},
				Impuesto{Codigo: "01", CodigoTarifaIVA: "08", Exoneracion: exo("13")}))
		}, want{"L1.Monto0": "200", "L1.BaseImponible": "2200", "L1.Monto1": "286", "L1.Exo1": "286",
			"L1.ImpuestoNeto": "200", "L1.MontoTotalLinea": "2200", "R.TotalImpuesto": "200", "R.TotalComprobante": "2200"}},
		{"ok/bonificación: the issuer bears the IVA", func() *Document {
			l := goods(1, "2", "750", iva("04"))
			l.Descuento = []Descuento{{PorcentajeDescuento: a("100"), CodigoDescuento: "03"}}
			return crcDoc(TypeFE, l)
		}, want{"L1.SubTotal": "0", "L1.Monto0": "60", "L1.Asumido": "60", "L1.ImpuestoNeto": "0",
			"R.TotalImpAsumEmisorFabrica": "60", "R.TotalComprobante": "0"}},
		{"ok/regalía with IVA charged to the client (code 02)", func() *Document {
			l := goods(1, "1", "1000", iva("08"))
			l.Descuento = []Descuento{{MontoDescuento: a("1000"), CodigoDescuento: "02"}}
			return crcDoc(TypeFE, l)
		}, want{"L1.SubTotal": "0", "L1.Monto0": "130", "L1.Asumido": "0", "L1.ImpuestoNeto": "130",
			"R.TotalImpuesto": "130", "R.TotalComprobante": "130"}},
		{"ok/IVA charged at factory level (01) is assumed", func() *Document {
			l := goods(1, "10", "450", iva("08"))
			l.IVACobradoFabrica = "01"
			l.BaseImponible = a("5200")
			return crcDoc(TypeFE, l)
		}, want{"L1.BaseImponible": "5200", "L1.Monto0": "676", "L1.Asumido": "676", "L1.ImpuestoNeto": "0",
			"L1.MontoTotalLinea": "4500", "R.TotalMercanciasGravadas": "4500", "R.TotalImpAsumEmisorFabrica": "676"}},
		{"ok/IVA charged at factory level (02) is exempt", func() *Document {
			l := goods(1, "4", "300", iva("10"))
			l.IVACobradoFabrica = "02"
			return crcDoc(TypeFE, l)
		}, want{"L1.Monto0": "0", "R.TotalMercanciasExentas": "1200", "R.TotalMercanciasGravadas": "0"}},
		{"ok/not subject buckets (rate codes 01 and 11)", func() *Document {
			return crcDoc(TypeFE, goods(1, "1", "100", iva("01")), service(2, "1", "200", iva("11")))
		}, want{"R.TotalMercNoSujeta": "100", "R.TotalServNoSujeto": "200", "R.TotalVenta": "300", "R.TotalImpuesto": "0"}},
		{"ok/transitional 0 percent in a credit note is exempt", func() *Document {
			return crcDoc(TypeNC, goods(1, "1", "100", iva("05")), service(2, "1", "100", iva("07")))
		}, want{"R.TotalMercanciasExentas": "100", "L2.Monto0": "8", "R.TotalServGravados": "100"}},
		{"ok/export invoice counts 0 percent lines as exempt", func() *Document {
			return crcDoc(TypeFEE, goods(1, "1", "100", iva("01")))
		}, want{"R.TotalMercanciasExentas": "100", "R.TotalMercNoSujeta": "0"}},
		{"ok/other charges by amount and by percentage of TotalVentaNeta", func() *Document {
			l := service(1, "1", "10000", iva("08"))
			l.Descuento = []Descuento{{MontoDescuento: a("1000"), CodigoDescuento: "07"}}
			d := crcDoc(TypeFE, l)
			d.OtrosCargos = []OtroCargo{{TipoDocumentoOC: "06", Detalle: "Servicio", PorcentajeOC: a("10")},
				{TipoDocumentoOC: "02", Detalle: "Timbre", MontoCargo: a("125.5")}}
			return d
		}, want{"OC0": "900", "OC1": "125.5", "R.TotalOtrosCargos": "1025.5", "R.TotalComprobante": "11195.5"}},
		{"ok/IVA returned on a health service paid by card", func() *Document {
			l := service(1, "1", "50000", iva("04"))
			l.CodigoCABYS = "9312100000100"
			d := crcDoc(TypeFE, l, service(2, "1", "1000", iva("08")))
			d.ResumenFactura.MedioPago = []MedioPago{{TipoMedioPago: "02"}}
			return d
		}, want{"R.TotalImpuesto": "2130", "R.TotalIVADevuelto": "2000", "R.TotalComprobante": "51130", "MP0": "51130"}},
		{"ok/no IVA returned when paid in cash", func() *Document {
			l := service(1, "1", "50000", iva("04"))
			l.CodigoCABYS = "9312100000100"
			return crcDoc(TypeFE, l)
		}, want{"R.TotalIVADevuelto": "0", "R.TotalComprobante": "52000"}},
		{"ok/no IVA returned with a mixed payment", func() *Document {
			l := service(1, "1", "50000", iva("04"))
			l.CodigoCABYS = "9312100000100"
			d := crcDoc(TypeFE, l)
			d.ResumenFactura.MedioPago = []MedioPago{{TipoMedioPago: "02", TotalMedioPago: a("2000")}, {TipoMedioPago: "01", TotalMedioPago: a("50000")}}
			return d
		}, want{"R.TotalIVADevuelto": "0", "R.TotalComprobante": "52000"}},
		{"ok/foreign currency amounts stay in the document currency", func() *Document {
			d := crcDoc(TypeFE, goods(1, "2", "19.99", iva("08")))
			d.ResumenFactura.CodigoTipoMoneda = CodigoTipoMoneda{CodigoMoneda: "USD", TipoCambio: a("506.25")}
			return d
		}, want{"L1.MontoTotal": "39.98", "L1.Monto0": "5.1974", "R.TotalComprobante": "45.1774"}},
		{"ok/recibo electrónico de pago", func() *Document {
			d := crcDoc(TypeREP, LineaDetalle{NumeroLinea: 1, Detalle: "Cuota 1", MontoTotal: a("10000"), SubTotal: a("10000"), Impuesto: []Impuesto{iva("08")}})
			d.CondicionVenta = "11"
			return d
		}, want{"L1.Monto0": "1300", "L1.ImpuestoNeto": "1300", "L1.MontoTotalLinea": "11300", "R.TotalVenta": "10000",
			"R.TotalVentaNeta": "10000", "R.TotalImpuesto": "1300", "R.TotalComprobante": "11300"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.build()
			mustCalc(t, d)
			for name, w := range tt.want {
				eq(t, name, field(d, name), w)
			}
		})
	}
}

func TestCalculateBreakdown(t *testing.T) {
	d := crcDoc(TypeFE,
		goods(1, "1", "1000", iva("08")),
		service(2, "1", "2000", Impuesto{Codigo: "02", Tarifa: a("10")}, iva("08")),
		goods(3, "1", "500", iva("04")),
		goods(4, "1", "300", iva("10")),
		goods(5, "1", "100", Impuesto{Codigo: "01", CodigoTarifaIVA: "08", Exoneracion: &Exoneracion{TipoDocumentoEX1: "04",
			NumeroDocumento: "AL-1", NombreInstitucion: "01", TarifaExonerada: a("13")}}),
	)
	mustCalc(t, d)
	// (01,08): 130 + 286 (13 % of 2200) + 0 (exonerated) = 416; (02): 200; (01,04): 20; (01,10): 0.
	checkDesglose(t, d.ResumenFactura.TotalDesgloseImpuesto, []desglose{{"01", "08", "416"}, {"02", "", "200"}, {"01", "04", "20"}, {"01", "10", "0"}})
	eq(t, "TotalImpuesto", d.ResumenFactura.TotalImpuesto, "636")
}

func TestCalculateRuleErrors(t *testing.T) {
	tests := []struct {
		name  string
		build func() *Document
		path  string
		frag  string
	}{
		{"error/rate does not match its code", func() *Document {
			return crcDoc(TypeFE, goods(1, "1", "100", Impuesto{Codigo: "01", CodigoTarifaIVA: "04", Tarifa: a("13")}))
		}, "detalleServicio[0].impuesto[0].tarifa", "expected 4"},
		{"error/unknown rate code", func() *Document { return crcDoc(TypeFE, goods(1, "1", "100", iva("12"))) },
			"detalleServicio[0].impuesto[0].codigoTarifaIVA", "nota-8.1"},
		{"error/transitional rate outside notes", func() *Document { return crcDoc(TypeFE, goods(1, "1", "100", iva("07"))) },
			"detalleServicio[0].impuesto[0].codigoTarifaIVA", "credit and debit notes"},
		{"error/unknown tax code", func() *Document {
			return crcDoc(TypeFE, goods(1, "1", "100", Impuesto{Codigo: "09"}))
		}, "detalleServicio[0].impuesto[0].codigo", "nota-8"},
		{"error/negative quantity", func() *Document { return crcDoc(TypeFE, goods(1, "-2", "100", iva("08"))) },
			"detalleServicio[0].cantidad", "negative"},
		{"error/zero quantity", func() *Document { return crcDoc(TypeFE, goods(1, "0", "100", iva("08"))) },
			"detalleServicio[0].cantidad", "greater than 0"},
		{"error/quantity with 4 decimals", func() *Document { return crcDoc(TypeFE, goods(1, "1.0001", "100", iva("08"))) },
			"detalleServicio[0].cantidad", "3 decimals"},
		{"error/price with 6 decimals", func() *Document { return crcDoc(TypeFE, goods(1, "1", "1.000001", iva("08"))) },
			"detalleServicio[0].precioUnitario", "5 decimals"},
		{"error/discount above the amount", func() *Document {
			l := goods(1, "1", "100", iva("08"))
			l.Descuento = []Descuento{{MontoDescuento: a("100.01"), CodigoDescuento: "07"}}
			return crcDoc(TypeFE, l)
		}, "detalleServicio[0].descuento[0].montoDescuento", "must not exceed"},
		{"error/discounts add up above the amount", func() *Document {
			l := goods(1, "1", "100", iva("08"))
			l.Descuento = []Descuento{{MontoDescuento: a("60"), CodigoDescuento: "07"}, {MontoDescuento: a("60"), CodigoDescuento: "04"}}
			return crcDoc(TypeFE, l)
		}, "detalleServicio[0].descuento", "add up to more"},
		{"error/partial regalía", func() *Document {
			l := goods(1, "4", "100", iva("08"))
			l.Descuento = []Descuento{{MontoDescuento: a("100"), CodigoDescuento: "01"}}
			return crcDoc(TypeFE, l)
		}, "detalleServicio[0].descuento", "whole line"},
		{"error/amount and percentage disagree", func() *Document {
			l := goods(1, "1", "100", iva("08"))
			l.Descuento = []Descuento{{MontoDescuento: a("11"), PorcentajeDescuento: a("10"), CodigoDescuento: "07"}}
			return crcDoc(TypeFE, l)
		}, "detalleServicio[0].descuento[0].montoDescuento", "expected 10"},
		{"error/exonerated rate above the tax rate", func() *Document {
			return crcDoc(TypeFE, goods(1, "1", "100", Impuesto{Codigo: "01", CodigoTarifaIVA: "04", Exoneracion: &Exoneracion{TarifaExonerada: a("13")}}))
		}, "detalleServicio[0].impuesto[0].exoneracion.tarifaExonerada", "must not exceed"},
		{"error/exoneration of used goods without a rate", func() *Document {
			// Used goods pay IVA by factor (1 % of 1000 = 10): without a
			// tarifa or rate code nothing measures the exonerated rate.
			return crcDoc(TypeFE, goods(1, "1", "1000", Impuesto{Codigo: "99", CodigoImpuestoOTRO: "Municipal", Tarifa: a("20")},
				Impuesto{Codigo: "08", FactorCalculoIVA: a("0.01"),
					Exoneracion: &Exoneracion{TipoDocumentoEX1: "04", NumeroDocumento: "AL-1", NombreInstitucion: "01", TarifaExonerada: a("19.5")}}))
		}, "detalleServicio[0].impuesto[1].tarifa", "is required with an exoneration"},
		{"error/used goods whose tarifa is not its rate code's", func() *Document {
			return crcDoc(TypeFE, goods(1, "1", "1000", Impuesto{Codigo: "08", FactorCalculoIVA: a("0.01"), CodigoTarifaIVA: "02", Tarifa: a("13")}))
		}, "detalleServicio[0].impuesto[0].tarifa", "does not match codigoTarifaIVA 02 (expected 1)"},
		{"error/exoneration of used goods above its rate", func() *Document {
			return crcDoc(TypeFE, goods(1, "1", "1000", Impuesto{Codigo: "08", FactorCalculoIVA: a("0.01"), Tarifa: a("13"),
				Exoneracion: &Exoneracion{TipoDocumentoEX1: "04", NumeroDocumento: "AL-1", NombreInstitucion: "01", TarifaExonerada: a("19.5")}}))
		}, "detalleServicio[0].impuesto[0].exoneracion.tarifaExonerada", "must not exceed the tax's tarifa (13)"},
		{"error/exoneration in an export invoice", func() *Document {
			return crcDoc(TypeFEE, goods(1, "1", "100", Impuesto{Codigo: "01", CodigoTarifaIVA: "08", Exoneracion: &Exoneracion{TarifaExonerada: a("13")}}))
		}, "detalleServicio[0].impuesto[0].exoneracion", "not allowed"},
		{"error/factory exempt with a taxed rate", func() *Document {
			l := goods(1, "1", "100", iva("08"))
			l.IVACobradoFabrica = "02"
			return crcDoc(TypeFE, l)
		}, "detalleServicio[0].impuesto[0].codigoTarifaIVA", "must be 10"},
		{"error/factory IVA without a base", func() *Document {
			l := goods(1, "1", "100", iva("08"))
			l.IVACobradoFabrica = "01"
			return crcDoc(TypeFE, l)
		}, "detalleServicio[0].baseImponible", "greater than 0"},
		{"error/specific tax without its data", func() *Document { return crcDoc(TypeFE, goods(1, "1", "100", Impuesto{Codigo: "06"})) },
			"detalleServicio[0].impuesto[0].datosImpuestoEspecifico", "required"},
		{"error/cement at another rate", func() *Document {
			return crcDoc(TypeFE, goods(1, "1", "100", Impuesto{Codigo: "12", Tarifa: a("6")}))
		}, "detalleServicio[0].impuesto[0].tarifa", "must be 5"},
		{"error/used goods without factor", func() *Document { return crcDoc(TypeFE, goods(1, "1", "100", Impuesto{Codigo: "08"})) },
			"detalleServicio[0].impuesto[0].factorCalculoIVA", "required"},
		{"error/two IVAs on a line", func() *Document { return crcDoc(TypeFE, goods(1, "1", "100", iva("08"), iva("04"))) },
			"detalleServicio[0].impuesto[1].codigo", "at most one IVA"},
		{"error/line without taxes", func() *Document { return crcDoc(TypeFE, goods(1, "1", "100")) },
			"detalleServicio[0].impuesto", "at least one"},
		{"error/CAByS of 12 digits", func() *Document {
			l := goods(1, "1", "100", iva("08"))
			l.CodigoCABYS = "239200000000"
			return crcDoc(TypeFE, l)
		}, "detalleServicio[0].codigoCABYS", "13 digits"},
		{"error/single payment amount differs", func() *Document {
			d := crcDoc(TypeFE, goods(1, "1", "100", iva("08")))
			d.ResumenFactura.MedioPago[0].TotalMedioPago = a("100")
			return d
		}, "resumenFactura.medioPago[0].totalMedioPago", "113"},
		{"error/payments do not add up", func() *Document {
			d := crcDoc(TypeFE, goods(1, "1", "100", iva("08")))
			d.ResumenFactura.MedioPago = []MedioPago{{TipoMedioPago: "01", TotalMedioPago: a("100")}, {TipoMedioPago: "02", TotalMedioPago: a("12")}}
			return d
		}, "resumenFactura.medioPago", "add up to 112"},
		{"error/several payments without amount", func() *Document {
			d := crcDoc(TypeFE, goods(1, "1", "100", iva("08")))
			d.ResumenFactura.MedioPago = []MedioPago{{TipoMedioPago: "01", TotalMedioPago: a("100")}, {TipoMedioPago: "02"}}
			return d
		}, "resumenFactura.medioPago[1].totalMedioPago", "required"},
		{"error/unknown payment means", func() *Document {
			d := crcDoc(TypeFE, goods(1, "1", "100", iva("08")))
			d.ResumenFactura.MedioPago[0].TipoMedioPago = "08"
			return d
		}, "resumenFactura.medioPago[0].tipoMedioPago", "nota-6"},
		{"error/CRC at another exchange rate", func() *Document {
			d := crcDoc(TypeFE, goods(1, "1", "100", iva("08")))
			d.ResumenFactura.CodigoTipoMoneda.TipoCambio = a("2")
			return d
		}, "resumenFactura.codigoTipoMoneda.tipoCambio", "must be 1"},
		{"error/unknown currency", func() *Document {
			d := crcDoc(TypeFE, goods(1, "1", "100", iva("08")))
			d.ResumenFactura.CodigoTipoMoneda = CodigoTipoMoneda{CodigoMoneda: "XYZ", TipoCambio: a("3")}
			return d
		}, "resumenFactura.codigoTipoMoneda.codigoMoneda", "ISO 4217"},
		{"error/other charge without amount", func() *Document {
			d := crcDoc(TypeFE, goods(1, "1", "100", iva("08")))
			d.OtrosCargos = []OtroCargo{{TipoDocumentoOC: "06", Detalle: "x"}}
			return d
		}, "otrosCargos[0].montoCargo", "required"},
		{"error/amount above the schema's maximum", func() *Document {
			return crcDoc(TypeFE, goods(1, "1000", "99999999999.5", iva("08")))
		}, "detalleServicio[0].montoTotal", "exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Calculate(tt.build())
			ve, ok := err.(*ValidationError)
			if !ok {
				t.Fatalf("Calculate = %v, want a *ValidationError", err)
			}
			msgs := strings.Join(ve.FieldErrors()[tt.path], " | ")
			if !strings.Contains(msgs, tt.frag) {
				t.Fatalf("errors on %s = %q, want one containing %q; all: %v", tt.path, msgs, tt.frag, ve.FieldErrors())
			}
		})
	}
}
