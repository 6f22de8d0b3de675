package gateway

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"facturad/hacienda/api"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/pipeline"
	"facturad/pipeline/delivery"
	"facturad/signer"
	"facturad/signer/certmint"
	"facturad/tenant"
	"facturad/tenant/certopen"
	"facturad/tenant/seal"
	"facturad/tenant/storetest"
)

// The gateway against the real tenant.Service on the SQLite store, with
// minted certificates.

// countingHasher counts slow hash checks, so that tests can prove the warm
// path never runs one.
type countingHasher struct {
	h        tenant.PasswordHasher
	verifies atomic.Int64
}

func (c *countingHasher) Hash(p []byte) (string, error) { return c.h.Hash(p) }
func (c *countingHasher) Verify(enc string, p []byte) (bool, error) {
	c.verifies.Add(1)
	return c.h.Verify(enc, p)
}

type world struct {
	*testBundle
	store  tenant.Store
	hasher *countingHasher
	admin  creds
	ca     *certmint.CA
}

// storeKinds are the stores the end-to-end tests run on: the embedded
// default always, PostgreSQL when the test environment has it.
var storeKinds = []struct {
	name string
	open func(testing.TB) tenant.Store
}{
	{"sqlite", storetest.NewSQLite},
	{"postgres", storetest.NewPostgres},
}

func newWorld(t testing.TB) *world {
	t.Helper()
	return newWorldOn(t, storetest.NewSQLite(t))
}

// newWorldOn is newWorld on store; opts adjust the tenant service's
// options before it is made.
func newWorldOn(t testing.TB, store tenant.Store, opts ...func(*tenant.ServiceOptions)) *world {
	t.Helper()
	webhooks := func(so *tenant.ServiceOptions) { so.WebhookURLs = delivery.URLPolicy{} }
	w, svc := newTenantWorld(t, store, append([]func(*tenant.ServiceOptions){webhooks}, opts...)...)
	w.testBundle = setup(t, Options{Tenants: svc, Ready: ReadyFunc(store.Ping), Routes: append(WebhookRoutes(svc), CalculateRoute())})
	return w
}

// newTenantWorld makes a world's tenant service on store (opts adjust its
// options before it is made), its admin and its CA, but no server: the
// caller sets w.testBundle with the routes it tests.
func newTenantWorld(t testing.TB, store tenant.Store, opts ...func(*tenant.ServiceOptions)) (*world, *tenant.Service) {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	// Cheap parameters: this suite creates many users.
	hasher := &countingHasher{h: tenant.Argon2id{Memory: 64, Time: 1, Threads: 1}}
	so := tenant.ServiceOptions{Store: store, Sealer: sealer, Certificates: certopen.Opener{}, Passwords: hasher}
	for _, o := range opts {
		o(&so)
	}
	svc, err := tenant.NewService(so)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{store: store, hasher: hasher, admin: creds{token: "admin-token-0123456789", user: "admin", pass: "admin-password-0123"}}
	hash, err := hasher.Hash([]byte(w.admin.pass))
	if err != nil {
		t.Fatal(err)
	}
	err = store.CreateAPIUser(context.Background(), &tenant.APIUser{
		Username: w.admin.user, PasswordHash: hash, TokenHash: tenant.HashToken(w.admin.token),
		Role: tenant.RoleAdmin, Activo: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if w.ca, err = certmint.NewCA(certmint.CAOptions{}); err != nil {
		t.Fatal(err)
	}
	return w, svc
}

// startPipeline starts p's background work and stops it when the test
// ends.
func startPipeline(t testing.TB, p *pipeline.Pipeline) {
	t.Helper()
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(context.Background()) })
}

// newTestPipeline is a document pipeline on store for svc's companies,
// submitting to a sandbox of its own; email turns the receptor's e-mails
// on (written to the outbox). It is not started. docs is store as the
// pipeline's store, sb the sandbox.
func newTestPipeline(t testing.TB, store tenant.Store, svc *tenant.Service, email bool) (p *pipeline.Pipeline, docs pipeline.Store, sb *sandbox.TestServer) {
	t.Helper()
	return newTestPipelineWith(t, store, svc, func(o *pipeline.Options) { o.Email = email })
}

