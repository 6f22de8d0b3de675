package gateway

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"facturad/hacienda/msg"
	"facturad/hacienda/registry"
	"facturad/hacienda/sandbox"
	"facturad/pipeline"
	"facturad/tenant"
	"facturad/tenant/authcache"
	"facturad/tenant/printed"
)

// registryBundle serves the lookups over the sandbox's registries.
func registryBundle(t *testing.T) (*testBundle, *sandbox.TestServer, *sandbox.ManualClock) {
	t.Helper()
	sb := sandbox.NewTestServer(t, sandbox.Options{Logger: slog.New(slog.DiscardHandler)})
	clk := sandbox.NewManualClock(time.Now())
	c, err := registry.NewClient(registry.ClientOptions{BaseURL: sb.RegistryURL, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{Client: c, Cache: authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now}), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, Options{Tenants: docTenants{}, Routes: RegistryRoutes(reg)})
	return b, sb, clk
}

func TestRegistryRoutes(t *testing.T) {
	b, sb, clk := registryBundle(t)
	u := creds{"t", "u", "p"}
	get := func(t *testing.T, path string) reply { return b.do(t, "GET", path, &u, "", nil) }

	t.Run("contribuyente", func(t *testing.T) {
		r := get(t, "/api/registry/contribuyentes/3101471100/v4")
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		m := r.object(t)
		requireShape(t, "Contribuyente", m, map[string]jsonKind{"identificacion": kString, "nombre": kString, "tipoIdentificacion": kString,
			"regimen": kObject, "situacion": kObject, "actividades": kArray, "consultado": kString, "desactualizado": kBool})
		if m["identificacion"] != "3101471100" || m["tipoIdentificacion"] != "02" || m["desactualizado"] != false ||
			!strings.Contains(string(r.body), `"codigo":"4711.0"`) || !strings.Contains(string(r.body), `"estado":"Inscrito"`) {
			t.Errorf("answer %s", r.body)
		}
	})
	t.Run("contribuyente not registered", func(t *testing.T) {
		requireA7(t, get(t, "/api/registry/contribuyentes/3101230000/v4"), 404)
		// Known to the registry, but not (or no longer) registered.
		for _, id := range []string{"3101239999", "3101777777"} {
			r := get(t, "/api/registry/contribuyentes/"+id+"/v4")
			requireA7(t, r, 404)
			if !strings.Contains(string(r.body), "scrito") {
				t.Errorf("%s: %s, want the registry's standing named", id, r.body)
			}
		}
	})
	t.Run("contribuyente malformed", func(t *testing.T) {
		requireField(t, requireA7(t, get(t, "/api/registry/contribuyentes/31-01/v4"), 400), "identificacion")
		// Well formed for us, refused by the registry (a leading zero).
		requireField(t, requireA7(t, get(t, "/api/registry/contribuyentes/012345678/v4"), 400), "identificacion")
	})
	t.Run("cabys by code", func(t *testing.T) {
		r := get(t, "/api/registry/cabys/v4?codigo=8314100000000")
		if r.status != 200 || !strings.Contains(string(r.body), `"items":[{"codigo":"8314100000000"`) || !strings.Contains(string(r.body), `"impuesto":13`) {
			t.Errorf("%d %s", r.status, r.body)
		}
		r = get(t, "/api/registry/cabys/v4?codigo=8314100000999")
		if r.status != 200 || !strings.Contains(string(r.body), `"items":[]`) {
			t.Errorf("an unknown code: %d %s", r.status, r.body)
		}
	})
	t.Run("cabys by words", func(t *testing.T) {
		r := get(t, "/api/registry/cabys/v4?q=ferreteria&limit=1")
		items, _ := r.object(t)["items"].([]any)
		if r.status != 200 || len(items) != 1 {
			t.Errorf("%d %s", r.status, r.body)
		}
		requireField(t, requireA7(t, get(t, "/api/registry/cabys/v4"), 400), "q")
		requireField(t, requireA7(t, get(t, "/api/registry/cabys/v4?q=cafe&limit=999"), 400), "limit")
		requireField(t, requireA7(t, get(t, "/api/registry/cabys/v4?codigo=123"), 400), "codigo")
	})
	t.Run("exoneracion", func(t *testing.T) {
		r := get(t, "/api/registry/exoneraciones/AL-00100002-26/v4")
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		for _, want := range []string{`"identificacion":"114440555"`, `"porcentajeExoneracion":10`, `"poseeCabys":true`,
			`"cabys":["2111100000100","4321000000200"]`, `"fechaVencimiento":"2035-12-31T00:00:00"`, `"codigo":"04"`} {
			if !strings.Contains(string(r.body), want) {
				t.Errorf("answer %s lacks %s", r.body, want)
			}
		}
		requireA7(t, get(t, "/api/registry/exoneraciones/AL-09999999-26/v4"), 404)
	})
	t.Run("tipo de cambio", func(t *testing.T) {
		r := get(t, "/api/registry/tipo-cambio/v4?moneda=USD&fecha=2026-03-02")
		m := r.object(t)
		if r.status != 200 || m["moneda"] != "USD" || m["fecha"] != "2026-03-02" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if v, _ := m["venta"].(float64); v < 476 || v > 524 {
			t.Errorf("venta %v", m["venta"])
		}
		if r := get(t, "/api/registry/tipo-cambio/v4"); r.status != 200 {
			t.Errorf("today: %d %s", r.status, r.body)
		}
		requireField(t, requireA7(t, get(t, "/api/registry/tipo-cambio/v4?fecha=2999-01-01"), 400), "fecha")
		requireField(t, requireA7(t, get(t, "/api/registry/tipo-cambio/v4?fecha=ayer"), 400), "fecha")
	})
	t.Run("unauthenticated", func(t *testing.T) {
		requireA7(t, b.do(t, "GET", "/api/registry/contribuyentes/3101471100/v4", nil, "", nil), 401)
	})

	// The registry down: a cached answer is served stale, a question
	// with nothing cached is a 503 with Retry-After.
	clk.Advance(registry.DefaultTTL + time.Hour)
	if err := sb.SetFaults(sandbox.Faults{RegistryStatus: 503}); err != nil {
		t.Fatal(err)
	}
	t.Run("down, cached", func(t *testing.T) {
		r := get(t, "/api/registry/contribuyentes/3101471100/v4")
		if r.status != 200 || r.object(t)["desactualizado"] != true {
			t.Errorf("%d %s", r.status, r.body)
		}
	})
	t.Run("down, nothing cached", func(t *testing.T) {
		r := get(t, "/api/registry/contribuyentes/3101471101/v4")
		requireA7(t, r, 503)
		if r.header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
	})
}

