package pipeline

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
	"facturad/tenant"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func amt(s string) hacienda.Amount { return hacienda.NewAmount(dec(s)) }

// requireFieldErr fails unless err is a validation error on field.
func requireFieldErr(t *testing.T, err error, field string) {
	t.Helper()
	var fe *fieldError
	if !errors.As(err, &fe) || len(fe.fields[field]) == 0 {
		t.Fatalf("want an error on %s, got %v", field, err)
	}
}

// voidLines are an original's lines: goods (CAByS 2…), a service (8…) and
// goods with a discount given as an amount.
func voidLines() []hacienda.LineaDetalle {
	return []hacienda.LineaDetalle{
		{NumeroLinea: 1, CodigoCABYS: "2391901000000", Cantidad: amt("3")},
		{NumeroLinea: 2, CodigoCABYS: "8314100000000", Cantidad: amt("1")},
		{NumeroLinea: 3, CodigoCABYS: "0111000000000", Cantidad: amt("2.5")},
	}
}

// TestChooseLines: which lines a credit note credits, and at what
// quantity, given what earlier credit notes took.
func TestChooseLines(t *testing.T) {
	type pick struct {
		numero, index int
		cantidad      string
	}
	tests := []struct {
		name  string
		done  map[int]string
		asked []VoidLine
		want  []pick
		field string // the error's field; "" for none
	}{
		{name: "ok/everything", want: []pick{{1, 0, "3"}, {2, 1, "1"}, {3, 2, "2.5"}}},
		{name: "ok/everything that remains", done: map[int]string{1: "1", 2: "1", 3: "0.5"},
			want: []pick{{1, 0, "2"}, {3, 2, "2"}}},
		{name: "ok/named lines in the caller's order", asked: []VoidLine{{NumeroLinea: 3, Cantidad: "1.25"}, {NumeroLinea: 1, Cantidad: "3"}},
			want: []pick{{3, 2, "1.25"}, {1, 0, "3"}}},
		{name: "ok/exactly what remains", done: map[int]string{1: "2.5"}, asked: []VoidLine{{NumeroLinea: 1, Cantidad: "0.5"}},
			want: []pick{{1, 0, "0.5"}}},
		{name: "ok/three decimals", asked: []VoidLine{{NumeroLinea: 3, Cantidad: "0.125"}}, want: []pick{{3, 2, "0.125"}}},
		{name: "error/all credited", done: map[int]string{1: "3", 2: "1", 3: "2.5"}, field: "clave"},
		{name: "error/beyond what remains", done: map[int]string{1: "2.5"}, asked: []VoidLine{{NumeroLinea: 1, Cantidad: "0.501"}},
			field: "lineas[0].cantidad"},
		{name: "error/beyond the line", asked: []VoidLine{{NumeroLinea: 2, Cantidad: "1"}, {NumeroLinea: 1, Cantidad: "4"}},
			field: "lineas[1].cantidad"},
		{name: "error/no such line", asked: []VoidLine{{NumeroLinea: 9, Cantidad: "1"}}, field: "lineas[0].numeroLinea"},
		{name: "error/line 0", asked: []VoidLine{{NumeroLinea: 0, Cantidad: "1"}}, field: "lineas[0].numeroLinea"},
		{name: "error/a line twice", asked: []VoidLine{{NumeroLinea: 1, Cantidad: "1"}, {NumeroLinea: 1, Cantidad: "1"}},
			field: "lineas[1].numeroLinea"},
		{name: "error/zero", asked: []VoidLine{{NumeroLinea: 1, Cantidad: "0"}}, field: "lineas[0].cantidad"},
		{name: "error/negative", asked: []VoidLine{{NumeroLinea: 1, Cantidad: "-1"}}, field: "lineas[0].cantidad"},
		{name: "error/four decimals", asked: []VoidLine{{NumeroLinea: 1, Cantidad: "1.0001"}}, field: "lineas[0].cantidad"},
		{name: "error/not a number", asked: []VoidLine{{NumeroLinea: 1, Cantidad: "uno"}}, field: "lineas[0].cantidad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := map[int]decimal.Decimal{}
			for n, q := range tt.done {
				done[n] = dec(q)
			}
			got, err := chooseLines(voidLines(), done, tt.asked)
			if tt.field != "" {
				requireFieldErr(t, err, tt.field)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var picks []pick
			for _, c := range got {
				picks = append(picks, pick{c.numero, c.index, c.cantidad.String()})
			}
			if !slices.Equal(picks, tt.want) {
				t.Errorf("chose %v, want %v", picks, tt.want)
			}
		})
	}
}