// newTestPipelineWith is newTestPipeline with the pipeline's options
// adjusted by opts (nil: none) before it is made.
func newTestPipelineWith(t testing.TB, store tenant.Store, svc *tenant.Service, opts func(*pipeline.Options)) (p *pipeline.Pipeline, docs pipeline.Store, sb *sandbox.TestServer) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	docs, ok := store.(pipeline.Store)
	if !ok {
		t.Fatalf("%T keeps no documents", store)
	}
	sb = sandbox.NewTestServer(t, sandbox.Options{Logger: quiet})
	client, err := recepcion.New(recepcion.Options{APIURL: sb.APIURL, TokenURL: sb.TokenURL, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := signer.NewCache(signer.CacheOptions{Source: svc})
	if err != nil {
		t.Fatal(err)
	}
	o := pipeline.Options{Store: docs, Issuers: svc, Signer: cache, Submitter: client, Logger: quiet}
	if opts != nil {
		opts(&o)
	}
	p, err = pipeline.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p, docs, sb
}

// mint returns a .p12 for an identification, with PIN 1234.
func (w *world) mint(t testing.TB, tipo, id string, legacy bool) *certmint.Minted {
	t.Helper()
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: tipo, Identificacion: id, Name: "Prueba " + id, PIN: "1234",
		CA: w.ca, Key: certmint.TestKey(0), Legacy: legacy,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// companyForm is a complete, valid company form for a legal entity.
func companyForm(id, name string) map[string]string {
	return map[string]string{
		"TipoIdentificacion": "02", "Identificacion": id, "RazonSocial": name,
		"ActividadComercial": "620100", "UsuarioHacienda": "cpj-3-101-" + id[4:] + "@stag.comprobanteselectronicos.go.cr",
		"ContrasenaHacienda": "hacienda-pass", "TipoCliente": "Normal", "RazonComercial": name + " Comercial",
		"Provincia": "1", "Canton": "01", "Distrito": "01", "Barrio": "Barrio Amón", "OtrasSenas": "Del parque 100 m norte",
		"CodPais": "506", "Telefono": "22223333", "Fax": "", "CorreoElectronico": "facturas@example.com",
		"Sucursal": "001", "MonedaLocal": "CRC", "MonedaExtranjera": "USD", "FacturacionElectronica": "true",
		"Clave": "1234",
	}
}

// tenantCompany is a company created through the API with its first
// branch user.
type tenantCompany struct {
	id, branchID int64
	user         creds
	cert         *certmint.Minted
}

func (w *world) createCompany(t testing.TB, by creds, id, name string) tenantCompany {
	t.Helper()
	m := w.mint(t, "02", id, false)
	ct, body := multipartBody(t, companyForm(id, name), map[string][]byte{"Certificado": m.P12})
	r := w.do(t, "POST", "/api/companies/v4", &by, ct, body)
	if r.status != 200 {
		t.Fatalf("create company %s: %d %s", name, r.status, r.body)
	}
	a := r.object(t)
	requireShape(t, "CreateCompanyResponse", a, shapeCompanyCreate)
	return tenantCompany{
		id: int64(a["companiaId"].(float64)), branchID: int64(a["sucursalId"].(float64)),
		user: creds{token: a["apiToken"].(string), user: a["usuario"].(string), pass: a["contrasena"].(string)},
		cert: m,
	}
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func TestTenancyContract(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testTenancyContract(t, newWorldOn(t, k.open(t))) })
	}
}

