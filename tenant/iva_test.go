package tenant

import (
	"encoding/json"
	"testing"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
)

// ivaLine is a calculated line: its SubTotal, BaseImponible and taxes.
func ivaLine(sub, base string, taxes ...hacienda.Impuesto) hacienda.LineaDetalle {
	l := hacienda.LineaDetalle{SubTotal: hacienda.MustAmount(sub), Impuesto: taxes}
	if base != "" {
		l.BaseImponible = hacienda.MustAmount(base)
	}
	return l
}

func ivaTax(codigo, tarifaCode, tarifa, monto, exo string) hacienda.Impuesto {
	tx := hacienda.Impuesto{Codigo: codigo, CodigoTarifaIVA: tarifaCode, Monto: hacienda.MustAmount(monto)}
	if tarifa != "" {
		tx.Tarifa = hacienda.MustAmount(tarifa)
	}
	if exo != "" {
		tx.Exoneracion = &hacienda.Exoneracion{MontoExoneracion: hacienda.MustAmount(exo)}
	}
	return tx
}

func ivaDoc(t hacienda.DocumentType, lines ...hacienda.LineaDetalle) *hacienda.Document {
	return &hacienda.Document{Type: t, DetalleServicio: lines}
}

// ivaItem is one document a summary adds: its breakdown, and whether it is
// a received one and of which type.
type ivaItem struct {
	Received  bool
	Tipo      string
	Breakdown IVABreakdown
}

// summarizeIVA adds items up as the summary adds the documents it reads.
func summarizeIVA(periodo string, items []ivaItem) IVASummary {
	var s ivaSummer
	for _, it := range items {
		s.add(it.Received, it.Tipo, it.Breakdown)
	}
	return s.summary(periodo)
}

