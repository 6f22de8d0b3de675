package hacienda

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"
)

// exonerate gives tx an exoneration of te percentage points.
func exonerate(tx *Impuesto, te decimal.Decimal) {
	tx.Exoneracion = &Exoneracion{TipoDocumentoEX1: "03", NumeroDocumento: "AL-00012345-24", Articulo: 8,
		NombreInstitucion: "01", TarifaExonerada: NewAmount(te)}
}

// The two lines of the report that found the exoneration computed on
// another base than its tax: one unit of 10,000 at 13 % with a bonus of
// 1,000 whose IVA the client pays (discount code 02) and the whole 13 %
// exonerated, alone and with a selectivo de consumo of 30 %.
func TestWholeExonerationOwesNothing(t *testing.T) {
	bonus := []Descuento{{MontoDescuento: a("1000"), CodigoDescuento: DescuentoRegaliaIVACliente}}
	exoIVA := func() Impuesto {
		tx := iva("08")
		exonerate(&tx, decimal.New(13, 0))
		return tx
	}
	selectivo := func(te string) Impuesto {
		tx := Impuesto{Codigo: ImpuestoSelectivo, Tarifa: a("30")}
		if te != "" {
			exonerate(&tx, a(te).Decimal())
		}
		return tx
	}
	for _, tt := range []struct {
		name                 string
		line                 LineaDetalle
		ivaMonto, neto, base string
	}{
		{"ok/bonus code 02, IVA wholly exonerated", goods(1, "1", "10000", exoIVA()), "1300", "0", "9000"},
		{"ok/bonus code 02 and a selectivo, IVA wholly exonerated", goods(1, "1", "10000", selectivo(""), exoIVA()), "1300", "2700", "11700"},
		{"ok/bonus code 02 and a selectivo, both wholly exonerated", goods(1, "1", "10000", selectivo("30"), exoIVA()), "1300", "0", "11700"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.line
			l.Descuento = bonus
			d := crcDoc(TypeFE, l)
			if err := Calculate(d); err != nil {
				t.Fatalf("refused: %v", err)
			}
			got := &d.DetalleServicio[0]
			iva := &got.Impuesto[len(got.Impuesto)-1]
			eq(t, "IVA monto", iva.Monto, tt.ivaMonto)
			eq(t, "IVA montoExoneracion", iva.Exoneracion.MontoExoneracion, tt.ivaMonto)
			eq(t, "baseImponible", got.BaseImponible, tt.base)
			eq(t, "impuestoNeto", got.ImpuestoNeto, tt.neto)
			eq(t, "impuestoAsumidoEmisorFabrica", got.ImpuestoAsumidoEmisorFabrica, "0")
			r := d.ResumenFactura
			eq(t, "totalMercExonerada", r.TotalMercExonerada, "10000")
			eq(t, "totalMercanciasGravadas", r.TotalMercanciasGravadas, "0")
			checkInvariants(t, tt.name, d)
		})
	}
}

// Used goods (IVA code 08) pay FactorCalculoIVA × SubTotal, no rate of a
// base: an exoneration takes its share TarifaExonerada / rate of that tax
// (decisions #186).
func TestUsedGoodsExoneration(t *testing.T) {
	for _, tt := range []struct {
		name, tarifa, codigoTarifa, te, exo string
	}{
		{"ok/whole rate by tarifa", "13", "", "13", "32.5"},
		{"ok/whole rate by rate code", "", "08", "13", "32.5"},
		{"ok/part of the rate", "13", "", "6.5", "16.25"},
		{"ok/a rounded share", "13", "", "1", "2.5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tx := Impuesto{Codigo: ImpuestoIVABienesUsados, FactorCalculoIVA: a("0.0325"), CodigoTarifaIVA: tt.codigoTarifa}
			if tt.tarifa != "" {
				tx.Tarifa = a(tt.tarifa)
			}
			exonerate(&tx, a(tt.te).Decimal())
			d := crcDoc(TypeFE, goods(1, "1", "1000", tx))
			if err := Calculate(d); err != nil {
				t.Fatalf("refused: %v", err)
			}
			got := d.DetalleServicio[0].Impuesto[0]
			eq(t, "monto", got.Monto, "32.5")
			eq(t, "montoExoneracion", got.Exoneracion.MontoExoneracion, tt.exo)
		})
	}
}