func testTenancyContract(t *testing.T, w *world) {
	co := w.createCompany(t, w.admin, "3101123456", "Ñandú Servicios S.A.")
	if co.id <= 0 || co.branchID <= 0 || co.user.user == "" {
		t.Fatalf("created %+v", co)
	}

	t.Run("ok/get company", func(t *testing.T) {
		// The admin manages the company and reads its secrets; its own
		// branch user reads it without them (decision 162).
		for _, who := range []struct {
			creds
			pin, password string
		}{{w.admin, "1234", "hacienda-pass"}, {co.user, "", ""}} {
			r := w.do(t, "GET", fmt.Sprintf("/api/companies/%d/v4", co.id), &who.creds, "", nil)
			if r.status != 200 {
				t.Fatalf("%s: %d %s", who.user, r.status, r.body)
			}
			m := r.object(t)
			requireShape(t, "Company (get)", m, shapeCompanyGet)
			want := map[string]any{
				"id": float64(co.id), "clave": who.pin, "contrasenaHacienda": who.password, "activo": "S",
				"certificadoVencido": false, "numeroIdentificacion": "3101123456", "facturacionElectronica": true,
				"expiracionCertificado": api.LocalTime(co.cert.Leaf.NotAfter),
			}
			for k, v := range want {
				if m[k] != v {
					t.Errorf("%s = %#v, want %#v", k, m[k], v)
				}
			}
		}
	})

	t.Run("ok/search", func(t *testing.T) {
		r := w.do(t, "GET", "/api/companies/v4?Name=nandu", &w.admin, "", nil)
		list := r.array(t)
		if r.status != 200 || len(list) != 1 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		requireShape(t, "Company (search)", list[0], shapeCompanySearch)
		for _, k := range []string{"clave", "contrasenaHacienda"} {
			if _, ok := list[0][k]; ok {
				t.Errorf("search form carries %s", k)
			}
		}
		if r := w.do(t, "GET", "/api/companies/v4?Name=nothing-like-it", &w.admin, "", nil); string(r.body) != "[]" {
			t.Errorf("empty search: %s", r.body)
		}
	})

	t.Run("ok/update company on both paths", func(t *testing.T) {
		for i, path := range []string{"/api/companies/%d/v4", "/api/companies/%d/branches/v4"} {
			form := companyForm("3101123456", "Ñandú Servicios Renovados "+strconv.Itoa(i))
			delete(form, "Clave") // no new certificate: the stored one stays
			ct, body := multipartBody(t, form, nil)
			r := w.do(t, "PUT", fmt.Sprintf(path, co.id), &co.user, ct, body)
			if r.status != 200 {
				t.Fatalf("%s: %d %s", path, r.status, r.body)
			}
			m := r.object(t)
			requireShape(t, "UpdateCompanyResponse", m, shapeCompanyUpdate)
			if m["razonSocial"] != form["RazonSocial"] || m["mensajeApi"] != "" || m["clave"] != "" || m["contrasenaHacienda"] != "" {
				t.Errorf("%s: %v", path, m)
			}
		}
	})

	t.Run("ok/create company on the branches path", func(t *testing.T) {
		m := w.mint(t, "02", "3101999888", true) // legacy 3DES/RC2 file
		ct, body := multipartBody(t, companyForm("3101999888", "Otra Empresa Legacy S.A."), map[string][]byte{"Certificado": m.P12})
		r := w.do(t, "POST", "/api/companies/0/branches/v4", &w.admin, ct, body)
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		requireShape(t, "CreateCompanyResponse", r.object(t), shapeCompanyCreate)
	})

	var branchID int64
	t.Run("ok/branches", func(t *testing.T) {
		path := fmt.Sprintf("/api/companies/%d/branches/v4", co.id)
		body := `{"Sucursal":"002","RazonComercial":"Sucursal Norte","MonedaIdLocal":"CRC","MonedaIdExtranjera":"USD","VerMonedaExtranjera":"S","licencia":"L-1"}`
		r := w.do(t, "POST", path, &co.user, "application/json", []byte(body))
		if r.status != 200 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		m := r.object(t)
		requireShape(t, "Branch create", m, shapeBranchCreate)
		branchID = num(m["id"])
		if m["sucursal"] != "002" || m["verMonedaExtranjera"] != "S" || num(m["companiaId"]) != co.id || m["mensajeApi"] != "" {
			t.Errorf("created branch %v", m)
		}
		nb := creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}

		r = w.do(t, "GET", path, &nb, "", nil)
		list := r.array(t)
		if r.status != 200 || len(list) != 2 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		for _, b := range list {
			requireShape(t, "Branch", b, shapeBranch)
		}

		upd := `{"sucursal":"002","razonComercial":"Sucursal Norte Renovada","verMonedaExtranjera":false}`
		r = w.do(t, "PUT", fmt.Sprintf("/api/companies/%d/branches/%d/v4", co.id, branchID), &co.user, "application/json", []byte(upd))
		if r.status != 200 {
			t.Fatalf("update: %d %s", r.status, r.body)
		}
		m = r.object(t)
		requireShape(t, "Branch update", m, shapeBranchUpdate)
		if m["razonComercial"] != "Sucursal Norte Renovada" || m["verMonedaExtranjera"] != "N" || m["mensaje_api"] != "" {
			t.Errorf("updated branch %v", m)
		}

		// A duplicate code is a 400 on sucursal.
		r = w.do(t, "POST", path, &co.user, "application/json", []byte(`{"sucursal":"002"}`))
		requireField(t, requireA7(t, r, 400), "sucursal")
	})

	t.Run("ok/users", func(t *testing.T) {
		path := fmt.Sprintf("/api/companies/%d/branches/%d/users/v4", co.id, co.branchID)
		r := w.do(t, "POST", path, &co.user, "application/json", []byte(`{"Usuario":"cajero.uno"}`))
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		m := r.object(t)
		requireShape(t, "user create", m, shapeCredentials)
		u := creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
		if u.user != "cajero.uno" || m["mensaje_api"] != "" {
			t.Errorf("user %v", m)
		}
		if r := w.do(t, "GET", fmt.Sprintf("/api/companies/%d/branches/v4", co.id), &u, "", nil); r.status != 200 {
			t.Errorf("new user cannot list: %d", r.status)
		}
		r = w.do(t, "POST", path, &co.user, "application/json", []byte(`{"usuario":"cajero.uno"}`))
		requireField(t, requireA7(t, r, 400), "usuario")
		r = w.do(t, "POST", path, &co.user, "application/json", []byte(`{}`))
		requireField(t, requireA7(t, r, 400), "usuario")
	})

	t.Run("ok/resellers", func(t *testing.T) {
		r := w.do(t, "POST", "/api/resellers/v4", &w.admin, "application/json", []byte(`{"usuario":"revendedor"}`))
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		m := r.object(t)
		requireShape(t, "reseller create", m, shapeCredentials)
		rs := creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
		own := w.createCompany(t, rs, "3101555444", "Cliente del Revendedor S.A.")
		r = w.do(t, "GET", "/api/companies/v4", &rs, "", nil)
		list := r.array(t)
		if len(list) != 1 || num(list[0]["id"]) != own.id {
			t.Errorf("reseller search sees %s", r.body)
		}
		requireA7(t, w.do(t, "GET", fmt.Sprintf("/api/companies/%d/v4", co.id), &rs, "", nil), 404)
		// Only an admin creates resellers.
		for _, who := range []creds{rs, co.user} {
			r := w.do(t, "POST", "/api/resellers/v4", &who, "application/json", []byte(`{"usuario":"otro.revendedor"}`))
			if r.status != 404 && r.status != 401 {
				t.Errorf("%s created a reseller: %d %s", who.user, r.status, r.body)
			}
		}
		requireField(t, requireA7(t, w.do(t, "POST", "/api/resellers/v4", &w.admin, "application/json", []byte(`{"usuario":""}`)), 400), "usuario")
	})

	t.Run("error/deactivated branch", func(t *testing.T) {
		path := fmt.Sprintf("/api/companies/%d/branches/v4", co.id)
		r := w.do(t, "POST", path, &co.user, "application/json", []byte(`{"sucursal":"003"}`))
		m := r.object(t)
		u := creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
		if r := w.do(t, "GET", path, &u, "", nil); r.status != 200 {
			t.Fatalf("before: %d", r.status)
		}
		off := `{"sucursal":"003","activo":"N"}`
		if r := w.do(t, "PUT", fmt.Sprintf("/api/companies/%d/branches/%d/v4", co.id, num(m["id"])), &co.user, "application/json", []byte(off)); r.status != 200 {
			t.Fatalf("deactivate: %d %s", r.status, r.body)
		}
		requireA7(t, w.do(t, "GET", path, &u, "", nil), 401)
	})
}