// TestCreditCode: 01 for everything whole with nothing credited before, 06
// for goods only, 02 otherwise (decision 98).
func TestCreditCode(t *testing.T) {
	lines := voidLines()
	c := func(index int, q string) creditLine {
		return creditLine{numero: index + 1, index: index, cantidad: dec(q)}
	}
	tests := []struct {
		name     string
		chosen   []creditLine
		previous int
		code     string
		full     bool
	}{
		{"every line whole", []creditLine{c(0, "3"), c(1, "1"), c(2, "2.5")}, 0, "01", true},
		{"every line whole, services included, after a credit", []creditLine{c(0, "3"), c(1, "1"), c(2, "2.5")}, 1, "02", false},
		{"every line, one in part", []creditLine{c(0, "3"), c(1, "1"), c(2, "2")}, 0, "02", false},
		{"goods whole, not every line", []creditLine{c(0, "3"), c(2, "2.5")}, 0, "06", false},
		{"goods in part", []creditLine{c(2, "0.5")}, 0, "06", false},
		{"goods after a credit", []creditLine{c(0, "1")}, 2, "06", false},
		{"a service", []creditLine{c(1, "1")}, 0, "02", false},
		{"goods and a service", []creditLine{c(0, "1"), c(1, "1")}, 0, "02", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, full := creditCode(lines, tt.chosen, tt.previous)
			if code != tt.code || full != tt.full {
				t.Errorf("code %s full %v, want %s %v", code, full, tt.code, tt.full)
			}
		})
	}
	// A line without a CAByS is not known to be goods.
	l := voidLines()
	l[0].CodigoCABYS = ""
	if code, _ := creditCode(l, []creditLine{c(0, "1")}, 0); code != "02" {
		t.Errorf("a line without CAByS: code %s, want 02", code)
	}
	// Only 5 to 9 are not goods.
	l[0].CodigoCABYS = "4999999999999"
	if code, _ := creditCode(l, []creditLine{c(0, "1")}, 0); code != "06" {
		t.Errorf("CAByS 4…: code %s, want 06", code)
	}
	l[0].CodigoCABYS = "5000000000000"
	if code, _ := creditCode(l, []creditLine{c(0, "1")}, 0); code != "02" {
		t.Errorf("CAByS 5…: code %s, want 02", code)
	}
}