// randomExoneratedLine builds a line the calculation must accept: any
// discount code (a regalía or bonificación borne by the issuer, 01 or 03,
// covers the whole line), an IVA of code 01 (sometimes charged at factory
// level on the caller's base), 07 (sometimes on the caller's base) or 08
// (by tarifa or rate code), and the rate-based taxes that stack on it
// (selectivo 02, cement 12, others 99), each exonerated by part or all of
// its rate, or not at all.
func randomExoneratedLine(r *rand.Rand, n int) LineaDetalle {
	cant := decimal.New(1+r.Int64N(9999), -int32(r.IntN(3)))
	precio := decimal.New(1+r.Int64N(99999999), -int32(r.IntN(5)))
	l := goods(n, cant.String(), precio.String())
	if r.IntN(2) == 0 {
		l = service(n, cant.String(), precio.String())
	}
	montoTotal := cant.Mul(precio).Round(MoneyPlaces)
	switch r.IntN(5) {
	case 0: // none
	case 1:
		l.Descuento = []Descuento{{CodigoDescuento: "07", PorcentajeDescuento: NewAmount(decimal.New(r.Int64N(10000), -2))}}
	case 2:
		// A bonus whose IVA the client pays, on part or all of the line.
		m := montoTotal.Mul(decimal.New(r.Int64N(101), -2)).Round(MoneyPlaces)
		l.Descuento = []Descuento{{CodigoDescuento: DescuentoRegaliaIVACliente, MontoDescuento: NewAmount(m)}}
	default:
		// A regalía or bonificación borne by the issuer: the whole line.
		code := []string{DescuentoRegalia, DescuentoBonificacion}[r.IntN(2)]
		l.Descuento = []Descuento{{CodigoDescuento: code, PorcentajeDescuento: NewAmount(decimal.New(100, 0))}}
	}
	// maybeExonerate exonerates nothing, the whole rate, or a part of it.
	maybeExonerate := func(tx *Impuesto, rate decimal.Decimal) {
		switch r.IntN(3) {
		case 1:
			exonerate(tx, rate)
		case 2:
			exonerate(tx, decimal.New(r.Int64N(rate.Shift(2).IntPart()+1), -2))
		}
	}
	for _, code := range []string{ImpuestoSelectivo, ImpuestoCemento, ImpuestoOtros} {
		if r.IntN(3) != 0 {
			continue
		}
		tx := Impuesto{Codigo: code, Tarifa: NewAmount(decimal.New(1+r.Int64N(5000), -2))}
		switch code {
		case ImpuestoCemento:
			tx.Tarifa = a("5")
		case ImpuestoOtros:
			tx.CodigoImpuestoOTRO = "Municipal"
		}
		maybeExonerate(&tx, tx.Tarifa.Decimal())
		l.Impuesto = append(l.Impuesto, tx)
	}
	rates := []string{"02", "03", "04", "08"}
	rc := rates[r.IntN(len(rates))]
	rate, _ := TarifaIVA(rc)
	tx := Impuesto{Codigo: ImpuestoIVA, CodigoTarifaIVA: rc}
	gross := len(l.Descuento) > 0 && l.Descuento[0].CodigoDescuento != "07"
	switch r.IntN(7) {
	case 0:
		tx.Codigo = ImpuestoIVAEspecial
		if r.IntN(2) == 0 {
			// Code 07's base is the caller's when given.
			l.BaseImponible = NewAmount(decimal.New(1+r.Int64N(99999999), -int32(r.IntN(5))))
		}
	case 1:
		tx = Impuesto{Codigo: ImpuestoIVABienesUsados, FactorCalculoIVA: NewAmount(decimal.New(1+r.Int64N(1300), -4)), Tarifa: NewAmount(rate)}
		if r.IntN(2) == 0 {
			tx.Tarifa, tx.CodigoTarifaIVA = Amount{}, rc
		}
	case 2:
		if !gross {
			// The IVA charged at factory level, on the caller's base.
			l.IVACobradoFabrica = IVAFabricaSeparado
			l.BaseImponible = NewAmount(decimal.New(1+r.Int64N(99999999), -int32(r.IntN(5))))
		}
	}
	maybeExonerate(&tx, rate)
	l.Impuesto = append(l.Impuesto, tx)
	return l
}