func TestCompanyValidation(t *testing.T) {
	w := newWorld(t)
	good := w.mint(t, "02", "3101123456", false)
	other := w.mint(t, "02", "3101000001", false)
	tests := []struct {
		name   string
		edit   func(form map[string]string)
		cert   []byte
		fields []string
	}{
		{"error/wrong PIN", func(f map[string]string) { f["Clave"] = "9999" }, good.P12, []string{"Certificado"}},
		{"error/not PKCS#12", nil, []byte("-----BEGIN CERTIFICATE-----\nnot really\n"), []string{"Certificado"}},
		{"error/identification mismatch", nil, other.P12, []string{"Certificado"}},
		{"error/missing required", func(f map[string]string) {
			delete(f, "RazonSocial")
			delete(f, "Identificacion")
			f["TipoIdentificacion"] = ""
		}, good.P12, []string{"RazonSocial", "Identificacion", "TipoIdentificacion"}},
		{"error/bad identification", func(f map[string]string) { f["Identificacion"] = "31-01" }, good.P12, []string{"Identificacion"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form := companyForm("3101123456", "Empresa de Prueba S.A.")
			if tt.edit != nil {
				tt.edit(form)
			}
			ct, body := multipartBody(t, form, map[string][]byte{"Certificado": tt.cert})
			r := w.do(t, "POST", "/api/companies/v4", &w.admin, ct, body)
			errs := requireA7(t, r, 400)
			for _, f := range tt.fields {
				requireField(t, errs, f)
			}
			for _, secret := range []string{`"1234"`, "hacienda-pass"} {
				if strings.Contains(string(r.body), secret) {
					t.Errorf("a secret is echoed: %s", r.body)
				}
			}
		})
	}
	t.Run("error/invalid JSON", func(t *testing.T) {
		co := w.createCompany(t, w.admin, "3101123456", "Empresa de Prueba S.A.")
		r := w.do(t, "POST", fmt.Sprintf("/api/companies/%d/branches/v4", co.id), &co.user, "application/json", []byte(`{"sucursal": "002",`))
		requireField(t, requireA7(t, r, 400), "body")
		r = w.do(t, "POST", fmt.Sprintf("/api/companies/%d/branches/v4", co.id), &co.user, "application/json", []byte(`{"sucursal": "2x"}`))
		requireField(t, requireA7(t, r, 400), "sucursal")
	})
	t.Run("error/text an XML document cannot carry", func(t *testing.T) {
		co := w.createCompany(t, w.admin, "3101123457", "Empresa de Texto S.A.")
		path := fmt.Sprintf("/api/companies/%d/branches/v4", co.id)
		for _, tt := range []struct {
			body  string
			field string
		}{
			{"{\"sucursal\": \"002\", \"razonComercial\": \"Caf\xe9\"}", "body"},
			{`{"sucursal": "002", "razonComercial": "Caf\ud800"}`, "body"},
			{`{"sucursal": "002", "razonComercial": "Sucursal\u0000 Centro"}`, "razonComercial"},
			{`{"sucursal": "002", "otrasSenas": "Del parque\u001b 100 m"}`, "otrasSenas"},
		} {
			r := w.do(t, "POST", path, &co.user, "application/json", []byte(tt.body))
			requireField(t, requireA7(t, r, 400), tt.field)
		}
		// A company form field with a control character, and a cantón the
		// catalogue does not have, are refused on their own names.
		form := companyForm("3101123458", "Empresa\x07 Campana S.A.")
		form["Canton"] = "99"
		ct, body := multipartBody(t, form, nil)
		errs := requireA7(t, w.do(t, "POST", "/api/companies/v4", &w.admin, ct, body), 400)
		requireField(t, errs, "RazonSocial")
		requireField(t, errs, "Canton")
	})
	t.Run("error/body over the limit", func(t *testing.T) {
		big := make([]byte, defaultMaxMultipartBody+1)
		ct, body := multipartBody(t, companyForm("3101123456", "Empresa Grande S.A."), map[string][]byte{"Certificado": big})
		requireA7(t, w.do(t, "POST", "/api/companies/v4", &w.admin, ct, body), 413)
	})
}