// TestScaleLine: a line at a smaller quantity; discounts given as amounts
// scaled pro rata to 5 decimals half away from zero, percentages kept, the
// original line untouched.
func TestScaleLine(t *testing.T) {
	tests := []struct {
		name      string
		cantidad  string
		descuento []hacienda.Descuento
		q         string
		want      []string // MontoDescuento, or "pct:" + PorcentajeDescuento
	}{
		{"no discount", "3", nil, "1", nil},
		{"an amount, a third", "3", []hacienda.Descuento{{MontoDescuento: amt("1000")}}, "1", []string{"333.33333"}},
		{"an amount, two thirds rounds up", "3", []hacienda.Descuento{{MontoDescuento: amt("1000")}}, "2", []string{"666.66667"}},
		{"an amount, half away from zero", "2", []hacienda.Descuento{{MontoDescuento: amt("0.00001")}}, "1", []string{"0.00001"}},
		{"an amount, whole", "2.5", []hacienda.Descuento{{MontoDescuento: amt("12.34")}}, "2.5", []string{"12.34"}},
		{"a percentage stays", "4", []hacienda.Descuento{{PorcentajeDescuento: amt("10")}}, "1", []string{"pct:10"}},
		{"a percentage and an amount", "4", []hacienda.Descuento{{PorcentajeDescuento: amt("5")}, {MontoDescuento: amt("100")}}, "0.5",
			[]string{"pct:5", "12.5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := hacienda.LineaDetalle{NumeroLinea: 4, Cantidad: amt(tt.cantidad), PrecioUnitario: amt("5000"), Descuento: tt.descuento}
			before, _ := json.Marshal(l)
			got := scaleLine(l, dec(tt.q))
			if after, _ := json.Marshal(l); string(after) != string(before) {
				t.Errorf("the original line changed: %s, was %s", after, before)
			}
			if got.Cantidad.String() != dec(tt.q).String() || got.PrecioUnitario.String() != "5000" || got.NumeroLinea != 4 {
				t.Errorf("scaled line %+v", got)
			}
			var ds []string
			for _, d := range got.Descuento {
				if d.PorcentajeDescuento.IsSet() {
					ds = append(ds, "pct:"+d.PorcentajeDescuento.String())
					continue
				}
				ds = append(ds, d.MontoDescuento.String())
			}
			if !slices.Equal(ds, tt.want) {
				t.Errorf("discounts %v, want %v", ds, tt.want)
			}
		})
	}
}

// saleGroups are the tax groups of a sale of TotalComprobante 9240.00:
// 5000 at 13 % (650) and 3000 at 4 % (120), plus 470 exempt.
func saleGroups() ([]*taxGroup, decimal.Decimal) {
	return []*taxGroup{
		{key: "01/08", codigo: "01", tarifa: "08", rate: dec("13"), total: dec("650")},
		{key: "01/04", codigo: "01", tarifa: "04", rate: dec("4"), total: dec("120")},
	}, dec("9240")
}

