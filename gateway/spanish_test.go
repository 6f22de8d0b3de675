package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"facturad/hacienda/msg"
	"facturad/pipeline/delivery"
	"facturad/tenant"
)

// errorAnswer is an error body read back: the A.7 form and the severe one.
type errorAnswer struct {
	StatusCode int                 `json:"statusCode"`
	Code       string              `json:"code"`
	Message    string              `json:"message"`
	Errors     map[string][]string `json:"errors"`
	Codes      map[string][]string `json:"codes"`
}

// templateRE matches the renderings of a template: its text as it is,
// each verb standing for any value.
func templateRE(tmpl string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^(?s)`)
	lit := ""
	flush := func() { b.WriteString(regexp.QuoteMeta(lit)); lit = "" }
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '%' {
			lit += tmpl[i : i+1]
			continue
		}
		i++
		for i < len(tmpl) && strings.IndexByte("+-# 0123456789.[]", tmpl[i]) >= 0 {
			i++
		}
		if i < len(tmpl) && tmpl[i] == '%' {
			lit += "%"
			continue
		}
		flush()
		b.WriteString(`.*?`)
	}
	flush()
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

// saysIn checks that text is a rendering in l of the entry coded code, of
// kind.
func saysIn(t *testing.T, where, code, text string, l msg.Lang, kind msg.Kind) {
	t.Helper()
	e := msg.Lookup(code)
	switch {
	case e == nil:
		t.Errorf("%s: code %q is not in the catalogue", where, code)
	case e.Kind() != kind:
		t.Errorf("%s: code %q is not of the kind it stands for", where, code)
	case !templateRE(e.Template(l)).MatchString(text):
		t.Errorf("%s: %q is not %s's %s: %q", where, text, code, l, e.Template(l))
	}
}

// TestErrorsInSpanish sends a representative set of bad requests, every
// kind of refusal the service gives, once asking for Spanish and once
// not: the two answers have the same status and codes, the messages are
// the catalogue's Spanish and English renderings of those codes, and they
// differ.
func TestErrorsInSpanish(t *testing.T) {
	store := storeKinds[0].open(t)
	w, svc := newTenantWorld(t, store, func(so *tenant.ServiceOptions) { so.WebhookURLs = delivery.URLPolicy{} })
	p, _, _ := newTestPipeline(t, store, svc, false)
	startPipeline(t, p)
	w.testBundle = setup(t, Options{Tenants: svc, Routes: serviceRoutes(t, routeDeps{docs: p, tenants: svc})})
	co := w.createCompany(t, w.admin, "3101123456", "Empresa Uno S.A.")
	other := w.createCompany(t, w.admin, "3101654321", "Empresa Dos S.A.")
	const ghost = "50601012600310112345600100001010000000999100000000"

	badSend := []byte(`{"id_externo":"x-1","tipo_documento":"01","condicion_venta":"01",
	  "receptor":{"nombre":["Cliente"],"identificacion":{"tipo":"01","numero":"12345"},"correoElectronico":"ana@"},
	  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","cantidad":0,"unidadMedida":"Sp","detalle":"Servicio",
	    "precioUnitario":"abc","impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":4}]}],
	  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`)
	companies := fmt.Sprintf("/api/companies/%d", co.id)
	branch := fmt.Sprintf("%s/branches/%d", companies, co.branchID)
	ct, badCompany := multipartBody(t, map[string]string{"TipoIdentificacion": "07", "Identificacion": "1-234", "RazonSocial": "X",
		"Provincia": "9", "Canton": "1", "Distrito": "1", "CorreoElectronico": "no es correo", "MonedaLocal": "XXX"}, nil)

	tests := []struct {
		name         string
		method, path string
		who          *creds
		ct           string
		body         []byte
		status       int
		code         string
		fieldCodes   []string // some of the field codes the answer must have
	}{
		{"send with bad fields", "POST", "/api/documents/v4", &co.user, "application/json", badSend, 400, "validation_failed",
			[]string{"json_type_mismatch", "invalid_email", "identification_fisica", "not_a_number", "not_positive", "tarifa_mismatch"}},
		{"send not JSON", "POST", "/api/documents/v4", &co.user, "application/json", []byte(`{"id_externo":`), 400, "validation_failed", []string{"body_invalid_json"}},
		{"calculate with bad amounts", "POST", "/api/documents/calculate/v4", &co.user, "application/json",
			[]byte(`{"detalleServicio":[{"cantidad":-1,"precioUnitario":10,"codigoCABYS":"123","impuesto":[]}]}`), 400, "validation_failed", []string{"negative", "cabys_digits", "tax_required"}},
		{"company form with bad fields", "POST", "/api/companies/v4", &w.admin, ct, badCompany, 400, "validation_failed", []string{"company_identification_type", "provincia_digit", "currency_code"}},
		{"branch with bad fields", "POST", companies + "/branches/v4", &co.user, "application/json",
			[]byte(`{"sucursal":"0","correoElectronico":"x","provincia":"1"}`), 400, "validation_failed", []string{"sucursal_code", "email_invalid", "required"}},
		{"branch flag not S or N", "POST", companies + "/branches/v4", &co.user, "application/json", []byte(`{"sucursal":"002","verMonedaExtranjera":"Q"}`), 400, "validation_failed", []string{"flag_s_n_quoted"}},
		{"branch code taken", "POST", companies + "/branches/v4", &co.user, "application/json", []byte(`{"sucursal":"001"}`), 400, "validation_failed", []string{"sucursal_exists"}},
		{"user without usuario", "POST", branch + "/users/v4", &co.user, "application/json", []byte(`{}`), 400, "validation_failed", []string{"required"}},
		{"listing with bad parameters", "GET", "/api/documents/v4?limit=0&desde=ayer&estado=9", &co.user, "", nil, 400, "validation_failed", []string{"limit_range", "desde_format", "one_of"}},
		{"webhook with bad url", "POST", companies + "/webhooks/v4", &co.user, "application/json", []byte(`{"url":"ftp://x","eventos":["nada"]}`), 400, "validation_failed", []string{"webhook_url_scheme", "evento_unknown"}},
		{"void with an unknown field", "POST", "/api/documents/" + ghost + "/anular/v4", &co.user, "application/json", []byte(`{"id_externo":"v","xyzzy":1,"lineaz":[]}`), 400, "validation_failed", []string{"unknown_field", "unknown_field_near"}},
		{"no credentials", "GET", companies + "/v4", nil, "", nil, 401, "unauthenticated", nil},
		{"another tenant's company", "GET", fmt.Sprintf("/api/companies/%d/v4", other.id), &co.user, "", nil, 404, "company_not_found", nil},
		{"a branch that is not there", "PUT", companies + "/branches/999999/v4", &co.user, "application/json", []byte(`{"sucursal":"002"}`), 404, "branch_not_found", nil},
		{"an API user that is not there", "PUT", branch + "/users/999999/v4", &co.user, "application/json", []byte(`{"activo":"N"}`), 404, "api_user_not_found", nil},
		{"a webhook that is not there", "DELETE", companies + "/webhooks/999999/v4", &co.user, "", nil, 404, "webhook_not_found", nil},
		{"a document that is not there", "GET", "/api/documents/" + ghost + "/v4", &co.user, "", nil, 404, "document_not_found", nil},
		{"a received document that is not there", "GET", "/api/received/" + ghost + "/v4", &co.user, "", nil, 404, "received_document_not_found", nil},
		{"a listing of another tenant's company", "GET", fmt.Sprintf("/api/documents/v4?companiaId=%d", other.id), &w.admin, "", nil, 200, "", nil},
		{"no such route", "GET", "/api/nada/v4", &co.user, "", nil, 404, "route_not_found", nil},
		{"no such method", "DELETE", "/api/companies/v4", &co.user, "", nil, 405, "method_not_allowed", nil},
		{"body too large", "POST", "/api/documents/v4", &co.user, "application/json", append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), SendMaxBody)...), 413, "body_too_large", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var answers [2]errorAnswer
			for i, lang := range []msg.Lang{msg.English, msg.Spanish} {
				var hdr []string
				if lang == msg.Spanish {
					hdr = []string{"Accept-Language", "es-CR,es;q=0.9,en;q=0.8"}
				}
				r := w.do(t, tt.method, tt.path, tt.who, tt.ct, tt.body, hdr...)
				if r.status != tt.status {
					t.Fatalf("%s: %d %s, want %d", lang, r.status, r.body, tt.status)
				}
				if tt.code == "" {
					return
				}
				a := &answers[i]
				if err := json.Unmarshal(r.body, a); err != nil {
					t.Fatalf("%s: %v: %s", lang, err, r.body)
				}
				if a.Code != tt.code || a.StatusCode != tt.status {
					t.Fatalf("%s: code %q (statusCode %d), want %q: %s", lang, a.Code, a.StatusCode, tt.code, r.body)
				}
				saysIn(t, lang.String()+" message", a.Code, a.Message, lang, msg.Answer)
				if len(a.Errors) != len(a.Codes) {
					t.Errorf("%s: errors %v and codes %v name other fields", lang, a.Errors, a.Codes)
				}
				for f, ms := range a.Errors {
					if len(a.Codes[f]) != len(ms) {
						t.Errorf("%s: %s has %d messages and %d codes", lang, f, len(ms), len(a.Codes[f]))
						continue
					}
					for j, m := range ms {
						saysIn(t, lang.String()+" "+f, a.Codes[f][j], m, lang, msg.Field)
					}
				}
			}
			en, es := answers[0], answers[1]
			if en.Message == es.Message {
				t.Errorf("the same message in both languages: %q", en.Message)
			}
			if fmt.Sprint(en.Codes) != fmt.Sprint(es.Codes) {
				t.Errorf("codes differ by language: %v / %v", en.Codes, es.Codes)
			}
			for f, ms := range en.Errors {
				for j, m := range ms {
					if j < len(es.Errors[f]) && es.Errors[f][j] == m {
						t.Errorf("%s: the same message in both languages: %q", f, m)
					}
				}
			}
			have := map[string]bool{}
			for _, cs := range en.Codes {
				for _, c := range cs {
					have[c] = true
				}
			}
			for _, c := range tt.fieldCodes {
				if !have[c] {
					t.Errorf("no field message coded %s: %v", c, en.Codes)
				}
			}
		})
	}
}

// TestNotFoundSaysWhatButNotWhose: a 404 names what the path asked for,
// and another tenant's record is answered word for word as one that does
// not exist, whatever the language.
func TestNotFoundSaysWhatButNotWhose(t *testing.T) {
	store := storeKinds[0].open(t)
	w, svc := newTenantWorld(t, store, func(so *tenant.ServiceOptions) { so.WebhookURLs = delivery.URLPolicy{} })
	w.testBundle = setup(t, Options{Tenants: svc, Routes: WebhookRoutes(svc)})
	co := w.createCompany(t, w.admin, "3101123456", "Empresa Uno S.A.")
	other := w.createCompany(t, w.admin, "3101654321", "Empresa Dos S.A.")
	r := w.do(t, "POST", fmt.Sprintf("/api/companies/%d/webhooks/v4", other.id), &other.user, "application/json",
		[]byte(`{"url":"https://93.184.216.34/hooks","eventos":["documento.aceptado"]}`))
	if r.status != 200 {
		t.Fatalf("webhook: %d %s", r.status, r.body)
	}
	hook := num(r.object(t)["id"])
	users := w.do(t, "GET", fmt.Sprintf("/api/companies/%d/branches/%d/users/v4", other.id, other.branchID), &other.user, "", nil).array(t)
	otherUser := num(users[0]["id"])

	// Each pair: a path to a record of the other company, and the same
	// path with its ids replaced by ids no record has.
	const nobody = 987654
	ids := func(company, branch, user, webhook int64) map[string]string {
		return map[string]string{
			"company": fmt.Sprintf("/api/companies/%d/v4", company),
			"branch":  fmt.Sprintf("/api/companies/%d/branches/%d/v4", company, branch),
			"user":    fmt.Sprintf("/api/companies/%d/branches/%d/users/%d/v4", company, branch, user),
			"webhook": fmt.Sprintf("/api/companies/%d/webhooks/%d/v4", company, webhook),
		}
	}
	theirs := ids(other.id, other.branchID, otherUser, hook)
	none := ids(nobody, nobody+1, nobody+2, nobody+3)
	mine := ids(co.id, nobody+1, nobody+2, nobody+3)
	calls := map[string]struct {
		method string
		body   []byte
		code   string
	}{
		"company": {"GET", nil, "company_not_found"},
		"branch":  {"PUT", []byte(`{"sucursal":"001"}`), "branch_not_found"},
		"user":    {"PUT", []byte(`{"activo":"S"}`), "api_user_not_found"},
		"webhook": {"DELETE", nil, "webhook_not_found"},
	}
	for _, lang := range []string{"", "es"} {
		for what, c := range calls {
			do := func(path string) errorAnswer {
				t.Helper()
				var hdr []string
				if lang != "" {
					hdr = []string{"Accept-Language", lang}
				}
				r := w.do(t, c.method, path, &co.user, "application/json", c.body, hdr...)
				var a errorAnswer
				if r.status != 404 || json.Unmarshal(r.body, &a) != nil {
					t.Fatalf("%s %s: %d %s", c.method, path, r.status, r.body)
				}
				return a
			}
			a, b := do(theirs[what]), do(none[what])
			if a.Code != c.code || b.Code != c.code {
				t.Errorf("%s: codes %s and %s, want %s", what, a.Code, b.Code, c.code)
			}
			// Put the ids of one path in the other's message: nothing
			// else may differ.
			swapped := b.Message
			for _, pair := range [][2]int64{{nobody + 3, hook}, {nobody + 2, otherUser}, {nobody + 1, other.branchID}, {nobody, other.id}} {
				swapped = strings.ReplaceAll(swapped, fmt.Sprint(pair[0]), fmt.Sprint(pair[1]))
			}
			if swapped != a.Message {
				t.Errorf("%s %q: another tenant's record is answered otherwise than none:\n%q\n%q", what, lang, a.Message, b.Message)
			}
			if what != "company" {
				// The caller's own company, a record it does not have:
				// the message names what is missing in it.
				innermost := map[string]int64{"branch": nobody + 1, "user": nobody + 2, "webhook": nobody + 3}[what]
				if m := do(mine[what]); m.Code != c.code || !strings.Contains(m.Message, fmt.Sprintf("%d", co.id)) || !strings.Contains(m.Message, fmt.Sprint(innermost)) {
					t.Errorf("%s in the caller's own company: %+v", what, m)
				}
			}
		}
	}
}

// TestUncataloguedAnswersAreReported: an answer saying something outside
// the catalogue (an error with only English text) is still answered, as
// it is, and ObserveErrorAnswers reports it, which fails TestMain.
func TestUncataloguedAnswersAreReported(t *testing.T) {
	var got []ErrorAnswer
	stop := ObserveErrorAnswers(func(a ErrorAnswer) { got = append(got, a) })
	defer stop()
	b := setup(t, Options{Tenants: &fakeTenants{}, Routes: []Route{
		{Method: "GET", Path: "/api/raw/v4", Public: true, Handle: func(_ context.Context, r *Request) (Reply, error) {
			return Reply{}, rawFieldErr{"x": {"made up in English"}}
		}},
	}})
	r := b.do(t, "GET", "/api/raw/v4", nil, "", nil, "Accept-Language", "es")
	a := requireA7(t, r, 400)
	if msgs, _ := a["x"].([]any); len(msgs) != 1 || msgs[0] != "made up in English" {
		t.Errorf("errors %v", a)
	}
	if len(got) != 1 || len(CatalogueProblems(got[0])) != 1 {
		t.Fatalf("observed %+v", got)
	}
	if ps := CatalogueProblems(ErrorAnswer{Status: 400, Message: msg.Required.With()}); len(ps) != 1 {
		t.Errorf("a field's message as an answer's: %v", ps)
	}
	if ps := CatalogueProblems(ErrorAnswer{Status: 404, Message: msg.CompanyNotFound.With("5")}); len(ps) != 0 {
		t.Errorf("a catalogue answer: %v", ps)
	}
	if ps := CatalogueProblems(ErrorAnswer{Status: 400, Message: msg.CompanyNotFound.With("5")}); len(ps) != 1 {
		t.Errorf("an answer with another status than its entry's: %v", ps)
	}
}

type rawFieldErr map[string][]string

func (e rawFieldErr) Error() string                    { return "raw" }
func (e rawFieldErr) FieldErrors() map[string][]string { return e }