// TestTenantIsolation tries every tenancy call on company A's records with
// company B's branch user: each is a 404, and nothing of A changes.
func TestTenantIsolation(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testTenantIsolation(t, newWorldOn(t, k.open(t))) })
	}
}

func testTenantIsolation(t *testing.T, w *world) {
	a := w.createCompany(t, w.admin, "3101111111", "Empresa Alfa S.A.")
	b := w.createCompany(t, w.admin, "3101222222", "Empresa Beta S.A.")
	formA := companyForm("3101111111", "Alfa Secuestrada S.A.")
	delete(formA, "Clave")
	mct, mbody := multipartBody(t, formA, nil)
	branchJSON := []byte(`{"sucursal":"009","razonComercial":"Intrusa"}`)
	webhookJSON := []byte(`{"url":"https://93.184.215.14/hooks","eventos":["documento.aceptado"]}`)
	r0 := w.do(t, "POST", fmt.Sprintf("/api/companies/%d/webhooks/v4", a.id), &a.user, "application/json", webhookJSON)
	if r0.status != 200 {
		t.Fatalf("A's webhook: %d %s", r0.status, r0.body)
	}
	hookA := num(r0.object(t)["id"])
	calls := []struct {
		name, method, path, ct string
		body                   []byte
	}{
		{"get company", "GET", fmt.Sprintf("/api/companies/%d/v4", a.id), "", nil},
		{"update company", "PUT", fmt.Sprintf("/api/companies/%d/v4", a.id), mct, mbody},
		{"update company (branches path)", "PUT", fmt.Sprintf("/api/companies/%d/branches/v4", a.id), mct, mbody},
		{"list branches", "GET", fmt.Sprintf("/api/companies/%d/branches/v4", a.id), "", nil},
		{"create branch", "POST", fmt.Sprintf("/api/companies/%d/branches/v4", a.id), "application/json", branchJSON},
		{"update branch", "PUT", fmt.Sprintf("/api/companies/%d/branches/%d/v4", a.id, a.branchID), "application/json", branchJSON},
		{"update A's branch under B", "PUT", fmt.Sprintf("/api/companies/%d/branches/%d/v4", b.id, a.branchID), "application/json", branchJSON},
		{"create user", "POST", fmt.Sprintf("/api/companies/%d/branches/%d/users/v4", a.id, a.branchID), "application/json", []byte(`{"usuario":"intruso"}`)},
		{"create user on A's branch under B", "POST", fmt.Sprintf("/api/companies/%d/branches/%d/users/v4", b.id, a.branchID), "application/json", []byte(`{"usuario":"intruso2"}`)},
		{"create company", "POST", "/api/companies/v4", mct, mbody},
		{"create company (branches path)", "POST", fmt.Sprintf("/api/companies/%d/branches/v4", a.id), mct, mbody},
		{"create reseller", "POST", "/api/resellers/v4", "application/json", []byte(`{"usuario":"intruso3"}`)},
		{"create webhook", "POST", fmt.Sprintf("/api/companies/%d/webhooks/v4", a.id), "application/json", webhookJSON},
		{"list webhooks", "GET", fmt.Sprintf("/api/companies/%d/webhooks/v4", a.id), "", nil},
		{"delete webhook", "DELETE", fmt.Sprintf("/api/companies/%d/webhooks/%d/v4", a.id, hookA), "", nil},
		{"delete A's webhook under B", "DELETE", fmt.Sprintf("/api/companies/%d/webhooks/%d/v4", b.id, hookA), "", nil},
		{"delivery log", "GET", fmt.Sprintf("/api/companies/%d/webhooks/%d/deliveries/v4", a.id, hookA), "", nil},
		{"A's delivery log under B", "GET", fmt.Sprintf("/api/companies/%d/webhooks/%d/deliveries/v4", b.id, hookA), "", nil},
	}
	for _, c := range calls {
		t.Run("error/"+c.name, func(t *testing.T) {
			r := w.do(t, c.method, c.path, &b.user, c.ct, c.body)
			errs := requireA7(t, r, 404)
			if len(errs) != 0 {
				t.Errorf("404 names fields: %v", errs)
			}
		})
	}
	// Search never shows A to B.
	r := w.do(t, "GET", "/api/companies/v4?Name=alfa", &b.user, "", nil)
	if list := r.array(t); len(list) != 0 {
		t.Errorf("B's search finds %s", r.body)
	}
	// A is untouched.
	r = w.do(t, "GET", fmt.Sprintf("/api/companies/%d/v4", a.id), &a.user, "", nil)
	if m := r.object(t); m["razonSocial"] != "Empresa Alfa S.A." {
		t.Errorf("A changed: %v", m)
	}
	r = w.do(t, "GET", fmt.Sprintf("/api/companies/%d/branches/v4", a.id), &a.user, "", nil)
	if list := r.array(t); len(list) != 1 || list[0]["razonComercial"] == "Intrusa" {
		t.Errorf("A's branches changed: %s", r.body)
	}
	r = w.do(t, "GET", fmt.Sprintf("/api/companies/%d/webhooks/v4", a.id), &a.user, "", nil)
	if list := r.array(t); len(list) != 1 || num(list[0]["id"]) != hookA {
		t.Errorf("A's webhooks changed: %s", r.body)
	}
}

func TestWarmAuthSkipsSlowHash(t *testing.T) {
	w := newWorld(t)
	co := w.createCompany(t, w.admin, "3101123456", "Empresa Caliente S.A.")
	path := fmt.Sprintf("/api/companies/%d/branches/v4", co.id)
	if r := w.do(t, "GET", path, &co.user, "", nil); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	before := w.hasher.verifies.Load()
	for i := 0; i < 20; i++ {
		if r := w.do(t, "GET", path, &co.user, "", nil); r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	if n := w.hasher.verifies.Load() - before; n != 0 {
		t.Errorf("%d slow hash checks on the warm path", n)
	}
	// A wrong password for a cached token is still refused.
	bad := co.user
	bad.pass += "x"
	requireA7(t, w.do(t, "GET", path, &bad, "", nil), 401)
}
