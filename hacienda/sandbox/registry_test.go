package sandbox_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
	"facturad/hacienda/registry"
	"facturad/hacienda/sandbox"
)

// realAnswers is where the registry package keeps the real service's
// documented answers.
var realAnswers = filepath.Join("..", "registry", "testdata", "real")

func registryClient(t *testing.T, ts *sandbox.TestServer, timeout time.Duration) *registry.Client {
	t.Helper()
	c, err := registry.NewClient(registry.ClientOptions{BaseURL: ts.RegistryURL, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// get asks the sandbox's registry a path and returns the status and body.
func get(t *testing.T, ts *sandbox.TestServer, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(ts.RegistryURL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func isMalformed(err error) bool {
	var m *registry.MalformedError
	return errors.As(err, &m) && m.Status == 400
}

func unavailable(err error, status int) bool {
	var u *registry.UnavailableError
	return errors.As(err, &u) && u.Status == status
}

func TestRegistryTaxpayers(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	c := registryClient(t, h.ts, 0)
	ctx := context.Background()
	active := func(tp registry.Taxpayer) []string {
		var out []string
		for _, a := range tp.Actividades {
			if a.Active() {
				out = append(out, a.Codigo)
			}
		}
		return out
	}
	standard := []string{"6201.0", "4741.0", "5610.0", "4711.0", "7020.0", "6920.0", "8299.0", "620100", "522003", "722003", "721001", "011301"}
	tests := []struct {
		id         string
		err        func(error) bool
		tipo       string
		estado     string
		active     []string
		inactive   string
		regimen    int
		hasMensaje bool
	}{
		{id: "114440555", tipo: "01", estado: "Inscrito", active: standard, inactive: "9609.0", regimen: 1},
		{id: "3101123456", tipo: "02", estado: "Inscrito", active: standard, inactive: "9609.0", regimen: 1},
		{id: "155812345678", tipo: "03", estado: "Inscrito", active: standard, regimen: 1},
		{id: "15581234567", tipo: "03", estado: "Inscrito", active: standard, regimen: 1},
		{id: "1000123456", tipo: "04", estado: "Inscrito", active: standard, regimen: 1},
		{id: "3101471100", tipo: "02", estado: "Inscrito", active: []string{"4711.0"}, inactive: "6201.0", regimen: 1},
		{id: "205550777", tipo: "01", estado: "Inscrito", active: []string{"5610.0"}, regimen: 2},
		{id: "3101777777", tipo: "02", estado: "Desinscrito oficio", hasMensaje: true, regimen: 1},
		{id: "310129999", tipo: "01", estado: "No inscrito", hasMensaje: true},
		{id: "3101239999", tipo: "02", estado: "No inscrito", hasMensaje: true},
		{id: "3101230000", err: func(err error) bool { return errors.Is(err, registry.ErrNotRegistered) }},
		{id: "110000000", err: func(err error) bool { return errors.Is(err, registry.ErrNotRegistered) }},
		{id: "012345678", err: isMalformed},
		{id: "12345678", err: isMalformed},
		{id: "1234567890123", err: isMalformed},
		{id: "31012345a6", err: isMalformed},
		{id: "", err: isMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			tp, err := c.Taxpayer(ctx, tc.id)
			if tc.err != nil {
				if !tc.err(err) {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tp.TipoIdentificacion != tc.tipo || tp.Situacion.Estado != tc.estado || tp.Regimen.Codigo != tc.regimen ||
				(tp.Situacion.Mensaje != "") != tc.hasMensaje || tp.Registered() != (tc.estado == "Inscrito") {
				t.Fatalf("taxpayer %+v", tp)
			}
			if got := active(tp); !slices.Equal(got, tc.active) {
				t.Errorf("active activities %v, want %v", got, tc.active)
			}
			if tc.inactive != "" {
				if a, ok := tp.Activity(tc.inactive); !ok || a.Active() {
					t.Errorf("activity %s: %+v %v, want it inactive", tc.inactive, a, ok)
				}
			}
			if tp.Nombre == "" {
				t.Error("no name")
			}
		})
	}

	// The error answers, byte for byte as the real service writes them.
	if code, b := get(t, h.ts, "/fe/ae?identificacion=012345678"); code != 400 || !sameJSON(t, b, readReal(t, "ae-400.json")) {
		t.Errorf("400: %d %s", code, b)
	}
	if code, b := get(t, h.ts, "/fe/ae?identificacion=3101230000"); code != 404 ||
		string(bytes.TrimSpace(b)) != `{"code":404,"status":"Information no available on this system, please try again with new values"}` {
		t.Errorf("404: %d %s", code, b)
	}
}

func readReal(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realAnswers, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// shape is a JSON value's keys and kinds, recursively: two answers of the
// same shape have the same shape string.
func shape(v any) string {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString("{")
		for _, k := range keys {
			fmt.Fprintf(&b, "%s:%s,", k, shape(v[k]))
		}
		return b.String() + "}"
	case []any:
		if len(v) == 0 {
			return "[]"
		}
		return "[" + shape(v[0]) + "]"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

func shapeOf(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return shape(v)
}

// TestRegistryShapes compares the sandbox's answers with the real
// service's documented ones: the same keys, the same kinds.
func TestRegistryShapes(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	for _, tc := range []struct{ path, real string }{
		{"/fe/ae?identificacion=4000042139", "ae-bncr.json"},
		{"/fe/ex?autorizacion=AL-00460853-20", "ex-AL-00460853-20.json"},
		{"/fe/cabys?codigo=2132100000100", "cabys-codigo-elided.json"},
		{"/fe/cabys?q=jugo+de+tomate&top=3", "cabys-q-elided.json"},
		{"/indicadores/tc/dolar", "tc-dolar.json"},
	} {
		code, b := get(t, h.ts, tc.path)
		if code != 200 {
			t.Fatalf("%s: %d %s", tc.path, code, b)
		}
		if got, want := shapeOf(t, b), shapeOf(t, readReal(t, tc.real)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.path, got, want)
		}
	}
	// The documented authorisation is answered as the real service
	// answered it.
	if _, b := get(t, h.ts, "/fe/ex?autorizacion=AL-00460853-20"); !sameJSON(t, b, readReal(t, "ex-AL-00460853-20.json")) {
		t.Errorf("AL-00460853-20: %s", b)
	}
	// The tax authority's 400 of the history, and its form of a day.
	if code, b := get(t, h.ts, "/indicadores/tc/dolar/historico"); code != 400 || !sameJSON(t, b, readReal(t, "historico-400.json")) {
		t.Errorf("historico without days: %d %s", code, b)
	}
	code, b := get(t, h.ts, "/indicadores/tc/dolar/historico/?d=2026-11-19&h=2026-11-20")
	var days []map[string]any
	if err := json.Unmarshal(b, &days); code != 200 || err != nil || len(days) != 2 || days[0]["fecha"] != "2026-11-19 00:00:00" {
		t.Errorf("historico: %d %s", code, b)
	}
}

func TestRegistryCabys(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	c := registryClient(t, h.ts, 0)
	ctx := context.Background()
	// Every code the repository's examples use is in the catalog.
	for _, code := range []string{"4321000000200", "8311100000100", "2111100000100", "6411000000300", "2392000000000", "9312100000100",
		"8314100000000", "3744000000100", "3532100000100", "3330000000100", "2501000000100", "2441000000100", "2411000000100",
		"8111100000000", "7211200000100", "8399000000000"} {
		if _, err := c.Cabys(ctx, code); err != nil {
			t.Errorf("%s: %v", code, err)
		}
	}
	tests := []struct {
		code, rate string
		err        error
	}{
		{code: "2392000000000", rate: "13"},
		{code: "9312100000100", rate: "4"},
		{code: "3330000000100", rate: "0"},
		{code: "0111100000100", rate: "1"},
		{code: "1234567890123", rate: "13"}, // by rule
		{code: "1234567890999", err: registry.ErrNotRegistered},
		{code: "8399999999999", err: registry.ErrNotRegistered},
		{code: "123", err: registry.ErrNotRegistered},
	}
	for _, tc := range tests {
		e, err := c.Cabys(ctx, tc.code)
		if !errors.Is(err, tc.err) || tc.err == nil && (e.Impuesto.String() != tc.rate || e.Codigo != tc.code || e.Descripcion == "") {
			t.Errorf("%s: %+v %v", tc.code, e, err)
		}
	}
	if code, b := get(t, h.ts, "/fe/cabys?codigo=1234567890999"); code != 200 || string(bytes.TrimSpace(b)) != "[]" {
		t.Errorf("unknown code: %d %s", code, b)
	}

	searches := []struct {
		q     string
		top   int
		codes []string
	}{
		{"ferretería", 0, []string{"2111100000100", "4321000000200"}},
		{"FERRETERIA", 0, []string{"2111100000100", "4321000000200"}},
		{"ferreteria", 1, []string{"2111100000100"}},
		{"servicios consultoria", 0, []string{"8311100000100", "8314100000000"}},
		{"no hay tal cosa", 0, nil},
	}
	for _, tc := range searches {
		items, err := c.SearchCabys(ctx, tc.q, tc.top)
		var codes []string
		for _, it := range items {
			codes = append(codes, it.Codigo)
		}
		if err != nil || !slices.Equal(codes, tc.codes) {
			t.Errorf("q=%q top=%d: %v %v, want %v", tc.q, tc.top, codes, err, tc.codes)
		}
	}
	code, b := get(t, h.ts, "/fe/cabys?q=ferreteria&top=1")
	var found struct{ Total, Cantidad int }
	if err := json.Unmarshal(b, &found); code != 200 || err != nil || found.Total != 2 || found.Cantidad != 1 {
		t.Errorf("total and cantidad: %d %s", code, b)
	}
	for _, path := range []string{"/fe/cabys", "/fe/cabys?q=", "/fe/cabys?q=x&top=0", "/fe/cabys?q=x&top=abc"} {
		if code, b := get(t, h.ts, path); code != 400 {
			t.Errorf("%s: %d %s", path, code, b)
		}
	}
}

func TestRegistryExonerations(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	c := registryClient(t, h.ts, 0)
	ctx := context.Background()
	tests := []struct {
		numero, owner, porcentaje, vence string
		cabys                            []string
		err                              func(error) bool
	}{
		{numero: "AL-00012345-24", owner: "114440555", porcentaje: "13", vence: "2035-12-31"},
		{numero: "al-00012345-24", owner: "114440555", porcentaje: "13", vence: "2035-12-31"},
		{numero: "AL-00460853-20", owner: "401760738", porcentaje: "13", vence: "2021-12-15", cabys: []string{"7211200000100"}},
		{numero: "AL-00100001-26", owner: "3102987654", porcentaje: "13", vence: "2035-12-31", cabys: []string{"8314100000000", "8311100000100", "4521000000100"}},
		{numero: "AL-00100002-26", owner: "114440555", porcentaje: "10", vence: "2035-12-31", cabys: []string{"2111100000100", "4321000000200"}},
		{numero: "AL-00100003-23", owner: "114440555", porcentaje: "13", vence: "2024-12-31"},
		{numero: "AL-00100004-26", owner: "3101471100", porcentaje: "13", vence: "2035-12-31"},
		{numero: "AL-00100005-26", owner: "114440555", porcentaje: "13", vence: "2035-12-31"},
		{numero: "AL-09999999-26", err: func(err error) bool { return errors.Is(err, registry.ErrNotRegistered) }},
		{numero: "AL-1", err: isMalformed},
		{numero: "", err: isMalformed},
	}
	for _, tc := range tests {
		e, err := c.Exoneration(ctx, tc.numero)
		if tc.err != nil {
			if !tc.err(err) {
				t.Errorf("%s: %v", tc.numero, err)
			}
			continue
		}
		if err != nil || e.Identificacion != tc.owner || e.PorcentajeExoneracion.String() != tc.porcentaje ||
			e.FechaVencimiento.Format(time.DateOnly) != tc.vence || e.PoseeCabys != (tc.cabys != nil) || !slices.Equal(e.Cabys, append([]string{}, tc.cabys...)) {
			t.Errorf("%s: %+v %v", tc.numero, e, err)
		}
	}
	// Without a list of codes the answer has no cabys key at all.
	if _, b := get(t, h.ts, "/fe/ex?autorizacion=AL-00012345-24"); bytes.Contains(b, []byte(`"cabys"`)) || !bytes.Contains(b, []byte(`"poseeCabys":false`)) {
		t.Errorf("AL-00012345-24: %s", b)
	}
}

func TestRegistryDollar(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	c := registryClient(t, h.ts, 0)
	ctx := context.Background()

	// Today's, by the sandbox's clock in Costa Rica: t0 is 2026-11-21.
	code, b := get(t, h.ts, "/indicadores/tc/dolar?fecha=2020-01-01")
	r, err := registry.DecodeDollar(b)
	if code != 200 || err != nil || r.Fecha != "2026-11-21" || !r.Venta.GreaterThan(r.Compra) ||
		r.Venta.LessThan(decimalOf(t, "450")) || r.Venta.GreaterThan(decimalOf(t, "550")) || r.Venta.Exponent() < -2 {
		t.Fatalf("today: %d %s %+v %v", code, b, r, err)
	}
	// Late in the evening in Costa Rica it is still that day.
	h.clock.Advance(13 * time.Hour) // 23:30 in Costa Rica, 05:30 UTC the next day
	if _, b := get(t, h.ts, "/indicadores/tc/dolar"); !bytes.Contains(b, []byte(`"2026-11-21"`)) {
		t.Errorf("late evening: %s", b)
	}

	// A past day: the history, the same rate every time, another rate
	// another day.
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, hacienda.CostaRica)
	r1, err1 := c.Rate(ctx, "USD", day)
	r2, err2 := c.Rate(ctx, "USD", day)
	r3, err3 := c.Rate(ctx, "USD", day.AddDate(0, 0, -1))
	if err1 != nil || err2 != nil || err3 != nil || !r1.Venta.Equal(r2.Venta) || !r1.Compra.Equal(r2.Compra) || r1.Fecha != "2026-11-20" || r1.Venta.Equal(r3.Venta) || !r1.Venta.GreaterThan(r1.Compra) {
		t.Fatalf("history: %+v %+v %+v %v %v %v", r1, r2, r3, err1, err2, err3)
	}
	// No rate before 2000, nor for another currency.
	if _, err := c.Rate(ctx, "USD", time.Date(1999, 12, 31, 0, 0, 0, 0, hacienda.CostaRica)); !errors.Is(err, registry.ErrNotRegistered) {
		t.Errorf("1999: %v", err)
	}
	if _, err := c.Rate(ctx, "EUR", day); !errors.Is(err, registry.ErrNotRegistered) {
		t.Errorf("EUR: %v", err)
	}

	// The history's days: each day of the range up to today, none before
	// the first rate.
	code, b = get(t, h.ts, "/indicadores/tc/dolar/historico?d=1999-12-30&h=2000-01-02")
	rates, err := registry.DecodeRates(b)
	if code != 200 || err != nil || len(rates) != 2 || rates[0].Fecha != "2000-01-01" {
		t.Errorf("first days: %d %s", code, b)
	}
	code, b = get(t, h.ts, "/indicadores/tc/dolar/historico?d=2026-11-19&h=2026-12-31")
	if rates, err := registry.DecodeRates(b); code != 200 || err != nil || len(rates) != 3 || rates[2].Fecha != "2026-11-21" {
		t.Errorf("up to today: %d %s", code, b)
	}
	for _, q := range []string{"", "?d=2026-01-01", "?h=2026-01-01", "?D=2026-01-01&H=2026-01-02", "?d=2026-01-02&h=2026-01-01",
		"?d=2025-01-01&h=2026-01-02", "?d=2026-1-1&h=2026-01-02"} {
		if code, b := get(t, h.ts, "/indicadores/tc/dolar/historico"+q); code != 400 || string(bytes.TrimSpace(b)) != `{"code":400,"status":"Bad request"}` {
			t.Errorf("%q: %d %s", q, code, b)
		}
	}
	if code, _ := get(t, h.ts, "/indicadores/tc/dolar/historico?d=2025-01-01&h=2026-01-01"); code != 200 {
		t.Errorf("366 days: %d", code)
	}
}

func decimalOf(t *testing.T, s string) decimal.Decimal {
	t.Helper()
	return decimal.RequireFromString(s)
}

// feDoc is an issued document of root root (consecutivo of type tipo) to a
// receptor, with lines.
func feDoc(n int, tipo, root, receptorTipo, receptorNumero string, lines ...string) (string, []byte) {
	clave, consecutivo := claveFor(n, tipo)
	receptor := ""
	if receptorNumero != "" {
		receptor = `<Receptor><Nombre>Receptor</Nombre><Identificacion><Tipo>` + receptorTipo + `</Tipo><Numero>` + receptorNumero + `</Numero></Identificacion></Receptor>`
	}
	return clave, []byte(`<?xml version="1.0" encoding="UTF-8"?><` + root + ` xmlns="urn:test">` +
		`<Clave>` + clave + `</Clave><NumeroConsecutivo>` + consecutivo + `</NumeroConsecutivo>` +
		`<FechaEmision>` + t0.Format(time.RFC3339) + `</FechaEmision>` +
		`<Emisor><Nombre>Emisor</Nombre><Identificacion><Tipo>02</Tipo><Numero>` + issuerNumero + `</Numero></Identificacion></Emisor>` +
		receptor + `<DetalleServicio>` + strings.Join(lines, "") + `</DetalleServicio>` +
		`<ResumenFactura><TotalComprobante>100.5</TotalComprobante></ResumenFactura></` + root + `>`)
}

// line is a LineaDetalle with its CAByS code and, when numero is set, an
// exoneration of type tipo.
func line(n int, cabys, tipo, numero, tarifa string) string {
	exo := ""
	if numero != "" {
		exo = `<Exoneracion><TipoDocumentoEX1>` + tipo + `</TipoDocumentoEX1><NumeroDocumento>` + numero + `</NumeroDocumento>` +
			`<NombreInstitucion>01</NombreInstitucion><FechaEmisionEX>2026-01-10T00:00:00-06:00</FechaEmisionEX>` +
			`<TarifaExonerada>` + tarifa + `</TarifaExonerada></Exoneracion>`
	}
	return fmt.Sprintf(`<LineaDetalle><NumeroLinea>%d</NumeroLinea><CodigoCABYS>%s</CodigoCABYS><Cantidad>1</Cantidad>`+
		`<Impuesto><Codigo>01</Codigo><CodigoTarifaIVA>08</CodigoTarifaIVA><Tarifa>13</Tarifa>%s</Impuesto></LineaDetalle>`, n, cabys, exo)
}

// verdict submits a document and returns its estado and DetalleMensaje.
func (h *harness) verdict(clave string, xml []byte, receptorTipo, receptorNumero string) (string, string) {
	h.t.Helper()
	var extra map[string]any
	if receptorNumero != "" {
		extra = map[string]any{"receptor": map[string]string{"tipoIdentificacion": receptorTipo, "numeroIdentificacion": receptorNumero}}
	}
	if resp := h.do(http.MethodPost, "/recepcion-sandbox/v1/recepcion", submitJSON(clave, xml, extra)); resp.StatusCode != 202 {
		h.t.Fatalf("submit: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
	}
	code, st := h.status(clave)
	if code != 200 {
		h.t.Fatalf("status: %d", code)
	}
	answer, _ := base64.StdEncoding.DecodeString(st["respuesta-xml"])
	m, err := hacienda.ParseMensajeHacienda(answer)
	if err != nil {
		h.t.Fatalf("answer: %v", err)
	}
	return st["ind-estado"], m.DetalleMensaje
}

// TestRegistryRejections shows each reason the reception rejects a
// document for against the registries, and what it lets through.
func TestRegistryRejections(t *testing.T) {
	h := newHarness(t, sandbox.Options{RegistryChecks: true})
	h.login()
	const buyer = "114440555"
	tests := []struct {
		name              string
		tipo, root        string
		receptorTipo, rec string
		lines             []string
		want              string // "" for aceptado
	}{
		{"registered receptor, exoneration in force", "01", "FacturaElectronica", "01", buyer,
			[]string{line(1, "4321000000200", "04", "AL-00012345-24", "13"), line(2, "8399000000000", "", "", "")}, ""},
		{"unknown receptor", "01", "FacturaElectronica", "02", "3101230000", []string{line(1, "2392000000000", "", "", "")},
			"El receptor con identificación 3101230000 no se encuentra inscrito"},
		{"receptor no inscrito", "01", "FacturaElectronica", "02", "3101239999", []string{line(1, "2392000000000", "", "", "")},
			"(situación: No inscrito)"},
		{"receptor desinscrito", "01", "FacturaElectronica", "02", "3101777777", []string{line(1, "2392000000000", "", "", "")},
			"(situación: Desinscrito oficio)"},
		{"a tiquete to an unknown receptor", "04", "TiqueteElectronico", "02", "3101230000", []string{line(1, "2392000000000", "", "", "")}, ""},
		{"a foreign receptor", "01", "FacturaElectronica", "05", "US99887766", []string{line(1, "2392000000000", "", "", "")}, ""},
		{"CAByS not in force", "01", "FacturaElectronica", "01", buyer, []string{line(1, "2392000000000", "", "", ""), line(2, "1234567890999", "", "", "")},
			"El código CAByS 1234567890999 de la línea 2 no existe en el catálogo"},
		{"CAByS not in force, in a credit note", "03", "NotaCreditoElectronica", "01", buyer, []string{line(1, "8399999999999", "", "", "")},
			"El código CAByS 8399999999999 de la línea 1 no existe"},
		{"unknown exoneration", "01", "FacturaElectronica", "01", buyer, []string{line(1, "2392000000000", "04", "AL-09999999-26", "13")},
			"La exoneración AL-09999999-26 de la línea 1 no existe en el registro de exoneraciones"},
		{"another taxpayer's exoneration", "01", "FacturaElectronica", "01", buyer, []string{line(1, "2392000000000", "04", "AL-00100004-26", "13")},
			"La exoneración AL-00100004-26 de la línea 1 pertenece a otro contribuyente"},
		{"expired exoneration", "01", "FacturaElectronica", "01", buyer, []string{line(1, "2392000000000", "04", "AL-00100003-23", "13")},
			"La exoneración AL-00100003-23 de la línea 1 está vencida: su fecha de vencimiento (2024-12-31)"},
		{"the documented example, expired", "01", "FacturaElectronica", "01", "401760738", []string{line(1, "7211200000100", "04", "AL-00460853-20", "13")},
			"está vencida"},
		{"exonerated rate above the authorised one", "01", "FacturaElectronica", "01", buyer, []string{line(1, "2111100000100", "04", "AL-00100002-26", "13")},
			"La TarifaExonerada (13) de la línea 1 supera el porcentaje autorizado (10) por la exoneración AL-00100002-26"},
		{"exonerated rate within the authorised one", "01", "FacturaElectronica", "01", buyer, []string{line(1, "2111100000100", "04", "AL-00100002-26", "10")}, ""},
		{"CAByS not in the authorisation's list", "01", "FacturaElectronica", "02", "3102987654", []string{line(1, "2392000000000", "04", "AL-00100001-26", "13")},
			"El código CAByS 2392000000000 de la línea 1 no está incluido en la exoneración AL-00100001-26"},
		{"CAByS in the authorisation's list", "01", "FacturaElectronica", "02", "3102987654", []string{line(1, "8314100000000", "04", "AL-00100001-26", "13")}, ""},
		{"type 11", "01", "FacturaElectronica", "01", buyer, []string{line(1, "2392000000000", "11", "AL-00100005-26", "13")}, ""},
		{"a type the registry does not hold", "01", "FacturaElectronica", "01", buyer, []string{line(1, "2392000000000", "03", "XYZ-1", "13")}, ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			clave, xml := feDoc(i+1, tc.tipo, tc.root, tc.receptorTipo, tc.rec, tc.lines...)
			estado, detalle := h.verdict(clave, xml, tc.receptorTipo, tc.rec)
			if tc.want == "" {
				if estado != "aceptado" {
					t.Fatalf("%s: %s", estado, detalle)
				}
				return
			}
			if estado != "rechazado" || !strings.Contains(detalle, tc.want) {
				t.Fatalf("%s: %s, want %q", estado, detalle, tc.want)
			}
		})
	}

	// Off, the same refusals pass.
	off := newHarness(t, sandbox.Options{})
	off.login()
	clave, xml := feDoc(1, "01", "FacturaElectronica", "02", "3101230000", line(1, "1234567890999", "04", "AL-09999999-26", "13"))
	if estado, detalle := off.verdict(clave, xml, "02", "3101230000"); estado != "aceptado" {
		t.Fatalf("checks off: %s %s", estado, detalle)
	}
}

// TestRegistryRateLimit blocks an address that asks too often, for the
// block's time, and counts the registry's calls only.
func TestRegistryRateLimit(t *testing.T) {
	limit := sandbox.RegistryLimit{Burst: 5, BurstWindow: 5 * time.Second, Sustained: 8, SustainedWindow: 2 * time.Minute, Block: 10 * time.Minute}
	h := newHarness(t, sandbox.Options{RegistryLimit: limit})
	c := registryClient(t, h.ts, 0)
	ctx := context.Background()
	ask := func() error { _, err := c.Taxpayer(ctx, "114440555"); return err }

	for i := range 5 {
		if err := ask(); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	// The token service is another service: not counted.
	for range 10 {
		h.login()
	}
	err := ask()
	if !unavailable(err, http.StatusTooManyRequests) || !registry.Unavailable(err) {
		t.Fatalf("sixth call in 5 s: %v", err)
	}
	// Blocked for ten minutes, whatever the endpoint.
	h.clock.Advance(9*time.Minute + 59*time.Second)
	if code, _ := get(t, h.ts, "/indicadores/tc/dolar"); code != 429 {
		t.Fatalf("blocked: %d", code)
	}
	h.clock.Advance(time.Second)
	if err := ask(); err != nil {
		t.Fatalf("after the block: %v", err)
	}
	// Sustained: one call every 2 s stays under the burst, and the ninth
	// within two minutes is refused.
	for i := range 7 {
		h.clock.Advance(2 * time.Second)
		if err := ask(); err != nil {
			t.Fatalf("sustained call %d: %v", i+2, err)
		}
	}
	h.clock.Advance(2 * time.Second)
	if err := ask(); !unavailable(err, http.StatusTooManyRequests) {
		t.Fatalf("ninth call in 2 min: %v", err)
	}
	st := h.ts.Stats()
	if st.RegistryBlocked != 3 || st.RegistryCalls[sandbox.RegistryTaxpayers] != 15 || st.RegistryCalls[sandbox.RegistryDollar] != 1 ||
		st.RegistryCalls[sandbox.RegistryCabys] != 0 {
		t.Fatalf("stats %+v", st)
	}

	// Without a limit, nothing is blocked.
	free := newHarness(t, sandbox.Options{})
	fc := registryClient(t, free.ts, 0)
	for i := range 200 {
		if _, err := fc.Cabys(ctx, "2392000000000"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if got := free.ts.Stats().RegistryCalls[sandbox.RegistryCabys]; got != 200 {
		t.Fatalf("cabys calls %d", got)
	}

	if _, err := sandbox.New(sandbox.Options{RegistryLimit: sandbox.RegistryLimit{Burst: 1}}); err == nil {
		t.Error("a count without its window was accepted")
	}
}

// TestRegistryFaults makes the registry fail and stall, at start and
// through PUT /_sandbox/faults, without touching the reception API.
func TestRegistryFaults(t *testing.T) {
	h := newHarness(t, sandbox.Options{Faults: sandbox.Faults{RegistryStatus: 503}})
	c := registryClient(t, h.ts, 0)
	ctx := context.Background()
	if _, err := c.Exoneration(ctx, "AL-00012345-24"); !unavailable(err, 503) {
		t.Fatalf("503: %v", err)
	}
	if code, b := get(t, h.ts, "/indicadores/tc/dolar/historico?d=2026-01-01&h=2026-01-02"); code != 503 || !sameJSON(t, b, readReal(t, "historico-503.json")) {
		t.Fatalf("503 body: %d %s", code, b)
	}
	h.login() // the token service still answers

	put := func(body string) {
		t.Helper()
		resp := h.do(http.MethodPut, "/_sandbox/faults", []byte(body))
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("PUT faults %s: %d %s", body, resp.StatusCode, b)
		}
	}
	put(`{"registryStatus": 500}`)
	if _, err := c.Cabys(ctx, "2392000000000"); !unavailable(err, 500) {
		t.Fatalf("500: %v", err)
	}
	put(`{"registryLatency": "2s"}`)
	quick := registryClient(t, h.ts, 100*time.Millisecond)
	start := time.Now()
	if _, err := quick.Taxpayer(ctx, "114440555"); !unavailable(err, 0) || time.Since(start) > time.Second {
		t.Fatalf("stalled: %v after %v", err, time.Since(start))
	}
	put(`{}`)
	if _, err := c.Taxpayer(ctx, "114440555"); err != nil {
		t.Fatalf("no faults: %v", err)
	}
	if err := h.ts.SetFaults(sandbox.Faults{RegistryStatus: 200}); err == nil {
		t.Error("status 200 accepted as a fault")
	}
	// An outage of the reception API leaves the registry up.
	if err := h.ts.SetFaults(sandbox.Faults{Outage: true, OutageStatus: 503}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Taxpayer(ctx, "114440555"); err != nil {
		t.Fatalf("during a reception outage: %v", err)
	}
	if got := h.ts.Stats().RegistryCalls; got[sandbox.RegistryExonerations] != 1 || got[sandbox.RegistryDollarHistory] != 1 ||
		got[sandbox.RegistryCabys] != 1 || got[sandbox.RegistryTaxpayers] != 3 {
		t.Fatalf("calls %v", got)
	}
}