// TestSummarizeIVA adds documents up and compares every figure with a hand
// computation (the comments carry the arithmetic).
func TestSummarizeIVA(t *testing.T) {
	type want struct {
		side                                                 string // v ventas, c compras, tv / tc totals
		codigo, tarifaCode, tarifa                           string
		base, impuesto, exento, exonerado, noSujeto, acredit string
		docs                                                 int64
	}
	cases := []struct {
		name  string
		items []ivaItem
		want  []want
	}{
		{
			name: "rates, exempt, no sujeto, exonerations, notes",
			items: []ivaItem{
				{Tipo: "01", Breakdown: BreakdownOf(ivaDoc(hacienda.TypeFE,
					// 13 %: 100.004 × 13 % = 13.00052
					ivaLine("100.004", "100.004", ivaTax("01", "08", "13", "13.00052", "")),
					// 4 %: 50.00 → 2.00
					ivaLine("50", "50", ivaTax("01", "04", "4", "2", "")),
					// exempt (10) and no sujeto (01): bases to exento / noSujeto
					ivaLine("30", "30", ivaTax("01", "10", "0", "0", "")),
					ivaLine("20", "20", ivaTax("01", "01", "0", "0", "")),
					// fully exonerated 13 %: 40 → 5.2 − 5.2 = 0 tax, 40 exonerated
					ivaLine("40", "40", ivaTax("01", "08", "13", "5.2", "5.2")),
					// partially exonerated 13 %: 200 → 26, 8 exonerated:
					// exonerated base 200 × 8 / 26 = 61.53846 (5 decimals),
					// taxed base 200 − 61.53846 = 138.46154, tax 26 − 8 = 18
					ivaLine("200", "200", ivaTax("01", "08", "13", "26", "8")),
					// selectivo 10 % on 10 = 1, and IVA 13 % on 11 = 1.43
					ivaLine("10", "11", ivaTax("02", "", "10", "1", ""), ivaTax("01", "08", "13", "1.43", "")),
					// a line with no tax at all: 5 exento in the row without code
					ivaLine("5", ""),
				))},
				// NC subtracts: 13 % on 10.005 = 1.30065
				{Tipo: "03", Breakdown: BreakdownOf(ivaDoc(hacienda.TypeNC,
					ivaLine("10.005", "10.005", ivaTax("01", "08", "13", "1.30065", ""))))},
				// ND adds: 13 % on 0.001 = 0.00013
				{Tipo: "02", Breakdown: BreakdownOf(ivaDoc(hacienda.TypeND,
					ivaLine("0.001", "0.001", ivaTax("01", "08", "13", "0.00013", ""))))},
				// A REP moves nothing.
				{Tipo: "10", Breakdown: BreakdownOf(ivaDoc(hacienda.TypeREP,
					ivaLine("999", "999", ivaTax("01", "08", "13", "129.87", ""))))},
				// A received FE, 13 % on 1000 = 130 and 1 % on 300 = 3,
				// the message credits 100: to 13 % 100 × 130/133 =
				// 97.74436, to 1 % 100 × 3/133 = 2.25564.
				{Received: true, Tipo: "01", Breakdown: func() IVABreakdown {
					b := BreakdownOf(ivaDoc(hacienda.TypeFE,
						ivaLine("1000", "1000", ivaTax("01", "08", "13", "130", "")),
						ivaLine("300", "300", ivaTax("01", "02", "1", "3", ""))))
					b.Acreditable = b.Acreditable.Add(mustDec("100"))
					return b
				}()},
				// A received NC subtracts, 13 % on 100 = 13, credited in full.
				{Received: true, Tipo: "03", Breakdown: func() IVABreakdown {
					b := BreakdownOf(ivaDoc(hacienda.TypeNC, ivaLine("100", "100", ivaTax("01", "08", "13", "13", ""))))
					b.Acreditable = mustDec("13")
					return b
				}()},
			},
			want: []want{
				{side: "v", codigo: "", exento: "5.00", docs: 1, base: "0.00", impuesto: "0.00", exonerado: "0.00", noSujeto: "0.00", acredit: "0.00"},
				// 01/01: no sujeto 20
				{side: "v", codigo: "01", tarifaCode: "01", tarifa: "0", base: "0.00", impuesto: "0.00", exento: "0.00", exonerado: "0.00", noSujeto: "20.00", docs: 1, acredit: "0.00"},
				// 01/04: 50, tax 2
				{side: "v", codigo: "01", tarifaCode: "04", tarifa: "4", base: "50.00", impuesto: "2.00", exento: "0.00", exonerado: "0.00", noSujeto: "0.00", docs: 1, acredit: "0.00"},
				// 01/08: base 100.004 + 0 + 138.46154 + 11 − 10.005 + 0.001
				// = 239.46154 → 239.46; tax 13.00052 + 0 + 18 + 1.43 −
				// 1.30065 + 0.00013 = 31.13000 → 31.13; exonerated 40 +
				// 61.53846 = 101.53846 → 101.54; FE, NC and ND: 3 documents
				{side: "v", codigo: "01", tarifaCode: "08", tarifa: "13", base: "239.46", impuesto: "31.13", exento: "0.00", exonerado: "101.54", noSujeto: "0.00", docs: 3, acredit: "0.00"},
				// 01/10: exempt 30
				{side: "v", codigo: "01", tarifaCode: "10", tarifa: "0", base: "0.00", impuesto: "0.00", exento: "30.00", exonerado: "0.00", noSujeto: "0.00", docs: 1, acredit: "0.00"},
				// 02: selectivo on SubTotal 10, tax 1
				{side: "v", codigo: "02", tarifa: "10", base: "10.00", impuesto: "1.00", exento: "0.00", exonerado: "0.00", noSujeto: "0.00", docs: 1, acredit: "0.00"},
				// totals: base 0 + 50 + 239.46154 + 10 = 299.46154 → 299.46;
				// tax 2 + 31.13 + 1 = 34.13; exento 5 + 30 = 35; 3 documents
				{side: "tv", base: "299.46", impuesto: "34.13", exento: "35.00", exonerado: "101.54", noSujeto: "20.00", docs: 3, acredit: "0.00"},
				// purchases 01/02: 300, tax 3, credit 2.25564 → 2.26
				{side: "c", codigo: "01", tarifaCode: "02", tarifa: "1", base: "300.00", impuesto: "3.00", exento: "0.00", exonerado: "0.00", noSujeto: "0.00", docs: 1, acredit: "2.26"},
				// purchases 01/08: 1000 − 100 = 900, tax 130 − 13 = 117,
				// credit 97.74436 − 13 = 84.74436 → 84.74
				{side: "c", codigo: "01", tarifaCode: "08", tarifa: "13", base: "900.00", impuesto: "117.00", exento: "0.00", exonerado: "0.00", noSujeto: "0.00", docs: 2, acredit: "84.74"},
				// purchase totals: credit 100 − 13 = 87 (not 2.26 + 84.74 =
				// 87.00 by luck: both are 87)
				{side: "tc", base: "1200.00", impuesto: "120.00", exento: "0.00", exonerado: "0.00", noSujeto: "0.00", docs: 2, acredit: "87.00"},
			},
		},
		{
			name: "rounded once, half away from zero",
			items: []ivaItem{
				// three documents of 0.00500 tax each: 0.015 → 0.02 (each
				// rounded alone would be 0.01 × 3 = 0.03)
				{Tipo: "04", Breakdown: BreakdownOf(ivaDoc(hacienda.TypeTE, ivaLine("0.5", "0.5", ivaTax("01", "02", "1", "0.005", ""))))},
				{Tipo: "04", Breakdown: BreakdownOf(ivaDoc(hacienda.TypeTE, ivaLine("0.5", "0.5", ivaTax("01", "02", "1", "0.005", ""))))},
				{Tipo: "04", Breakdown: BreakdownOf(ivaDoc(hacienda.TypeTE, ivaLine("0.5", "0.5", ivaTax("01", "02", "1", "0.005", ""))))},
				// a credit note of 2.005 base: −2.005 → −2.01 (away from zero)
				{Tipo: "03", Breakdown: BreakdownOf(ivaDoc(hacienda.TypeNC, ivaLine("2.005", "2.005", ivaTax("01", "10", "0", "0", ""))))},
			},
			want: []want{
				{side: "v", codigo: "01", tarifaCode: "02", tarifa: "1", base: "1.50", impuesto: "0.02", exento: "0.00", exonerado: "0.00", noSujeto: "0.00", docs: 3, acredit: "0.00"},
				{side: "v", codigo: "01", tarifaCode: "10", tarifa: "0", base: "0.00", impuesto: "0.00", exento: "-2.01", exonerado: "0.00", noSujeto: "0.00", docs: 1, acredit: "0.00"},
				{side: "tv", base: "1.50", impuesto: "0.02", exento: "-2.01", exonerado: "0.00", noSujeto: "0.00", docs: 4, acredit: "0.00"},
				{side: "tc", base: "0.00", impuesto: "0.00", exento: "0.00", exonerado: "0.00", noSujeto: "0.00", docs: 0, acredit: "0.00"},
			},
		},
		{
			name: "another currency, in colones at the document's rate",
			items: []ivaItem{
				// USD at 506.25: base 10.01 × 506.25 = 5067.5625; tax
				// 1.3013 × 506.25 = 658.783125 → 658.78313 (5 decimals)
				{Tipo: "01", Breakdown: BreakdownOf(inUSD(ivaDoc(hacienda.TypeFE,
					ivaLine("10.01", "10.01", ivaTax("01", "08", "13", "1.3013", ""))), "506.25"))},
				// colones stay as they are: 100, tax 13
				{Tipo: "01", Breakdown: BreakdownOf(ivaDoc(hacienda.TypeFE, ivaLine("100", "100", ivaTax("01", "08", "13", "13", ""))))},
				// received in USD at 500: base 100 → 50000, tax 13 →
				// 6500, the message credits 1 (USD) → 500
				{Received: true, Tipo: "01", Breakdown: ReceivedBreakdown(
					inUSD(ivaDoc(hacienda.TypeFE, ivaLine("100", "100", ivaTax("01", "08", "13", "13", ""))), "500"),
					&hacienda.MensajeReceptor{Mensaje: hacienda.ReceptorParcial, MontoTotalImpuestoAcreditar: hacienda.MustAmount("1")})},
			},
			want: []want{
				// base 5067.5625 + 100 = 5167.5625 → 5167.56; tax
				// 658.78313 + 13 = 671.78313 → 671.78
				{side: "v", codigo: "01", tarifaCode: "08", tarifa: "13", base: "5167.56", impuesto: "671.78", exento: "0.00", exonerado: "0.00", noSujeto: "0.00", docs: 2, acredit: "0.00"},
				{side: "tv", base: "5167.56", impuesto: "671.78", exento: "0.00", exonerado: "0.00", noSujeto: "0.00", docs: 2, acredit: "0.00"},
				{side: "c", codigo: "01", tarifaCode: "08", tarifa: "13", base: "50000.00", impuesto: "6500.00", exento: "0.00", exonerado: "0.00", noSujeto: "0.00", docs: 1, acredit: "500.00"},
				{side: "tc", base: "50000.00", impuesto: "6500.00", exento: "0.00", exonerado: "0.00", noSujeto: "0.00", docs: 1, acredit: "500.00"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The breakdowns go through their stored form, as the summary
			// reads them.
			for i := range tc.items {
				raw, err := json.Marshal(tc.items[i].Breakdown)
				if err != nil {
					t.Fatal(err)
				}
				var back IVABreakdown
				if err := json.Unmarshal(raw, &back); err != nil {
					t.Fatal(err)
				}
				tc.items[i].Breakdown = back
			}
			s := summarizeIVA("2025-10", tc.items)
			var got []want
			row := func(side string, r IVARow) want {
				return want{side: side, codigo: r.Codigo, tarifaCode: r.CodigoTarifaIVA, tarifa: r.Tarifa,
					base: r.Base.StringFixed(2), impuesto: r.Impuesto.StringFixed(2), exento: r.Exento.StringFixed(2),
					exonerado: r.Exonerado.StringFixed(2), noSujeto: r.NoSujeto.StringFixed(2),
					acredit: r.Acreditable.StringFixed(2), docs: r.Documentos}
			}
			for _, r := range s.Ventas {
				got = append(got, row("v", r))
			}
			got = append(got, row("tv", s.TotalVentas))
			for _, r := range s.Compras {
				got = append(got, row("c", r))
			}
			got = append(got, row("tc", s.TotalCompras))
			if len(got) != len(tc.want) {
				t.Fatalf("rows:\n got %+v\nwant %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// inUSD writes doc in US dollars at rate colones each.
func inUSD(doc *hacienda.Document, rate string) *hacienda.Document {
	doc.ResumenFactura.CodigoTipoMoneda = hacienda.CodigoTipoMoneda{CodigoMoneda: "USD", TipoCambio: hacienda.MustAmount(rate)}
	return doc
}

func mustDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }
