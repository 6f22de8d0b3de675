package gateway

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"facturad/hacienda/api"
	"facturad/pipeline/delivery"
	"facturad/signer/certmint"
	"facturad/tenant"
)

// operatorWorld is the gateway with the operators' lists and the webhook
// routes over the real tenant service and a store, whose service's clock
// runs two hours ahead (so that documents numbered now are stuck).
type operatorWorld struct {
	*world
	store tenant.Store
}

func newOperatorWorld(t *testing.T, store tenant.Store) *operatorWorld {
	t.Helper()
	ahead := func(so *tenant.ServiceOptions) {
		so.WebhookURLs = delivery.URLPolicy{}
		so.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	}
	w, svc := newTenantWorld(t, store, ahead)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	ops, err := OperatorRoutes(svc, key)
	if err != nil {
		t.Fatal(err)
	}
	w.testBundle = setup(t, Options{Tenants: svc, Routes: append(WebhookRoutes(svc), ops...)})
	return &operatorWorld{world: w, store: store}
}

// company creates a company through the API whose certificate expires at
// notAfter.
func (w *operatorWorld) company(t *testing.T, by creds, id string, notAfter time.Time) tenantCompany {
	t.Helper()
	m, err := certmint.MintCertificate(certmint.Options{TipoIdentificacion: "02", Identificacion: id, Name: "Prueba " + id, PIN: "1234",
		CA: w.ca, Key: certmint.TestKey(0), NotAfter: notAfter})
	if err != nil {
		t.Fatal(err)
	}
	ct, body := multipartBody(t, companyForm(id, "Empresa "+id), map[string][]byte{"Certificado": m.P12})
	r := w.do(t, "POST", "/api/companies/v4", &by, ct, body)
	if r.status != 200 {
		t.Fatalf("create company %s: %d %s", id, r.status, r.body)
	}
	a := r.object(t)
	return tenantCompany{id: num(a["companiaId"]), branchID: num(a["sucursalId"]),
		user: creds{token: a["apiToken"].(string), user: a["usuario"].(string), pass: a["contrasena"].(string)}}
}

// stuck stores a document of the company in estado, numbered now, and
// returns its clave.
func (w *operatorWorld) stuck(t *testing.T, co tenantCompany, name string, st tenant.State) string {
	t.Helper()
	ctx := context.Background()
	docs := w.store.(tenant.DocumentStore)
	d := tenant.Document{CompanyID: co.id, BranchID: co.branchID, IDExterno: name, Tipo: "01", Terminal: "00001", Situacion: "1",
		Submission: tenant.Submission{Phase: tenant.PhaseNumbered, Estado: tenant.StatePending}}
	if err := docs.ReserveDocument(ctx, &d); err != nil {
		t.Fatal(err)
	}
	d.Clave = fmt.Sprintf("506%047d", d.ID)
	d.Place(st)
	if err := docs.SaveDocument(ctx, &d); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	return d.Clave
}

// walk follows a list's pages of limit from path, returning the items.
func (w *operatorWorld) walk(t *testing.T, path string, who creds, limit int) []map[string]any {
	t.Helper()
	var items []map[string]any
	next := ""
	for range 100 {
		p := path
		sep := "?"
		if u, _ := url.Parse(path); u.RawQuery != "" {
			sep = "&"
		}
		p += fmt.Sprintf("%slimit=%d", sep, limit)
		if next != "" {
			p += "&cursor=" + url.QueryEscape(next)
		}
		r := w.do(t, "GET", p, &who, "", nil)
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", p, r.status, r.body)
		}
		m := r.object(t)
		for _, it := range m["items"].([]any) {
			items = append(items, it.(map[string]any))
		}
		if next, _ = m["next"].(string); next == "" {
			return items
		}
	}
	t.Fatal("more than 100 pages")
	return nil
}

func companyIDs(items []map[string]any) []int64 {
	var out []int64
	for _, it := range items {
		out = append(out, num(it["companiaId"]))
	}
	return out
}