// spanishRefusal is a validation error of the catalogue, as the registry
// checks' refusals are.
type spanishRefusal struct{}

func (spanishRefusal) Error() string { return "refused" }
func (spanishRefusal) FieldMessages() map[string][]msg.Message {
	return msg.One("ReceptorRequest.Identificacion", msg.ReceptorNotRegistered.With("3101123456", "", msg.AdviceOther.With()))
}

// The registry checks' refusals and warnings are in Spanish for a caller
// who prefers it, in English otherwise.
func TestRegistryLanguage(t *testing.T) {
	doc := tenant.Document{Consecutivo: "00100001010000000007", Numero: 7, Clave: testClave,
		Submission: tenant.Submission{Phase: tenant.PhaseFor(tenant.StateSent), Estado: tenant.StateSent}}
	f := &fakeDocuments{err: spanishRefusal{}, out: pipeline.Outcome{Document: doc, Answer: pipeline.Answer{Estado: doc.Estado}}}
	b := setup(t, Options{Tenants: docTenants{}, Routes: DocumentRoutes(f, nil, printed.Printer{})})
	u := creds{"t", "u", "p"}
	body := []byte(`{"id_externo":"x","tipo_documento":"01"}`)
	for _, tt := range []struct {
		lang, want string
	}{
		{"", "the receptor 3101123456 is not registered in the tax authority's taxpayer registry: correct the identification"},
		{"es-CR,es;q=0.9,en;q=0.8", "el receptor 3101123456 no está inscrito en el registro de contribuyentes de Hacienda: corrija la identificación"},
		{"en-US,es;q=0.5", "the receptor 3101123456 is not registered in the tax authority's taxpayer registry: correct the identification"},
		{"ES", "el receptor 3101123456 no está inscrito en el registro de contribuyentes de Hacienda: corrija la identificación"},
	} {
		var hdr []string
		if tt.lang != "" {
			hdr = []string{"Accept-Language", tt.lang}
		}
		errs := requireA7(t, b.do(t, "POST", "/api/documents/v4", &u, "application/json", body, hdr...), 400)
		if msgs, _ := errs["ReceptorRequest.Identificacion"].([]any); len(msgs) != 1 || msgs[0] != tt.want {
			t.Errorf("Accept-Language %q: %v, want %q", tt.lang, errs, tt.want)
		}
	}

	f.err = nil
	f.out.Advertencias = []registry.Finding{{Field: "detalleServicio[0].codigoCABYS", Msg: msg.CabysRate.With("2392000000000", "13", "4")}}
	for lang, want := range map[string]string{
		"":   "detalleServicio[0].codigoCABYS: the CAByS catalog gives code 2392000000000 an IVA rate of 13 %, and the line uses 4 %",
		"es": "detalleServicio[0].codigoCABYS: el catálogo CAByS da al código 2392000000000 una tarifa de IVA de 13 %, y la línea usa 4 %",
	} {
		var hdr []string
		if lang != "" {
			hdr = []string{"Accept-Language", lang}
		}
		r := b.do(t, "POST", "/api/documents/v4", &u, "application/json", body, hdr...)
		adv, _ := r.object(t)["advertencias"].([]any)
		if r.status != http.StatusOK || len(adv) != 1 || adv[0] != want {
			t.Errorf("Accept-Language %q: %d %s", lang, r.status, r.body)
		}
	}
	f.out.Advertencias = nil
	if r := b.do(t, "POST", "/api/documents/v4", &u, "application/json", body); strings.Contains(string(r.body), "advertencias") {
		t.Errorf("advertencias written with nothing to say: %s", r.body)
	}
}
