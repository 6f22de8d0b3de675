package sandbox_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/sandbox"
	"facturad/hacienda/xmlcheck"
)

var (
	quiet = slog.New(slog.DiscardHandler)
	t0    = time.Date(2026, 11, 21, 10, 30, 0, 0, hacienda.CostaRica)
)

const (
	issuerTipo   = "02"
	issuerNumero = "3101123456"
)

// testUser is a staging user name, as the token service requires.
const testUser = "cpj-3-101-123456@stag.comprobanteselectronicos.go.cr"

func claveFor(n int, docType string) (clave, consecutivo string) {
	consecutivo = "00100001" + docType + fmt.Sprintf("%010d", n)
	return "506" + t0.Format("020106") + "00" + issuerNumero + consecutivo + "1" + fmt.Sprintf("%08d", n), consecutivo
}

// doc is a small document carrying the fields the sandbox cross-checks.
// fecha overrides FechaEmision when not empty.
func doc(root, clave, consecutivo, fecha string) []byte {
	if fecha == "" {
		fecha = t0.Format(time.RFC3339)
	}
	return []byte(`<?xml version="1.0" encoding="UTF-8"?><` + root + ` xmlns="urn:test">` +
		`<Clave>` + clave + `</Clave><NumeroConsecutivo>` + consecutivo + `</NumeroConsecutivo>` +
		`<FechaEmision>` + fecha + `</FechaEmision>` +
		`<Emisor><Nombre>Emisor</Nombre><Identificacion><Tipo>02</Tipo><Numero>` + issuerNumero + `</Numero></Identificacion></Emisor>` +
		`<ResumenFactura><TotalComprobante>100.5</TotalComprobante></ResumenFactura></` + root + `>`)
}

type harness struct {
	t     *testing.T
	ts    *sandbox.TestServer
	clock *sandbox.ManualClock
	token string
}

func newHarness(t *testing.T, o sandbox.Options) *harness {
	t.Helper()
	clock := sandbox.NewManualClock(t0)
	if o.Clock == nil {
		o.Clock = clock
	}
	if o.Checks == nil {
		o.Checks = &sandbox.Checks{}
	}
	o.Logger = quiet
	h := &harness{t: t, ts: sandbox.NewTestServer(t, o), clock: clock}
	return h
}