// TestExonerationProperties: over generated lines, each line's
// ImpuestoNeto is Σ (Monto − MontoExoneracion) − ImpuestoAsumidoEmisorFabrica
// and never negative, an exoneration never exceeds its tax, and a tax whose
// TarifaExonerada is its whole rate leaves nothing to pay: a line whose
// every tax is so exonerated owes no tax, whatever its discount's code.
func TestExonerationProperties(t *testing.T) {
	runs := 3000
	if testing.Short() {
		runs = 300
	}
	for seed := range runs {
		r := rand.New(rand.NewPCG(uint64(seed), 34))
		d := crcDoc([]DocumentType{TypeFE, TypeTE, TypeND}[r.IntN(3)])
		for i := range 1 + r.IntN(4) {
			d.DetalleServicio = append(d.DetalleServicio, randomExoneratedLine(r, i+1))
		}
		label := "seed " + strconv.Itoa(seed)
		if err := Calculate(d); err != nil {
			t.Fatalf("%s: a valid document is refused: %v\n%s", label, err, describeLines(d))
		}
		for i := range d.DetalleServicio {
			l := &d.DetalleServicio[i]
			name := fmt.Sprintf("%s line %d", label, i+1)
			sum, whole := decimal.Zero, true
			for j := range l.Impuesto {
				tx := &l.Impuesto[j]
				net := tx.Monto.Decimal()
				if x := tx.Exoneracion; x != nil {
					net = net.Sub(x.MontoExoneracion.Decimal())
					if net.Sign() < 0 {
						t.Errorf("%s tax %s: MontoExoneracion %s above Monto %s", name, tx.Codigo, x.MontoExoneracion, tx.Monto)
					}
					rate, _ := exonerableRate(tx)
					if x.TarifaExonerada.Decimal().Cmp(rate) == 0 && net.Sign() != 0 {
						t.Errorf("%s tax %s: the whole rate %s is exonerated, yet %s is left to pay", name, tx.Codigo, rate, net)
					}
					if x.TarifaExonerada.Decimal().Cmp(rate) != 0 {
						whole = false
					}
				} else if tx.Monto.Sign() != 0 {
					whole = false
				}
				sum = sum.Add(net)
			}
			neto := sum.Sub(l.ImpuestoAsumidoEmisorFabrica.Decimal())
			if l.ImpuestoNeto.Decimal().Cmp(neto) != 0 {
				t.Errorf("%s: ImpuestoNeto %s, want Σ(Monto − MontoExoneracion) − ImpuestoAsumido = %s", name, l.ImpuestoNeto, neto)
			}
			if l.ImpuestoNeto.Sign() < 0 {
				t.Errorf("%s: ImpuestoNeto %s is negative", name, l.ImpuestoNeto)
			}
			if whole && (l.ImpuestoNeto.Sign() != 0 || l.ImpuestoAsumidoEmisorFabrica.Sign() != 0) {
				t.Errorf("%s: every tax is wholly exonerated, yet ImpuestoNeto %s and ImpuestoAsumido %s", name, l.ImpuestoNeto, l.ImpuestoAsumidoEmisorFabrica)
			}
		}
		checkInvariants(t, label, d)
		if t.Failed() {
			t.Fatalf("%s:\n%s", label, describeLines(d))
		}
	}
}

// describeLines prints the inputs of a document's lines for a failure.
func describeLines(d *Document) string {
	s := ""
	for _, l := range d.DetalleServicio {
		s += fmt.Sprintf("  %s × %s", l.Cantidad, l.PrecioUnitario)
		for _, ds := range l.Descuento {
			s += fmt.Sprintf(" desc[%s %s%%%s]", ds.CodigoDescuento, ds.PorcentajeDescuento, ds.MontoDescuento)
		}
		for _, tx := range l.Impuesto {
			s += fmt.Sprintf(" tax[%s %s%s %s", tx.Codigo, tx.CodigoTarifaIVA, tx.Tarifa, tx.FactorCalculoIVA)
			if tx.Exoneracion != nil {
				s += " exo " + tx.Exoneracion.TarifaExonerada.String()
			}
			s += "]"
		}
		s += "\n"
	}
	return s
}
