package hacienda

import (
	"errors"
	"strings"
	"testing"
)

// A TotalMedioPago of 0 is refused, and a document whose total is 0 gets
// none filled in: the tax authority refuses a payment amount of 0 (annex
// p.55; decisions #20).
func TestPaymentAmountNeverZero(t *testing.T) {
	// A regalía borne by the issuer on the whole line: the total is 0.
	free := func() LineaDetalle {
		l := goods(1, "1", "1000", iva("08"))
		l.Descuento = []Descuento{{PorcentajeDescuento: a("100"), CodigoDescuento: DescuentoRegalia}}
		return l
	}
	paid := func() LineaDetalle { return goods(1, "2", "500", iva("08")) }
	for _, tt := range []struct {
		name     string
		line     LineaDetalle
		payments []MedioPago
		path     string // the refused field, or "" when accepted
		msg      string
		want     []string // each payment's TotalMedioPago once accepted ("" = absent)
	}{
		{"ok/zero total, amount left out", free(), []MedioPago{{TipoMedioPago: "01"}}, "", "", []string{""}},
		{"ok/a total, amount filled in", paid(), []MedioPago{{TipoMedioPago: "01"}}, "", "", []string{"1130"}},
		{"error/zero total, amount 0 given", free(), []MedioPago{{TipoMedioPago: "01", TotalMedioPago: a("0")}},
			"resumenFactura.medioPago[0].totalMedioPago", "must be left out", nil},
		{"error/zero total, two means of payment", free(), []MedioPago{{TipoMedioPago: "01"}, {TipoMedioPago: "02"}},
			"resumenFactura.medioPago", "takes one means of payment", nil},
		{"error/one of two amounts 0", paid(), []MedioPago{{TipoMedioPago: "01", TotalMedioPago: a("1130")}, {TipoMedioPago: "02", TotalMedioPago: a("0")}},
			"resumenFactura.medioPago[1].totalMedioPago", "must be greater than 0", nil},
		{"error/a single amount 0", paid(), []MedioPago{{TipoMedioPago: "01", TotalMedioPago: a("0")}},
			"resumenFactura.medioPago[0].totalMedioPago", "must be greater than 0", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := crcDoc(TypeFE, tt.line)
			d.ResumenFactura.MedioPago = tt.payments
			err := Calculate(d)
			if tt.path != "" {
				var ve *ValidationError
				if !errors.As(err, &ve) || !ve.Has(tt.path) || !strings.Contains(strings.Join(ve.FieldErrors()[tt.path], "; "), tt.msg) {
					t.Fatalf("want %q on %s, got %v", tt.msg, tt.path, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tt.want {
				got := d.ResumenFactura.MedioPago[i].TotalMedioPago
				if w == "" {
					if got.IsSet() {
						t.Errorf("payment %d: TotalMedioPago %s, want none", i, got)
					}
					continue
				}
				eq(t, "TotalMedioPago", got, w)
			}
		})
	}
}

// A percentage charge is a share of the net sale, which a refused line
// leaves unknown: its amount is then not judged, rather than judged
// against a net sale that leaves the refused line out.
func TestPercentageChargeBesideARefusedLine(t *testing.T) {
	const charge = "otrosCargos[0].montoCargo"
	doc := func(second Impuesto, montoCargo string) *Document {
		d := crcDoc(TypeFE, goods(1, "1", "1000", iva("01")), goods(2, "1", "1000", second))
		d.OtrosCargos = []OtroCargo{{TipoDocumentoOC: "06", Detalle: "Servicio 10 %", PorcentajeOC: a("10"), MontoCargo: a(montoCargo)}}
		return d
	}
	for _, tt := range []struct {
		name           string
		d              *Document
		refused, judge string // a path that must be refused, the charge's message or ""
	}{
		// 10 % of the net sale of both lines (2,000) is 200.
		{"ok/both lines good", doc(iva("01"), "200"), "", ""},
		{"error/both lines good, the wrong amount", doc(iva("01"), "150"), charge, "expected 200"},
		{"error/a line refused, the right amount", doc(iva("99"), "200"), "detalleServicio[1].impuesto[0].codigoTarifaIVA", ""},
		{"error/a line refused, a wrong amount", doc(iva("99"), "100"), "detalleServicio[1].impuesto[0].codigoTarifaIVA", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Calculate(tt.d)
			var ve *ValidationError
			if tt.refused == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.As(err, &ve) || !ve.Has(tt.refused) {
				t.Fatalf("want an error on %s, got %v", tt.refused, err)
			}
			got := strings.Join(ve.FieldErrors()[charge], "; ")
			switch {
			case tt.judge == "" && got != "":
				t.Errorf("the charge is judged against a net sale without the refused line: %s", got)
			case tt.judge != "" && !strings.Contains(got, tt.judge):
				t.Errorf("the charge's error %q, want one with %q", got, tt.judge)
			}
		})
	}
}