// TestSplitPayment: a payment receipt's tax per group is monto × group tax
// / TotalComprobante; the payment that settles the balance takes each
// group's exact remainder; the lines add up to monto; the bases give the
// taxes back at their rates.
func TestSplitPayment(t *testing.T) {
	type line struct{ monto, sub, tax string }
	tests := []struct {
		name  string
		monto string
		paid  map[string]string
		last  bool
		taxes map[string]string
		lines []line // tax "" for the untaxed line
	}{
		{"a quarter", "2310", nil, false, map[string]string{"01/08": "162.5", "01/04": "30"},
			[]line{{"1250", "1250", "162.5"}, {"750", "750", "30"}, {"117.5", "117.5", ""}}},
		{"an odd amount rounds each group", "1000", nil, false, map[string]string{"01/08": "70.34632", "01/04": "12.98701"},
			[]line{{"541.12554", "541.12554", "70.34632"}, {"324.67525", "324.67525", "12.98701"}, {"50.86588", "50.86588", ""}}},
		{"the last payment takes the remainders", "8240", map[string]string{"01/08": "70.34632", "01/04": "12.98701"}, true,
			map[string]string{"01/08": "579.65368", "01/04": "107.01299"},
			[]line{{"4458.87446", "4458.87446", "579.65368"}, {"2675.32475", "2675.32475", "107.01299"}, {"419.13412", "419.13412", ""}}},
		{"the whole in one payment", "9240", nil, true, map[string]string{"01/08": "650", "01/04": "120"},
			[]line{{"5000", "5000", "650"}, {"3000", "3000", "120"}, {"470", "470", ""}}},
		{"a group already paid whole is left out of the last", "520", map[string]string{"01/08": "650", "01/04": "100"}, true,
			map[string]string{"01/04": "20"}, []line{{"500", "500", "20"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			groups, total := saleGroups()
			paid := map[string]decimal.Decimal{}
			for k, v := range tt.paid {
				paid[k] = dec(v)
			}
			lines, taxes := splitPayment(groups, total, dec(tt.monto), paid, tt.last, "Pago 1")
			if !maps.Equal(taxes, tt.taxes) {
				t.Errorf("taxes %v, want %v", taxes, tt.taxes)
			}
			var got []line
			sum := decimal.Zero
			for i, l := range lines {
				if l.NumeroLinea != i+1 || l.Detalle != "Pago 1" {
					t.Errorf("line %d: numero %d detalle %q", i, l.NumeroLinea, l.Detalle)
				}
				tax := ""
				sum = sum.Add(l.MontoTotal.Decimal())
				if len(l.Impuesto) == 1 {
					imp := l.Impuesto[0]
					g := groups[slices.IndexFunc(groups, func(g *taxGroup) bool { return g.tarifa == imp.CodigoTarifaIVA })]
					tax = taxes[g.key]
					// The calculation's tax on the base, to 5 decimals, is the
					// group's share.
					if back := l.SubTotal.Decimal().Mul(g.rate).Div(dec("100")).Round(hacienda.MoneyPlaces); back.String() != tax {
						t.Errorf("line %d: %s at %s%% gives %s, not %s", i+1, l.SubTotal, g.rate, back, tax)
					}
					sum = sum.Add(dec(tax))
				}
				got = append(got, line{l.MontoTotal.String(), l.SubTotal.String(), tax})
			}
			if !slices.Equal(got, tt.lines) {
				t.Errorf("lines %v, want %v", got, tt.lines)
			}
			if len(tt.lines) == 3 && !sum.Equal(dec(tt.monto)) {
				t.Errorf("the lines add up to %s, not %s", sum, tt.monto)
			}
		})
	}

	// A sale all taxed at 13 %: the base's rounding goes over monto by
	// 0.00002, which the line's MontoTotal gives back (its base stays).
	lines, taxes := splitPayment([]*taxGroup{{key: "01/08", codigo: "01", tarifa: "08", rate: dec("13"), total: dec("130")}},
		dec("1130"), dec("9"), map[string]decimal.Decimal{}, false, "Pago")
	if len(lines) != 1 || taxes["01/08"] != "1.0354" || lines[0].SubTotal.String() != "7.96462" || lines[0].MontoTotal.String() != "7.9646" {
		t.Errorf("over by rounding: %+v, %v", lines, taxes)
	}

	// Two payments of a sale's thirds and the last: the groups' taxes add
	// up to the sale's exactly.
	groups, total := saleGroups()
	paid := map[string]decimal.Decimal{}
	for i, m := range []string{"3080", "3080", "3080"} {
		_, taxes := splitPayment(groups, total, dec(m), paid, i == 2, "Pago")
		for k, v := range taxes {
			paid[k] = paid[k].Add(dec(v))
		}
	}
	if paid["01/08"].String() != "650" || paid["01/04"].String() != "120" {
		t.Errorf("three payments took %v of the taxes", paid)
	}
}

// TestTaxGroups: the groups of the summary with the rates of the lines; a
// tax of code 08 is refused.
func TestTaxGroups(t *testing.T) {
	x := &hacienda.Document{}
	x.ResumenFactura.TotalDesgloseImpuesto = []hacienda.TotalDesgloseImpuesto{
		{Codigo: "01", CodigoTarifaIVA: "08", TotalMontoImpuesto: amt("650")},
		{Codigo: "01", CodigoTarifaIVA: "04", TotalMontoImpuesto: amt("120")},
	}
	x.DetalleServicio = []hacienda.LineaDetalle{
		{Impuesto: []hacienda.Impuesto{{Codigo: "01", CodigoTarifaIVA: "04", Tarifa: amt("4")}}},
		{Impuesto: []hacienda.Impuesto{{Codigo: "01", CodigoTarifaIVA: "08", Tarifa: amt("13")}}},
	}
	groups, err := taxGroups(x)
	if err != nil || len(groups) != 2 || groups[0].key != "01/08" || groups[0].rate.String() != "13" || groups[0].total.String() != "650" ||
		groups[1].key != "01/04" || groups[1].rate.String() != "4" {
		t.Fatalf("groups %+v, %v", groups, err)
	}
	x.DetalleServicio = append(x.DetalleServicio, hacienda.LineaDetalle{Impuesto: []hacienda.Impuesto{{Codigo: "08"}}})
	_, err = taxGroups(x)
	requireFieldErr(t, err, "clave")
}

// TestBuildReissue: the shallow merge of a re-issue over the rejected
// document's stored request.
func TestBuildReissue(t *testing.T) {
	stored := `{"id_externo":"fe-3","tipo_documento":"01","clave":"50601012600310188800100100001010000000003100000001",
	  "fecha_emision":"2026-11-02T09:00:00","condicion_venta":"01",
	  "receptor":{"nombre":"Compradora S.A.","identificacion":{"tipo":"02","numero":"3101888999"},"correoElectronico":"compras@example.com"},
	  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"2391901000000","cantidad":3,"unidadMedida":"Unid","detalle":"Cemento","precioUnitario":5000},
	                     {"numeroLinea":2,"codigoCABYS":"8314100000000","cantidad":1,"unidadMedida":"Sp","detalle":"Asesoría","precioUnitario":10000}],
	  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`
	fecha := time.Date(2026, 11, 2, 9, 0, 0, 0, hacienda.CostaRica)
	original := func(estado tenant.State) *original {
		return &original{d: tenant.Document{Clave: "50601012600310188800100100001010000000003100000001", Consecutivo: "00100001010000000003",
			FechaEmision: fecha, Request: []byte(stored), Submission: tenant.Submission{Estado: estado}}}
	}
	tests := []struct {
		name   string
		estado tenant.State
		body   string
		check  func(t *testing.T, r *hacienda.SendDocumentRequest)
		field  string
	}{
		{name: "ok/nothing changed but the number and the date", estado: tenant.StateRejected, body: `{"id_externo":"re-3"}`,
			check: func(t *testing.T, r *hacienda.SendDocumentRequest) {
				if r.Clave != "" || r.FechaEmision != "" || r.IDExterno != "re-3" || len(r.DetalleServicio) != 2 ||
					r.Receptor.Nombre != "Compradora S.A." || r.CondicionVenta != "01" {
					t.Errorf("%+v", r)
				}
			}},
		{name: "ok/a receptor replaces the stored one whole", estado: tenant.StateRejected,
			body: `{"id_externo":"re-3","receptor":{"nombre":"Otra S.A.","identificacion":{"tipo":"02","numero":"3101000111"}}}`,
			check: func(t *testing.T, r *hacienda.SendDocumentRequest) {
				if r.Receptor.Nombre != "Otra S.A." || r.Receptor.CorreoElectronico != "" || len(r.DetalleServicio) != 2 {
					t.Errorf("receptor %+v, %d lines", r.Receptor, len(r.DetalleServicio))
				}
			}},
		{name: "ok/lines replace every line", estado: tenant.StateRejected,
			body: `{"id_externo":"re-3","detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","cantidad":2,"unidadMedida":"Sp","detalle":"Otra","precioUnitario":1}]}`,
			check: func(t *testing.T, r *hacienda.SendDocumentRequest) {
				if len(r.DetalleServicio) != 1 || r.DetalleServicio[0].Detalle != "Otra" || r.Receptor.Nombre != "Compradora S.A." {
					t.Errorf("lines %+v", r.DetalleServicio)
				}
			}},
		{name: "ok/names in another case replace the stored ones", estado: tenant.StateRejected,
			body: `{"ID_Externo":"re-3","Condicion_Venta":"02","Fecha_Emision":"2026-11-03T10:00:00"}`,
			check: func(t *testing.T, r *hacienda.SendDocumentRequest) {
				if r.CondicionVenta != "02" || r.FechaEmision != "2026-11-03T10:00:00" || r.IDExterno != "re-3" {
					t.Errorf("%+v", r)
				}
			}},
		{name: "ok/a reference given is kept before the rejected one's", estado: tenant.StateRejected,
			body: `{"id_externo":"re-3","informacionReferencia":[{"tipoDocIR":"99","numero":"OC-7","fechaEmisionIR":"2026-11-01T08:00:00","codigo":"99","razon":"Orden de compra"}]}`,
			check: func(t *testing.T, r *hacienda.SendDocumentRequest) {
				if len(r.InformacionReferencia) != 2 || r.InformacionReferencia[0].Numero != "OC-7" {
					t.Errorf("references %+v", r.InformacionReferencia)
				}
			}},
		{name: "error/clave given", estado: tenant.StateRejected, body: `{"id_externo":"re-3","Clave":"5060"}`, field: "clave"},
		{name: "error/accepted", estado: tenant.StateAccepted, body: `{"id_externo":"re-3"}`, field: "clave"},
		{name: "error/pending", estado: tenant.StateSent, body: `{"id_externo":"re-3"}`, field: "clave"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.body), &fields); err != nil {
				t.Fatal(err)
			}
			r, claim, err := buildReissue(original(tt.estado), fields, "re-3")
			if tt.field != "" {
				requireFieldErr(t, err, tt.field)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if claim != nil {
				t.Errorf("a re-issue claims %+v", claim)
			}
			ref := r.InformacionReferencia[len(r.InformacionReferencia)-1]
			if ref.TipoDocIR != "10" || ref.Numero != original(tt.estado).d.Clave || ref.Codigo != "04" || !ref.FechaEmisionIR.Equal(fecha) ||
				!strings.Contains(ref.Razon, "00100001010000000003") {
				t.Errorf("reference %+v", ref)
			}
			tt.check(t, r)
		})
	}
}