// TestOperatorRoutes: the certificates expiring before a date and the
// documents stuck, an admin's (every company) and a reseller's (its own),
// in pages; a company's user gets 404; a bad date, limit or cursor is a
// 400 on it. Every answer is checked against the OpenAPI document.
func TestOperatorRoutes(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testOperatorRoutes(t, newOperatorWorld(t, k.open(t))) })
	}
}

func testOperatorRoutes(t *testing.T, w *operatorWorld) {
	r := w.do(t, "POST", "/api/resellers/v4", &w.admin, "application/json", []byte(`{"usuario":"revendedor"}`))
	if r.status != 200 {
		t.Fatalf("create reseller: %d %s", r.status, r.body)
	}
	m := r.object(t)
	reseller := creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
	now := time.Now().Truncate(time.Second)
	day := 24 * time.Hour
	a := w.company(t, w.admin, "3101000501", now.Add(20*day))
	b := w.company(t, reseller, "3101000502", now.Add(10*day))
	c := w.company(t, w.admin, "3101000503", now.Add(10*day)) // the same expiry as b: by id
	far := w.company(t, reseller, "3101000504", now.Add(400*day))
	before := now.Add(31 * day).In(time.FixedZone("CR", -6*3600)).Format("2006-01-02")
	path := "/api/admin/certificados/v4?vencenAntesDe=" + before

	for _, limit := range []int{1, 2, 50} {
		items := w.walk(t, path, w.admin, limit)
		if got, want := companyIDs(items), []int64{b.id, c.id, a.id}; !slices.Equal(got, want) {
			t.Fatalf("admin, pages of %d: %v, want %v", limit, got, want)
		}
	}
	items := w.walk(t, path, w.admin, 10)
	if it := items[0]; it["numeroIdentificacion"] != "3101000502" || it["razonSocial"] != "Empresa 3101000502" ||
		it["ambiente"] != tenant.AmbientePruebas || it["expiracionCertificado"] != api.LocalTime(now.Add(10*day)) {
		t.Errorf("item %v", it)
	}
	if got := companyIDs(w.walk(t, path, reseller, 1)); !slices.Equal(got, []int64{b.id}) {
		t.Errorf("reseller: %v, want its own %v", got, []int64{b.id})
	}
	// Strictly before Costa Rica midnight of the date: the day of the
	// expiry itself leaves it out, the day after lists it.
	expiryDay := now.Add(10 * day).In(time.FixedZone("CR", -6*3600))
	if got := companyIDs(w.walk(t, "/api/admin/certificados/v4?vencenAntesDe="+expiryDay.Format("2006-01-02"), w.admin, 10)); len(got) != 0 {
		t.Errorf("before the day of the expiry: %v", got)
	}
	if got := companyIDs(w.walk(t, "/api/admin/certificados/v4?vencenAntesDe="+expiryDay.Add(day).Format("2006-01-02"), w.admin, 10)); !slices.Equal(got, []int64{b.id, c.id}) {
		t.Errorf("before the day after the expiry: %v", got)
	}
	if got := companyIDs(w.walk(t, "/api/admin/certificados/v4?vencenAntesDe=2200-01-01", reseller, 10)); !slices.Equal(got, []int64{b.id, far.id}) {
		t.Errorf("reseller, far date: %v", got)
	}
	// The last date of the calendar lists every certificate, on both
	// stores (its Costa Rica midnight is still in year 9999 in UTC).
	if got := companyIDs(w.walk(t, "/api/admin/certificados/v4?vencenAntesDe=9999-12-31", reseller, 10)); !slices.Equal(got, []int64{b.id, far.id}) {
		t.Errorf("reseller, 9999-12-31: %v", got)
	}

	// Stuck documents: numbered now, the service's clock two hours on.
	stuckB := w.stuck(t, b, "b-1", tenant.StateNotSentYet)
	stuckA := w.stuck(t, a, "a-1", tenant.StatePending)
	w.stuck(t, a, "a-2", tenant.StateAccepted)
	stuckB2 := w.stuck(t, b, "b-2", tenant.StateSent)
	docs := w.walk(t, "/api/admin/documentos-detenidos/v4", w.admin, 1)
	var claves []string
	for _, d := range docs {
		claves = append(claves, d["clave"].(string))
	}
	if want := []string{stuckB, stuckA, stuckB2}; !slices.Equal(claves, want) {
		t.Fatalf("stuck: %v, want %v", claves, want)
	}
	if d := docs[0]; num(d["companiaId"]) != b.id || d["estado"] != "05" || d["espera"] != api.EsperaCompania || d["numeroIdentificacion"] != "3101000502" {
		t.Errorf("stuck item %v", d)
	}
	if n := len(w.walk(t, "/api/admin/documentos-detenidos/v4", reseller, 1)); n != 2 {
		t.Errorf("the reseller sees %d stuck documents, want its company's 2", n)
	}

	// A company's user is no operator.
	for _, p := range []string{path, "/api/admin/documentos-detenidos/v4"} {
		requireA7(t, w.do(t, "GET", p, &a.user, "", nil), 404)
		requireA7(t, w.do(t, "GET", p, nil, "", nil), 401)
	}
	// Bad parameters are 400s on their names.
	r = w.do(t, "GET", path+"&limit=1", &w.admin, "", nil)
	certCursor := r.object(t)["next"].(string)
	r = w.do(t, "GET", "/api/admin/documentos-detenidos/v4?limit=1", &w.admin, "", nil)
	stuckCursor := r.object(t)["next"].(string)
	for _, tt := range []struct{ path, field string }{
		{"/api/admin/certificados/v4", "vencenAntesDe"},
		{"/api/admin/certificados/v4?vencenAntesDe=31-12-2026", "vencenAntesDe"},
		{"/api/admin/certificados/v4?vencenAntesDe=2026-12-01T00:00:00", "vencenAntesDe"},
		{"/api/admin/certificados/v4?vencenAntesDe=0000-12-31", "vencenAntesDe"},
		{"/api/admin/certificados/v4?vencenAntesDe=10000-01-01", "vencenAntesDe"},
		{"/api/admin/certificados/v4?vencenAntesDe=2027-02-29", "vencenAntesDe"},
		{path + "&limit=0", "limit"},
		{path + "&limit=501", "limit"},
		{path + "&cursor=x", "cursor"},
		// A cursor is the list's and the date's it was made for.
		{"/api/admin/certificados/v4?vencenAntesDe=2200-01-01&cursor=" + certCursor, "cursor"},
		{path + "&cursor=" + stuckCursor, "cursor"},
		{"/api/admin/documentos-detenidos/v4?cursor=" + certCursor, "cursor"},
	} {
		errs := requireA7(t, w.do(t, "GET", tt.path, &w.admin, "", nil), 400)
		if errs[tt.field] == nil {
			t.Errorf("%s: errors %v, want one on %s", tt.path, errs, tt.field)
		}
	}

	// A webhook may ask for the tenant events.
	r = w.do(t, "POST", fmt.Sprintf("/api/companies/%d/webhooks/v4", a.id), &a.user, "application/json",
		[]byte(`{"url":"https://93.184.215.14/hooks","eventos":["certificado.por_vencer","certificado.vencido","credenciales.rechazadas","documentos.detenidos"]}`))
	if r.status != 200 || fmt.Sprint(r.object(t)["eventos"]) != "[certificado.por_vencer certificado.vencido credenciales.rechazadas documentos.detenidos]" {
		t.Errorf("register the tenant events: %d %s", r.status, r.body)
	}
}

// TestOpenAPIEventNames: the document's EventName lists exactly the
// events a webhook may ask for.
func TestOpenAPIEventNames(t *testing.T) {
	doc := loadOpenAPI(t)
	var got []string
	for _, v := range doc.Components.Schemas["EventName"].Value.Enum {
		got = append(got, v.(string))
	}
	if want := tenant.EventNames(); !slices.Equal(got, want) {
		t.Errorf("EventName %v, the service's %v", got, want)
	}
}