// grant posts a form to the token endpoint and returns the status and the
// decoded JSON.
func (h *harness) grant(form url.Values) (int, map[string]any) {
	h.t.Helper()
	resp, err := http.PostForm(h.ts.TokenURL, form)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func (h *harness) login() string {
	h.t.Helper()
	code, m := h.grant(url.Values{"grant_type": {"password"}, "client_id": {"api-stag"}, "username": {testUser}, "password": {"p"}})
	if code != 200 {
		h.t.Fatalf("login: %d %v", code, m)
	}
	h.token = m["access_token"].(string)
	return h.token
}

func (h *harness) do(method, path string, body []byte) *http.Response {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.ts.URL+path, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if h.token != "" {
		req.Header.Set("Authorization", "bearer "+h.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func submitJSON(clave string, xml []byte, extra map[string]any) []byte {
	m := map[string]any{
		"clave":          clave,
		"fecha":          t0.Format(time.RFC3339),
		"emisor":         map[string]string{"tipoIdentificacion": issuerTipo, "numeroIdentificacion": issuerNumero},
		"comprobanteXml": base64.StdEncoding.EncodeToString(xml),
	}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return b
}

func (h *harness) submit(clave string, xml []byte) *http.Response {
	return h.do(http.MethodPost, "/recepcion-sandbox/v1/recepcion", submitJSON(clave, xml, nil))
}

func (h *harness) status(key string) (int, map[string]string) {
	h.t.Helper()
	resp := h.do(http.MethodGet, "/recepcion-sandbox/v1/recepcion/"+key, nil)
	var m map[string]string
	if resp.StatusCode == 200 {
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			h.t.Fatal(err)
		}
	}
	return resp.StatusCode, m
}

func TestTokenService(t *testing.T) {
	h := newHarness(t, sandbox.Options{Users: map[string]string{testUser: "p@ss w/rd+&="}})
	login := url.Values{"grant_type": {"password"}, "client_id": {"api-stag"}, "username": {testUser}, "password": {"p@ss w/rd+&="}}

	resp, err := http.PostForm(h.ts.TokenURL, login)
	if err != nil {
		t.Fatal(err)
	}
	var tok map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	if tok["expires_in"] != 300.0 || tok["refresh_expires_in"] != 36000.0 || tok["token_type"] != "bearer" ||
		tok["access_token"] == "" || tok["refresh_token"] == "" || tok["not-before-policy"] != 0.0 {
		t.Fatalf("token answer = %v", tok)
	}

	// A refresh an hour later: the session's remaining life.
	h.clock.Advance(time.Hour)
	code, ref := h.grant(url.Values{"grant_type": {"refresh_token"}, "client_id": {"api-stag"}, "refresh_token": {tok["refresh_token"].(string)}})
	if code != 200 || ref["refresh_expires_in"] != 32400.0 || ref["access_token"] == tok["access_token"] {
		t.Fatalf("refresh: %d %v", code, ref)
	}

	for name, tc := range map[string]struct {
		form url.Values
		code int
		err  string
	}{
		"error/wrong password":   {url.Values{"grant_type": {"password"}, "client_id": {"api-stag"}, "username": login["username"], "password": {"nope"}}, 401, "invalid_grant"},
		"error/unknown user":     {url.Values{"grant_type": {"password"}, "client_id": {"api-stag"}, "username": {"x"}, "password": {"y"}}, 401, "invalid_grant"},
		"error/wrong client":     {url.Values{"grant_type": {"password"}, "client_id": {"api-prod"}, "username": login["username"], "password": login["password"]}, 401, "invalid_client"},
		"error/no grant type":    {url.Values{"client_id": {"api-stag"}}, 400, "invalid_request"},
		"error/unsupported":      {url.Values{"grant_type": {"client_credentials"}, "client_id": {"api-stag"}}, 400, "unsupported_grant_type"},
		"error/unknown refresh":  {url.Values{"grant_type": {"refresh_token"}, "client_id": {"api-stag"}, "refresh_token": {"forged"}}, 400, "invalid_grant"},
		"error/refresh too late": {url.Values{"grant_type": {"refresh_token"}, "client_id": {"api-stag"}, "refresh_token": {ref["refresh_token"].(string)}}, 400, "invalid_grant"},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "error/refresh too late" {
				h.clock.Advance(10 * time.Hour)
			}
			code, m := h.grant(tc.form)
			if code != tc.code || m["error"] != tc.err || m["error_description"] == "" {
				t.Fatalf("%d %v, want %d %s", code, m, tc.code, tc.err)
			}
		})
	}

	// A body that is not a form.
	resp, err = http.Post(h.ts.TokenURL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("JSON body: %d", resp.StatusCode)
	}
}

func TestTokenLifetimesConfigurable(t *testing.T) {
	h := newHarness(t, sandbox.Options{AccessTokenLifetime: 5 * time.Second, RefreshTokenLifetime: time.Minute})
	code, m := h.grant(url.Values{"grant_type": {"password"}, "client_id": {"api-stag"}, "username": {testUser}, "password": {"thing"}})
	if code != 200 || m["expires_in"] != 5.0 || m["refresh_expires_in"] != 60.0 {
		t.Fatalf("%d %v", code, m)
	}
	h.token = m["access_token"].(string)
	clave, _ := claveFor(1, "01")
	if code, _ := h.status(clave); code != 404 {
		t.Fatalf("fresh token: %d", code)
	}
	h.clock.Advance(5 * time.Second)
	if code, _ := h.status(clave); code != 401 {
		t.Fatalf("expired token: %d, want 401", code)
	}
}

func TestReception(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	clave, cons := claveFor(1, "01")
	xml := doc("FacturaElectronica", clave, cons, "")

	// No token, a forged token: 401 with a bearer challenge.
	for _, tok := range []string{"", "forged"} {
		h.token = tok
		resp := h.submit(clave, xml)
		if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("token %q: %d", tok, resp.StatusCode)
		}
	}
	h.login()
	resp := h.submit(clave, xml)
	if resp.StatusCode != 202 {
		t.Fatalf("submit: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
	}
	if want := h.ts.URL + "/recepcion-sandbox/v1/recepcion/" + clave; resp.Header.Get("Location") != want {
		t.Fatalf("Location = %q, want %q", resp.Header.Get("Location"), want)
	}

	// The status resource uses the hyphenated names.
	resp = h.do(http.MethodGet, "/recepcion-sandbox/v1/recepcion/"+clave, nil)
	raw, _ := io.ReadAll(resp.Body)
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"clave", "fecha", "ind-estado", "respuesta-xml"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("status answer has no %q: %s", k, raw)
		}
	}
	if len(keys) != 4 {
		t.Errorf("status answer has extra keys: %s", raw)
	}

	otherClave, otherCons := claveFor(2, "01")
	otherXML := doc("FacturaElectronica", otherClave, otherCons, "")
	for name, tc := range map[string]struct {
		body  []byte
		cause string
	}{
		"error/duplicate":                     {submitJSON(clave, xml, nil), "ya fue recibido"},
		"error/not json":                      {[]byte(`{"clave":`), "no es un JSON válido"},
		"error/no clave":                      {submitJSON(otherClave, otherXML, map[string]any{"clave": nil}), "50 dígitos"},
		"error/short clave":                   {submitJSON(otherClave[:49], otherXML, nil), "50 dígitos"},
		"error/no fecha":                      {submitJSON(otherClave, otherXML, map[string]any{"fecha": nil}), "fecha es requerida"},
		"error/fecha not RFC 3339":            {submitJSON(otherClave, otherXML, map[string]any{"fecha": "21/11/2026"}), "formato requerido"},
		"error/no emisor":                     {submitJSON(otherClave, otherXML, map[string]any{"emisor": nil}), "emisor es requerida"},
		"error/bad emisor type":               {submitJSON(otherClave, otherXML, map[string]any{"emisor": map[string]string{"tipoIdentificacion": "9", "numeroIdentificacion": issuerNumero}}), "tipo de identificación del emisor"},
		"error/emisor id too long":            {submitJSON(otherClave, otherXML, map[string]any{"emisor": map[string]string{"tipoIdentificacion": "02", "numeroIdentificacion": "1234567890123"}}), "entre 1 y 12"},
		"error/bad receptor":                  {submitJSON(otherClave, otherXML, map[string]any{"receptor": map[string]string{"tipoIdentificacion": "01"}}), "del receptor"},
		"error/no xml":                        {submitJSON(otherClave, otherXML, map[string]any{"comprobanteXml": nil}), "comprobanteXml es requerido"},
		"error/xml not base64":                {submitJSON(otherClave, otherXML, map[string]any{"comprobanteXml": "<Factura/>"}), "base64"},
		"error/xml not well formed":           {submitJSON(otherClave, []byte("<a><b></a>"), nil), "bien formado"},
		"error/clave differs from xml":        {submitJSON(otherClave, xml, nil), "clave del comprobante no coincide"},
		"error/emisor differs from xml":       {submitJSON(otherClave, otherXML, map[string]any{"emisor": map[string]string{"tipoIdentificacion": "02", "numeroIdentificacion": "3101999999"}}), "no coincide con la del emisor del comprobante"},
		"error/emisor type of another length": {submitJSON(otherClave, otherXML, map[string]any{"emisor": map[string]string{"tipoIdentificacion": "01", "numeroIdentificacion": issuerNumero}}), "longitud del tipo 01"},
		"error/emisor type differs":           {submitJSON(otherClave, otherXML, map[string]any{"emisor": map[string]string{"tipoIdentificacion": "04", "numeroIdentificacion": issuerNumero}}), "(04 3101123456) no coincide con la del emisor del comprobante (02 3101123456)"},
		"error/consecutivoReceptor on FE":     {submitJSON(otherClave, otherXML, map[string]any{"consecutivoReceptor": "00100001050000000001"}), "consecutivoReceptor solo se indica"},
	} {
		t.Run(name, func(t *testing.T) {
			resp := h.do(http.MethodPost, "/recepcion-sandbox/v1/recepcion", tc.body)
			if cause := resp.Header.Get("X-Error-Cause"); resp.StatusCode != 400 || !strings.Contains(cause, tc.cause) {
				t.Fatalf("%d %q, want 400 with a cause containing %q", resp.StatusCode, cause, tc.cause)
			}
		})
	}
	// Zero padding of the issuer's id is accepted, as clients send both.
	resp = h.do(http.MethodPost, "/recepcion-sandbox/v1/recepcion", submitJSON(otherClave, otherXML,
		map[string]any{"emisor": map[string]string{"tipoIdentificacion": "02", "numeroIdentificacion": "00" + issuerNumero}}))
	if resp.StatusCode != 202 {
		t.Fatalf("padded emisor: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
	}
	// Content type.
	req, _ := http.NewRequest(http.MethodPost, h.ts.APIURL+"/recepcion", strings.NewReader("x"))
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain: %v %v, want 415", resp, err)
	}
	// Unknown and malformed keys on status.
	unknown, _ := claveFor(99, "01")
	if code, _ := h.status(unknown); code != 404 {
		t.Fatalf("unknown clave: %d", code)
	}
	if code, _ := h.status("12345"); code != 400 {
		t.Fatalf("malformed clave: %d", code)
	}
	if s := h.ts.Stats(); s.Submissions != 2 || s.Duplicates != 1 || s.Unauthorized != 2 || s.NotFound != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestConsistencyRejections(t *testing.T) {
	// Dates around the clave's day, judged apart from the reception time
	// (TestFechaEmisionWindow).
	h := newHarness(t, sandbox.Options{FechaAhead: -1, FechaBehind: -1})
	h.login()
	n := 0
	for name, tc := range map[string]struct {
		root, docType, fecha string
		mutate               func(clave, cons string) (string, string)
		want                 string
	}{
		"ok/factura":                   {"FacturaElectronica", "01", "", nil, ""},
		"ok/tiquete":                   {"TiqueteElectronico", "04", "", nil, ""},
		"ok/late evening is same day":  {"FacturaElectronica", "01", "2026-11-21T23:59:00-06:00", nil, ""},
		"error/date differs":           {"FacturaElectronica", "01", "2026-11-22T00:00:01-06:00", nil, "La fecha de la clave"},
		"ok/utc on the same local day": {"FacturaElectronica", "01", "2026-11-22T05:00:00Z", nil, ""},
		"error/type differs from root": {"TiqueteElectronico", "01", "", nil, "El tipo de documento no corresponde"},
		"error/unknown root":           {"Factura", "01", "", nil, "El tipo de documento no corresponde"},
		"error/consecutivo differs":    {"FacturaElectronica", "01", "", func(c, k string) (string, string) { return c, k[:10] + "8888888888" }, "NumeroConsecutivo no coincide"},
		"error/bad situacion":          {"FacturaElectronica", "01", "", func(c, k string) (string, string) { return c[:41] + "7" + c[42:], k }, "situación"},
		"error/bad fecha in xml":       {"FacturaElectronica", "01", "ayer", nil, "FechaEmision"},
		"error/country is not 506":     {"FacturaElectronica", "01", "", func(c, k string) (string, string) { return "507" + c[3:], k }, "506"},
	} {
		t.Run(name, func(t *testing.T) {
			n++
			clave, cons := claveFor(n, tc.docType)
			if tc.mutate != nil {
				clave, cons = tc.mutate(clave, cons)
			}
			if resp := h.submit(clave, doc(tc.root, clave, cons, tc.fecha)); resp.StatusCode != 202 {
				t.Fatalf("submit: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
			}
			code, st := h.status(clave)
			if code != 200 {
				t.Fatal(code)
			}
			answer, _ := base64.StdEncoding.DecodeString(st["respuesta-xml"])
			validateAnswer(t, st["respuesta-xml"])
			if tc.want == "" {
				if st["ind-estado"] != "aceptado" {
					t.Fatalf("%s: %s", st["ind-estado"], answer)
				}
				return
			}
			if st["ind-estado"] != "rechazado" || !strings.Contains(string(answer), tc.want) {
				t.Fatalf("%s, want rechazado with %q:\n%s", st["ind-estado"], tc.want, answer)
			}
		})
	}
}

// mrDoc is a receiver's message about clave, in the v4.4 namespace and
// element order.
func mrDoc(clave, emisor, receptor, consR, total string) []byte {
	return []byte(`<MensajeReceptor xmlns="` + hacienda.NamespaceMensajeReceptor + `"><Clave>` + clave + `</Clave><NumeroCedulaEmisor>` + emisor +
		`</NumeroCedulaEmisor><FechaEmisionDoc>` + t0.Format(time.RFC3339) + `</FechaEmisionDoc><Mensaje>1</Mensaje>` +
		`<TotalFactura>` + total + `</TotalFactura><NumeroCedulaReceptor>` + receptor + `</NumeroCedulaReceptor>` +
		`<NumeroConsecutivoReceptor>` + consR + `</NumeroConsecutivoReceptor></MensajeReceptor>`)
}

func TestMensajeReceptor(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	h.login()
	const buyer = "112340567"
	clave, cons := claveFor(1, "01")
	fe := partyDoc("FacturaElectronica", clave, cons, [2]string{issuerTipo, issuerNumero}, [2]string{"01", buyer})
	body := submitJSON(clave, fe, map[string]any{"receptor": party("01", buyer)})
	if resp := h.do(http.MethodPost, "/recepcion-sandbox/v1/recepcion", body); resp.StatusCode != 202 {
		t.Fatalf("FE: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
	}
	if code, st := h.status(clave); code != 200 || st["ind-estado"] != "aceptado" {
		t.Fatalf("FE: %d %v", code, st)
	}
	send := func(clave, consR string, xml []byte, receptor string) *http.Response {
		t.Helper()
		return h.do(http.MethodPost, "/recepcion-sandbox/v1/recepcion", submitJSON(clave, xml, map[string]any{
			"receptor":            party("01", receptor),
			"consecutivoReceptor": consR,
		}))
	}
	consR := "00100001050000000009"
	if resp := send(clave, consR, mrDoc(clave, issuerNumero, buyer, consR, "100.50"), buyer); resp.StatusCode != 202 {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
	}
	if code, st := h.status(clave); code != 200 || st["ind-estado"] != "aceptado" {
		t.Fatalf("the bare clave is still the FE's: %d %v", code, st)
	}
	code, st := h.status(clave + "-" + consR)
	if code != 200 || st["ind-estado"] != "aceptado" || st["clave"] != clave+"-"+consR {
		t.Fatalf("%d %v", code, st)
	}
	validateAnswer(t, st["respuesta-xml"])

	// Without consecutivoReceptor it is malformed.
	if resp := h.do(http.MethodPost, "/recepcion-sandbox/v1/recepcion", submitJSON(clave, mrDoc(clave, issuerNumero, buyer, consR, "100.5"), nil)); resp.StatusCode != 400 {
		t.Fatalf("%d", resp.StatusCode)
	}
	// One message per document and receiver: a second one, with another
	// consecutivo, is refused at reception.
	cons2 := "00100001070000000010"
	resp := send(clave, cons2, mrDoc(clave, issuerNumero, buyer, cons2, "100.5"), buyer)
	if cause := resp.Header.Get("X-Error-Cause"); resp.StatusCode != 400 || !strings.Contains(cause, consR) {
		t.Fatalf("second message: %d %q", resp.StatusCode, cause)
	}

	// Messages the tax authority takes but rejects, each with its reason.
	unknown, _ := claveFor(2, "01")
	rejected := []struct {
		name, clave, consR, emisor, receptor, total, want string
	}{
		{"unknown document", unknown, "00100001050000000011", issuerNumero, buyer, "100.5", "no ha sido recibido"},
		{"another receptor", clave, "00100001050000000012", issuerNumero, "111111111", "100.5", "NumeroCedulaReceptor"},
		// Another receiver (so that it is not a second message), whose
		// total is wrong as well as its receptor.
		{"another total", clave, "00100001050000000013", issuerNumero, "222222222", "99", "TotalFactura"},
	}
	for _, tc := range rejected {
		receptor := tc.receptor
		resp := send(tc.clave, tc.consR, mrDoc(tc.clave, tc.emisor, receptor, tc.consR, tc.total), receptor)
		if resp.StatusCode != 202 {
			t.Fatalf("%s: %d %s", tc.name, resp.StatusCode, resp.Header.Get("X-Error-Cause"))
		}
		code, st := h.status(tc.clave + "-" + tc.consR)
		if code != 200 || st["ind-estado"] != "rechazado" {
			t.Fatalf("%s: %d %v", tc.name, code, st)
		}
		answer, _ := base64.StdEncoding.DecodeString(st["respuesta-xml"])
		m, err := hacienda.ParseMensajeHacienda(answer)
		if err != nil || !strings.Contains(m.DetalleMensaje, tc.want) {
			t.Fatalf("%s: answer %v %+v, want %q", tc.name, err, m, tc.want)
		}
	}
}

func TestDeterministicFaults(t *testing.T) {
	run := func(seed uint64) string {
		h := newHarness(t, sandbox.Options{Seed: seed, Faults: sandbox.Faults{ErrorRates: map[int]float64{500: 0.2, 503: 0.2}}})
		h.login()
		clave, _ := claveFor(1, "01")
		var b strings.Builder
		for range 200 {
			code, _ := h.status(clave)
			fmt.Fprintf(&b, "%d,", code)
		}
		return b.String()
	}
	a, b, c := run(1), run(1), run(2)
	if a != b {
		t.Fatal("the same seed gave different faults")
	}
	if a == c {
		t.Fatal("different seeds gave the same faults")
	}
	for _, code := range []string{"500,", "503,"} {
		if n := strings.Count(a, code); n < 20 || n > 60 {
			t.Fatalf("%d answers %s of 200 at rate 0.2", n, code)
		}
	}
	if n := strings.Count(a, "404,"); n < 90 || n > 150 {
		t.Fatalf("%d answers passed of 200 at rate 0.6", n)
	}
}

func TestFaultValidation(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	for name, body := range map[string]string{
		"error/2xx rate":        `{"errorRates": {"200": 0.5}}`,
		"error/rate above 1":    `{"errorRates": {"500": 1.5}}`,
		"error/rates sum":       `{"errorRates": {"500": 0.6, "503": 0.6}}`,
		"error/drop mode":       `{"dropMode": "explode"}`,
		"error/regexp":          `{"rejectClaves": "("}`,
		"error/token refusal":   `{"tokenRefusal": 200}`,
		"error/unknown field":   `{"latencia": "1s"}`,
		"error/duration":        `{"latency": "soon"}`,
		"error/negative reject": `{"rejectNext": -1}`,
	} {
		t.Run(name, func(t *testing.T) {
			resp := h.do(http.MethodPut, "/_sandbox/faults", []byte(body))
			if resp.StatusCode != 400 {
				t.Fatalf("%d", resp.StatusCode)
			}
		})
	}
	if _, err := sandbox.New(sandbox.Options{Faults: sandbox.Faults{DropRate: 2}}); err == nil {
		t.Fatal("New accepted a drop rate of 2")
	}
	resp := h.do(http.MethodPut, "/_sandbox/faults", []byte(`{"latency": 0.25, "latencyJitter": "100ms", "stuckRate": 0.5}`))
	if resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	if f := h.ts.Faults(); f.Latency != sandbox.Duration(250*time.Millisecond) || f.StuckRate != 0.5 {
		t.Fatalf("%+v", f)
	}
}

func TestAdmin(t *testing.T) {
	h := newHarness(t, sandbox.Options{AdminToken: "adm"})
	h.token = ""
	if resp := h.do(http.MethodGet, "/_sandbox/stats", nil); resp.StatusCode != 401 {
		t.Fatalf("without the admin token: %d", resp.StatusCode)
	}
	h.token = "adm"
	if resp := h.do(http.MethodPost, "/_sandbox/users", []byte(`{"username":"cpf-01-1111-1111@stag.comprobanteselectronicos.go.cr","password":"p1"}`)); resp.StatusCode != 204 {
		t.Fatalf("add user: %d", resp.StatusCode)
	}
	// Now only registered users log in.
	if code, _ := h.grant(url.Values{"grant_type": {"password"}, "client_id": {"api-stag"}, "username": {"cpf-01-2222-2222@stag.comprobanteselectronicos.go.cr"}, "password": {"x"}}); code != 401 {
		t.Fatalf("unregistered user: %d", code)
	}
	code, m := h.grant(url.Values{"grant_type": {"password"}, "client_id": {"api-stag"}, "username": {"cpf-01-1111-1111@stag.comprobanteselectronicos.go.cr"}, "password": {"p1"}})
	if code != 200 {
		t.Fatal(code)
	}
	h.token = m["access_token"].(string)
	clave, cons := claveFor(1, "01")
	xml := doc("FacturaElectronica", clave, cons, "")
	if resp := h.submit(clave, xml); resp.StatusCode != 202 {
		t.Fatal(resp.StatusCode)
	}
	h.token = "adm"
	resp := h.do(http.MethodGet, "/_sandbox/received", nil)
	var rec []sandbox.Received
	_ = json.NewDecoder(resp.Body).Decode(&rec)
	if len(rec) != 1 || rec[0].Clave != clave || rec[0].User != "cpf-01-1111-1111@stag.comprobanteselectronicos.go.cr" {
		t.Fatalf("received = %+v", rec)
	}
	resp = h.do(http.MethodGet, "/_sandbox/received/"+clave+"/xml", nil)
	got, _ := io.ReadAll(resp.Body)
	if !bytes.Equal(got, xml) {
		t.Fatalf("xml = %s", got)
	}
	resp = h.do(http.MethodGet, "/_sandbox/certificate", nil)
	pem, _ := io.ReadAll(resp.Body)
	if !bytes.HasPrefix(pem, []byte("-----BEGIN CERTIFICATE-----")) {
		t.Fatalf("certificate: %s", pem)
	}
	if resp := h.do(http.MethodPost, "/_sandbox/revoke-tokens", nil); resp.StatusCode != 204 {
		t.Fatal(resp.StatusCode)
	}
	resp = h.do(http.MethodGet, "/_sandbox/stats", nil)
	var st sandbox.Stats
	_ = json.NewDecoder(resp.Body).Decode(&st)
	if st.PasswordGrants != 1 || st.Submissions != 1 || st.TokenRefused != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestMaxDocuments(t *testing.T) {
	h := newHarness(t, sandbox.Options{MaxDocuments: 2})
	h.login()
	var claves []string
	for i := 1; i <= 3; i++ {
		clave, cons := claveFor(i, "01")
		claves = append(claves, clave)
		if resp := h.submit(clave, doc("FacturaElectronica", clave, cons, "")); resp.StatusCode != 202 {
			t.Fatal(resp.StatusCode)
		}
	}
	if code, _ := h.status(claves[0]); code != 404 {
		t.Fatalf("oldest document: %d, want forgotten", code)
	}
	if code, _ := h.status(claves[2]); code != 200 {
		t.Fatalf("newest document: %d", code)
	}
}

func TestListen(t *testing.T) {
	s, err := sandbox.Listen("127.0.0.1:0", sandbox.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.PostForm(s.TokenURL(), url.Values{"grant_type": {"password"}, "client_id": {"api-stag"}, "username": {testUser}, "password": {"p"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasSuffix(s.APIURL(), "/recepcion-sandbox/v1") {
		t.Fatalf("%d %s", resp.StatusCode, s.APIURL())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// ListenAndServe returns when its context ends.
	ctx2, cancel2 := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sandbox.ListenAndServe(ctx2, "127.0.0.1:0", sandbox.Options{Logger: quiet}) }()
	time.Sleep(50 * time.Millisecond)
	cancel2()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("ListenAndServe did not return")
	}
}

// validateAnswer validates a base64 MensajeHacienda against the official
// schema with xmllint.
func validateAnswer(t *testing.T, b64 string) {
	t.Helper()
	xml, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(xml) == 0 {
		t.Fatalf("respuesta-xml %q: %v", b64, err)
	}
	xmllint := xmlcheck.Tool(t, "xmllint")
	f := filepath.Join(t.TempDir(), "respuesta.xml")
	if err := os.WriteFile(f, xml, 0o600); err != nil {
		t.Fatal(err)
	}
	xsd := filepath.Join("..", "testdata", "xsd", "2024", "v4.4", "MensajeHacienda_V4.4.xsd")
	if out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, f).CombinedOutput(); err != nil {
		t.Fatalf("MensajeHacienda does not validate: %v\n%s", err, out)
	}
}

// partyDoc is a document with the given parties (tipo, numero; an empty
// receptor leaves it out).
func partyDoc(root, clave, consecutivo string, emisor, receptor [2]string) []byte {
	rec := ""
	if receptor[1] != "" {
		rec = `<Receptor><Nombre>Receptor</Nombre><Identificacion><Tipo>` + receptor[0] + `</Tipo><Numero>` + receptor[1] + `</Numero></Identificacion></Receptor>`
	}
	return []byte(`<?xml version="1.0" encoding="UTF-8"?><` + root + ` xmlns="urn:test">` +
		`<Clave>` + clave + `</Clave><NumeroConsecutivo>` + consecutivo + `</NumeroConsecutivo>` +
		`<FechaEmision>` + t0.Format(time.RFC3339) + `</FechaEmision>` +
		`<Emisor><Nombre>Emisor</Nombre><Identificacion><Tipo>` + emisor[0] + `</Tipo><Numero>` + emisor[1] + `</Numero></Identificacion></Emisor>` +
		rec + `<ResumenFactura><TotalComprobante>100.5</TotalComprobante></ResumenFactura></` + root + `>`)
}

func party(tipo, numero string) map[string]string {
	return map[string]string{"tipoIdentificacion": tipo, "numeroIdentificacion": numero}
}

// TestSubmissionParties pins the reception API's checks of a submission's
// JSON against itself and against the XML it carries, each refusal with
// its cause.
func TestSubmissionParties(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	h.login()
	company := [2]string{issuerTipo, issuerNumero}
	buyer := [2]string{"01", "112340567"}
	seller := [2]string{"01", "205550666"}
	n := 100
	for name, tc := range map[string]struct {
		root, docType    string
		emisor, receptor [2]string
		jsonEmisor       map[string]string
		jsonReceptor     map[string]string // nil: left out
		mangle           func(b64 string) string
		want             int
		cause            string
	}{
		"ok/factura with its receptor": {"FacturaElectronica", "01", company, buyer, party(issuerTipo, issuerNumero), party("01", "112340567"), nil, 202, ""},
		"ok/receptor padded":           {"FacturaElectronica", "01", company, buyer, party(issuerTipo, issuerNumero), party("01", "000112340567"), nil, 202, ""},
		"error/receptor left out":      {"FacturaElectronica", "01", company, buyer, party(issuerTipo, issuerNumero), nil, nil, 400, "indique su identificación"},
		"error/receptor differs":       {"FacturaElectronica", "01", company, buyer, party(issuerTipo, issuerNumero), party("01", "112340568"), nil, 400, "no coincide con la del receptor del comprobante (01 112340567)"},
		"error/receptor not in xml":    {"FacturaElectronica", "01", company, [2]string{}, party(issuerTipo, issuerNumero), party("01", "112340567"), nil, 400, "no tiene receptor identificado"},
		"ok/tiquete without receptor":  {"TiqueteElectronico", "04", company, [2]string{}, party(issuerTipo, issuerNumero), nil, nil, 202, ""},
		"ok/purchase from a person":    {"FacturaElectronicaCompra", "08", seller, company, party("01", "205550666"), party(issuerTipo, issuerNumero), nil, 202, ""},
		"ok/purchase from abroad":      {"FacturaElectronicaCompra", "08", [2]string{"05", "GB123456789"}, company, party("05", "GB123456789"), party(issuerTipo, issuerNumero), nil, 202, ""},
		"error/purchase with the company as emisor": {"FacturaElectronicaCompra", "08", seller, company, party(issuerTipo, issuerNumero), party(issuerTipo, issuerNumero), nil, 400,
			"La identificación del emisor del JSON (02 3101123456) no coincide con la del emisor del comprobante (01 205550666)."},
		"error/foreign emisor on a factura": {"FacturaElectronica", "01", [2]string{"05", "AB1234"}, buyer, party("05", "AB1234"), party("01", "112340567"), nil, 400, "solo se admite en una factura electrónica de compra"},
		"error/física of 8 digits":          {"FacturaElectronica", "01", company, [2]string{"01", "12345678"}, party(issuerTipo, issuerNumero), party("01", "12345678"), nil, 400, "no tiene la longitud del tipo 01"},
		"error/jurídica with letters":       {"FacturaElectronica", "01", company, buyer, party("02", "31011234AB"), party("01", "112340567"), nil, 400, "solo admite dígitos"},
		"error/foreign with punctuation":    {"FacturaElectronicaCompra", "08", [2]string{"05", "GB-1234"}, company, party("05", "GB-1234"), party(issuerTipo, issuerNumero), nil, 400, "solo admite letras y dígitos"},
		"error/base64 with line breaks": {"FacturaElectronica", "01", company, buyer, party(issuerTipo, issuerNumero), party("01", "112340567"),
			func(b string) string { return b[:40] + `\r\n` + b[40:] }, 400, "saltos de línea"},
	} {
		t.Run(name, func(t *testing.T) {
			n++
			clave, cons := claveFor(n, tc.docType)
			xml := partyDoc(tc.root, clave, cons, tc.emisor, tc.receptor)
			extra := map[string]any{"emisor": tc.jsonEmisor}
			if tc.jsonReceptor != nil {
				extra["receptor"] = tc.jsonReceptor
			}
			body := submitJSON(clave, xml, extra)
			if tc.mangle != nil {
				b64 := base64.StdEncoding.EncodeToString(xml)
				body = bytes.Replace(body, []byte(b64), []byte(tc.mangle(b64)), 1)
			}
			resp := h.do(http.MethodPost, "/recepcion-sandbox/v1/recepcion", body)
			cause := resp.Header.Get("X-Error-Cause")
			if resp.StatusCode != tc.want || !strings.Contains(cause, tc.cause) {
				t.Fatalf("%d %q, want %d with a cause containing %q", resp.StatusCode, cause, tc.want, tc.cause)
			}
		})
	}
}

// TestFechaEmisionWindow rejects a document dated after its reception, or
// long before it unless its situación is 3 (sin internet), with the tax
// authority's codes.
func TestFechaEmisionWindow(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	h.login()
	for i, tc := range []struct {
		name      string
		offset    time.Duration // FechaEmision - reception
		situacion byte
		want      string // part of the rejection; empty: aceptado
	}{
		{"ok/at reception", 0, '1', ""},
		{"ok/a few minutes ahead", 4 * time.Minute, '1', ""},
		{"error/6 minutes ahead", 6 * time.Minute, '1', "-11"},
		{"error/6 hours ahead", 6 * time.Hour, '1', `-11, "La FechaEmision del comprobante`},
		{"error/ahead sin internet too", 6 * time.Hour, '3', "-11"},
		{"ok/half an hour old", -30 * time.Minute, '1', ""},
		{"error/61 minutes old", -61 * time.Minute, '1', "-16"},
		{"error/3 days old", -72 * time.Hour, '1', `-16, "El archivo XML fue enviado de manera extemporánea`},
		{"error/3 days old contingencia", -72 * time.Hour, '2', "-16"},
		{"ok/3 days old sin internet", -72 * time.Hour, '3', ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := t0.Add(tc.offset)
			clave, cons := claveAt(f, 200+i, "01", tc.situacion)
			xml := doc("FacturaElectronica", clave, cons, f.Format(time.RFC3339))
			if resp := h.submit(clave, xml); resp.StatusCode != 202 {
				t.Fatalf("submit: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
			}
			_, st := h.status(clave)
			answer, _ := base64.StdEncoding.DecodeString(st["respuesta-xml"])
			switch {
			case tc.want == "" && st["ind-estado"] != "aceptado":
				t.Fatalf("%s: %s", st["ind-estado"], answer)
			case tc.want != "" && (st["ind-estado"] != "rechazado" || !bytes.Contains(answer, []byte(tc.want))):
				t.Fatalf("%s, want rechazado with %q: %s", st["ind-estado"], tc.want, answer)
			}
		})
	}
}

// claveAt is a clave of the test issuer dated f, with the given situación.
func claveAt(f time.Time, n int, docType string, situacion byte) (clave, consecutivo string) {
	consecutivo = "00100001" + docType + fmt.Sprintf("%010d", n)
	return "506" + f.In(hacienda.CostaRica).Format("020106") + "00" + issuerNumero + consecutivo + string(situacion) + fmt.Sprintf("%08d", n), consecutivo
}

// TestUserNamesShapedLikeTheEnvironment refuses, like a wrong password, a
// user name that is not the environment's: a production user against
// staging is the classic mistake.
func TestUserNamesShapedLikeTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name, realm, user string
		want              int
	}{
		{"ok/staging user on staging", "rut-stag", "cpj-3-101-123456@stag.comprobanteselectronicos.go.cr", 200},
		{"ok/física on staging", "rut-stag", "cpf-01-1234-5678@stag.comprobanteselectronicos.go.cr", 200},
		{"ok/upper case", "rut-stag", "CPJ-3-101-123456@STAG.comprobanteselectronicos.go.cr", 200},
		{"error/production user on staging", "rut-stag", "cpf-01-1234-5678@comprobanteselectronicos.go.cr", 401},
		{"error/staging user on production", "rut", "cpj-3-101-123456@stag.comprobanteselectronicos.go.cr", 401},
		{"ok/production user on production", "rut", "cpf-01-1234-5678@comprobanteselectronicos.go.cr", 200},
		{"error/the company's own id", "rut-stag", "3101123456", 401},
		{"error/an e-mail", "rut-stag", "facturas@empresa.cr", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := "api-stag"
			if tc.realm == "rut" {
				client = "api-prod"
			}
			h := newHarness(t, sandbox.Options{Realm: tc.realm, ClientID: client})
			code, m := h.grant(url.Values{"grant_type": {"password"}, "client_id": {client}, "username": {tc.user}, "password": {"p"}})
			if code != tc.want {
				t.Fatalf("%d %v, want %d", code, m, tc.want)
			}
			if code == 401 && m["error_description"] != "Invalid user credentials" {
				t.Errorf("refusal %v, want Keycloak's invalid credentials", m)
			}
		})
	}
}

// TestProcessingDelayAtRunTime shows recibido, then procesando, then the
// verdict, and the delay set to zero while running, for benchmarks.
func TestProcessingDelayAtRunTime(t *testing.T) {
	h := newHarness(t, sandbox.Options{ProcessingDelay: sandbox.DefaultProcessingDelay})
	h.login()
	user := h.token
	states := func(n int) string {
		clave, cons := claveFor(n, "01")
		if resp := h.submit(clave, doc("FacturaElectronica", clave, cons, "")); resp.StatusCode != 202 {
			t.Fatalf("submit: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
		}
		return clave
	}
	estado := func(clave string) string {
		_, st := h.status(clave)
		return st["ind-estado"]
	}
	first := states(300)
	if got := estado(first); got != "recibido" {
		t.Fatalf("at once: %s, want recibido", got)
	}
	h.clock.Advance(1500 * time.Millisecond)
	if got := estado(first); got != "procesando" {
		t.Fatalf("after 1.5s: %s, want procesando", got)
	}
	h.clock.Advance(time.Second)
	if got := estado(first); got != "aceptado" {
		t.Fatalf("after 2.5s: %s, want aceptado", got)
	}

	h.token = "" // the admin endpoints are open without an AdminToken
	for _, tc := range []struct {
		body string
		want int
	}{{`{"delay":"-1s"}`, 400}, {`{"delay":"soon"}`, 400}, {`{"delay":"0s"}`, 200}} {
		if resp := h.do(http.MethodPut, "/_sandbox/processing-delay", []byte(tc.body)); resp.StatusCode != tc.want {
			t.Fatalf("PUT %s: %d, want %d", tc.body, resp.StatusCode, tc.want)
		}
	}
	h.token = user
	if got := estado(states(301)); got != "aceptado" {
		t.Fatalf("with no delay: %s, want aceptado at once", got)
	}
}

// refDoc is a document with a total and one InformacionReferencia to a
// document of type 01 (an FE) with that clave.
func refDoc(root, clave, consecutivo, total, ref string) []byte {
	refEl := ""
	if ref != "" {
		refEl = `<InformacionReferencia><TipoDocIR>01</TipoDocIR><Numero>` + ref + `</Numero></InformacionReferencia>`
	}
	return []byte(`<?xml version="1.0" encoding="UTF-8"?><` + root + ` xmlns="urn:test">` +
		`<Clave>` + clave + `</Clave><NumeroConsecutivo>` + consecutivo + `</NumeroConsecutivo>` +
		`<FechaEmision>` + t0.Format(time.RFC3339) + `</FechaEmision>` +
		`<Emisor><Nombre>Emisor</Nombre><Identificacion><Tipo>02</Tipo><Numero>` + issuerNumero + `</Numero></Identificacion></Emisor>` +
		`<ResumenFactura><TotalComprobante>` + total + `</TotalComprobante></ResumenFactura>` + refEl + `</` + root + `>`)
}

// TestReferencesCrossChecked rejects a note or a payment receipt about a
// document the tax authority never received, and credit notes that together credit more
// than the referenced document's total.
func TestReferencesCrossChecked(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	h.login()
	send := func(root, docType string, n int, total, ref string) (string, string) {
		t.Helper()
		clave, cons := claveFor(n, docType)
		if resp := h.submit(clave, refDoc(root, clave, cons, total, ref)); resp.StatusCode != 202 {
			t.Fatalf("submit: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
		}
		_, st := h.status(clave)
		answer, _ := base64.StdEncoding.DecodeString(st["respuesta-xml"])
		return st["ind-estado"], string(answer)
	}
	factura, _ := claveFor(400, "01")
	if estado, answer := send("FacturaElectronica", "01", 400, "1000.00", ""); estado != "aceptado" {
		t.Fatalf("the invoice: %s %s", estado, answer)
	}
	unknown, _ := claveFor(499, "01")
	for _, tc := range []struct {
		name, root, docType string
		n                   int
		total, ref, want    string // want: part of the rejection; empty: aceptado
	}{
		{"error/credit note about an unknown invoice", "NotaCreditoElectronica", "03", 401, "10", unknown, "no corresponde a un comprobante recibido"},
		{"error/debit note about an unknown invoice", "NotaDebitoElectronica", "02", 402, "10", unknown, "no corresponde a un comprobante recibido"},
		{"ok/debit note about the invoice", "NotaDebitoElectronica", "02", 403, "5000", factura, ""},
		{"error/payment receipt about an unknown invoice", "ReciboElectronicoPago", "10", 408, "100", unknown, "no corresponde a un comprobante recibido"},
		// A receipt credits nothing: the credit notes below still take the whole.
		{"ok/payment receipt about the invoice", "ReciboElectronicoPago", "10", 409, "700", factura, ""},
		{"ok/credit of 600", "NotaCreditoElectronica", "03", 404, "600.00", factura, ""},
		{"error/credit of 500 more", "NotaCreditoElectronica", "03", 405, "500", factura, "excede el saldo del comprobante de referencia"},
		{"ok/credit of the 400 left", "NotaCreditoElectronica", "03", 406, "400", factura, ""},
		{"error/a cent more", "NotaCreditoElectronica", "03", 407, "0.01", factura, "excede"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			estado, answer := send(tc.root, tc.docType, tc.n, tc.total, tc.ref)
			switch {
			case tc.want == "" && estado != "aceptado":
				t.Fatalf("%s: %s", estado, answer)
			case tc.want != "" && (estado != "rechazado" || !strings.Contains(answer, tc.want)):
				t.Fatalf("%s, want rechazado with %q: %s", estado, tc.want, answer)
			}
		})
	}
}

// TestCallRecord: GET /_sandbox/calls gives each user's authenticated
// reception calls, the latest MaxCallTimes of them with their times of
// arrival, and per key how many POSTs carried it; users past MaxCallUsers
// are only counted, and a refused token records nothing.
func TestCallRecord(t *testing.T) {
	h := newHarness(t, sandbox.Options{AdminToken: "adm", MaxCallTimes: 3, MaxCallUsers: 1})
	h.login()
	one, cons1 := claveFor(1, "01")
	two, cons2 := claveFor(2, "01")
	unknown, _ := claveFor(3, "01")
	calls := []struct {
		submit bool
		clave  string
		xml    []byte
		want   int
	}{
		{true, one, doc("FacturaElectronica", one, cons1, ""), 202},
		{true, one, doc("FacturaElectronica", one, cons1, ""), 400}, // a duplicate
		{true, two, doc("FacturaElectronica", two, cons2, ""), 202},
		{false, one, nil, 200},
		{false, unknown, nil, 404},
	}
	for i, c := range calls {
		h.clock.Advance(time.Second)
		code := 0
		if c.submit {
			code = h.submit(c.clave, c.xml).StatusCode
		} else {
			code, _ = h.status(c.clave)
		}
		if code != c.want {
			t.Fatalf("call %d: %d, want %d", i, code, c.want)
		}
	}
	h.token = "not-a-token"
	if code, _ := h.status(one); code != 401 {
		t.Fatalf("with a refused token: %d", code)
	}
	code, m := h.grant(url.Values{"grant_type": {"password"}, "client_id": {"api-stag"}, "username": {"cpf-01-1111-1111@stag.comprobanteselectronicos.go.cr"}, "password": {"p"}})
	if code != 200 {
		t.Fatalf("second user: %d", code)
	}
	h.token = m["access_token"].(string)
	if code, _ := h.status(two); code != 200 {
		t.Fatalf("second user's status: %d", code)
	}

	h.token = ""
	if resp := h.do(http.MethodGet, "/_sandbox/calls", nil); resp.StatusCode != 401 {
		t.Fatalf("without the admin token: %d", resp.StatusCode)
	}
	h.token = "adm"
	resp := h.do(http.MethodGet, "/_sandbox/calls", nil)
	var got sandbox.Calls
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /_sandbox/calls: %d %v", resp.StatusCode, err)
	}
	u, ok := got.Users[testUser]
	if len(got.Users) != 1 || !ok {
		t.Fatalf("users %v, want only %s", got.Users, testUser)
	}
	if u.Submissions != 3 || u.StatusQueries != 2 {
		t.Errorf("counts %d submissions, %d status queries; want 3 and 2", u.Submissions, u.StatusQueries)
	}
	var want []time.Time // the latest three, oldest first
	for s := 3; s <= 5; s++ {
		want = append(want, t0.Add(time.Duration(s)*time.Second))
	}
	if len(u.Times) != 3 || !u.Times[0].Equal(want[0]) || !u.Times[1].Equal(want[1]) || !u.Times[2].Equal(want[2]) {
		t.Errorf("times %v, want %v", u.Times, want)
	}
	if len(got.Posts) != 2 || got.Posts[one] != 2 || got.Posts[two] != 1 {
		t.Errorf("posts %v, want %s twice and %s once", got.Posts, one, two)
	}
	if got.Untracked != 1 || got.MaxTimes != 3 || got.MaxUsers != 1 {
		t.Errorf("untracked %d (want 1), bounds %d and %d (want 3 and 1)", got.Untracked, got.MaxTimes, got.MaxUsers)
	}
	if direct := h.ts.Calls(); direct.Posts[one] != 2 || len(direct.Users[testUser].Times) != 3 {
		t.Errorf("Calls() = %+v", direct)
	}
}