// TestSettlesExactly: only the payment that settles the balance of a
// document no credit note credited takes the groups' exact remainders. A
// sale of 1130 (130 of tax) credited by half and paid 565 in one payment
// owes 65 of tax, not the original's 130.
func TestSettlesExactly(t *testing.T) {
	pay := tenant.Claim{Kind: tenant.ClaimPayment, Amount: "100"}
	credit := tenant.Claim{Kind: tenant.ClaimCredit, Amount: "565"}
	tests := []struct {
		name         string
		live         []tenant.Claim
		monto, saldo string
		want         bool
	}{
		{"settles, nothing before", nil, "1130", "1130", true},
		{"settles after payments", []tenant.Claim{pay, pay}, "930", "930", true},
		{"does not settle", []tenant.Claim{pay}, "500", "1030", false},
		{"settles after a credit note", []tenant.Claim{credit}, "565", "565", false},
		{"settles after a payment and a credit note", []tenant.Claim{pay, credit}, "465", "465", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := settlesExactly(tt.live, dec(tt.monto), dec(tt.saldo)); got != tt.want {
				t.Errorf("settlesExactly = %v, want %v", got, tt.want)
			}
		})
	}
	// The credited sale's payment, split pro rata: 65 of tax, 500 of base.
	g := []*taxGroup{{key: "01/08", codigo: "01", tarifa: "08", rate: dec("13"), total: dec("130")}}
	live := []tenant.Claim{credit}
	lines, taxes := splitPayment(g, dec("1130"), dec("565"), map[string]decimal.Decimal{}, settlesExactly(live, dec("565"), dec("565")), "Pago")
	if taxes["01/08"] != "65" || len(lines) != 1 || lines[0].SubTotal.String() != "500" || lines[0].MontoTotal.String() != "500" {
		t.Errorf("the credited sale's payment: %+v, %v", lines, taxes)
	}
}
