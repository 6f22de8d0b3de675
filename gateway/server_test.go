package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/valyala/fasthttp"

	"facturad/hacienda/msg"
	"facturad/tenant"
)

// fakeTenants is a test double of Tenants for the gateway's own machinery;
// the tenancy behaviour itself is tested against the real tenant.Service in
// integration_test.go.
type fakeTenants struct {
	mu         sync.Mutex
	branchIn   tenant.BranchInput
	companyIn  tenant.CompanyInput
	branchesFn func(ctx context.Context) ([]tenant.Branch, error)
	userErr    error
	audits     []tenant.AuditEntry // recorded
	auditErr   error               // RecordAudit's answer
}

var (
	fakeUser   = creds{token: "tok-1", user: "u1", pass: "p1"}
	fakeBranch = creds{token: "tok-b", user: "b1", pass: "p1"} // company 2, branch 3
)

func (f *fakeTenants) Authenticate(_ context.Context, token, username, password string) (tenant.Principal, error) {
	if token == "store-down" {
		return tenant.Principal{}, errors.New("store unreachable")
	}
	if token == fakeUser.token && username == fakeUser.user && password == fakeUser.pass {
		return tenant.Principal{UserID: 1, Username: username, Role: tenant.RoleAdmin}, nil
	}
	if token == fakeBranch.token && username == fakeBranch.user && password == fakeBranch.pass {
		return tenant.Principal{UserID: 2, Username: username, Role: tenant.RoleBranch, CompanyID: 2, BranchID: 3}, nil
	}
	return tenant.Principal{}, tenant.ErrUnauthenticated
}

func (f *fakeTenants) CreateReseller(_ context.Context, _ tenant.Principal, username string) (tenant.Credentials, error) {
	return tenant.Credentials{Usuario: username, Contrasena: "pw", APIToken: "tk"}, nil
}

func (f *fakeTenants) SearchCompanies(context.Context, tenant.Principal, string) ([]tenant.Company, error) {
	return nil, nil
}

func (f *fakeTenants) Company(_ context.Context, _ tenant.Principal, id int64) (tenant.CompanyDetail, error) {
	if id == 666 {
		panic("boom")
	}
	return tenant.CompanyDetail{}, tenant.ErrNotFound
}

func (f *fakeTenants) CreateCompany(_ context.Context, _ tenant.Principal, in tenant.CompanyInput) (tenant.CreatedCompany, error) {
	f.mu.Lock()
	f.companyIn = in
	f.mu.Unlock()
	return tenant.CreatedCompany{Company: tenant.Company{ID: 7, RazonSocial: in.RazonSocial, Activo: true}, Branch: tenant.Branch{ID: 9, Sucursal: "001"}}, nil
}

func (f *fakeTenants) UpdateCompany(context.Context, tenant.Principal, int64, tenant.CompanyInput) (tenant.Company, error) {
	return tenant.Company{}, errors.New("store on fire")
}

func (f *fakeTenants) Branches(ctx context.Context, _ tenant.Principal, _ int64) ([]tenant.Branch, error) {
	if f.branchesFn != nil {
		return f.branchesFn(ctx)
	}
	return []tenant.Branch{{ID: 3, CompanyID: 2, Sucursal: "001", Activo: true,
		CreatedAt: time.Date(2026, 11, 21, 20, 3, 0, 500, time.UTC)}}, nil
}

func (f *fakeTenants) CreateBranch(_ context.Context, _ tenant.Principal, companyID int64, in tenant.BranchInput) (tenant.Branch, tenant.Credentials, error) {
	f.mu.Lock()
	f.branchIn = in
	f.mu.Unlock()
	if in.Sucursal == "002" {
		return tenant.Branch{}, tenant.Credentials{}, fmt.Errorf("insert: %w", tenant.ErrConflict)
	}
	if in.Sucursal == "bad" {
		return tenant.Branch{}, tenant.Credentials{}, testFieldErr{"sucursal": {msg.SucursalCode.With()}}
	}
	return tenant.Branch{ID: 4, CompanyID: companyID, Sucursal: in.Sucursal}, tenant.Credentials{Usuario: "x", Contrasena: "y", APIToken: "z"}, nil
}

func (f *fakeTenants) UpdateBranch(context.Context, tenant.Principal, int64, int64, tenant.BranchInput) (tenant.Branch, error) {
	return tenant.Branch{}, tenant.ErrNotFound
}

func (f *fakeTenants) CreateAPIUser(context.Context, tenant.Principal, int64, int64, string) (tenant.Credentials, error) {
	return tenant.Credentials{}, f.userErr
}

func (f *fakeTenants) BranchUsers(context.Context, tenant.Principal, int64, int64) ([]tenant.APIUser, error) {
	return nil, f.userErr
}

func (f *fakeTenants) SetBranchUserActive(context.Context, tenant.Principal, int64, int64, int64, bool) (tenant.APIUser, error) {
	return tenant.APIUser{}, f.userErr
}

func (f *fakeTenants) RotateAPIToken(context.Context, tenant.Principal, int64, int64, int64) (tenant.Credentials, error) {
	return tenant.Credentials{}, f.userErr
}

func (f *fakeTenants) RecordAudit(_ context.Context, e tenant.AuditEntry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.auditErr != nil {
		return f.auditErr
	}
	f.audits = append(f.audits, e)
	return nil
}

type testFieldErr map[string][]msg.Message

func (e testFieldErr) Error() string                           { return "invalid" }
func (e testFieldErr) FieldMessages() map[string][]msg.Message { return e }

func TestAuthentication(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}})
	path := "/api/companies/2/branches/v4"
	tests := []struct {
		name   string
		c      *creds
		hdr    []string
		status int
	}{
		{"ok/pair", &fakeUser, nil, 200},
		{"error/none", nil, nil, 401},
		{"error/wrong password", &creds{fakeUser.token, fakeUser.user, "nope"}, nil, 401},
		{"error/wrong token", &creds{"other", fakeUser.user, fakeUser.pass}, nil, 401},
		{"error/token only", nil, []string{"AuthToken", fakeUser.token}, 401},
		{"error/basic only", nil, []string{"Authorization", "Basic dTE6cDE="}, 401},
		{"error/bearer", nil, []string{"AuthToken", fakeUser.token, "Authorization", "Bearer x"}, 401},
		{"error/bad base64", nil, []string{"AuthToken", fakeUser.token, "Authorization", "Basic %%%"}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.do(t, "GET", path, tt.c, "", nil, tt.hdr...)
			if tt.status == 200 {
				if r.status != 200 {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				return
			}
			errs := requireA7(t, r, tt.status)
			if len(errs) != 0 {
				t.Errorf("401 errors should be empty: %v", errs)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}})
	r := b.do(t, "GET", "/api/companies/2/branches/v4", &fakeUser, "", nil, "X-Request-Id", "abc-123.x")
	if got := r.header.Get("X-Request-Id"); got != "abc-123.x" {
		t.Errorf("sane id not echoed: %q", got)
	}
	r1 := b.do(t, "GET", "/api/companies/2/branches/v4", &fakeUser, "", nil, "X-Request-Id", "bad id<script>")
	r2 := b.do(t, "GET", "/nowhere", nil, "", nil)
	id1, id2 := r1.header.Get("X-Request-Id"), r2.header.Get("X-Request-Id")
	if id1 == "" || id2 == "" || id1 == id2 || strings.Contains(id1, "script") {
		t.Errorf("generated ids %q %q", id1, id2)
	}
	requireA7(t, r2, 404)
}

func TestAnswersJSONShapes(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}})
	r := b.do(t, "GET", "/api/companies/2/branches/v4", &fakeUser, "", nil)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("content type %q despite accept: text/plain", ct)
	}
	list := r.array(t)
	if len(list) != 1 {
		t.Fatalf("want 1 branch: %s", r.body)
	}
	requireShape(t, "branch", list[0], shapeBranch)
	// 20:03 UTC is 14:03 in Costa Rica; fractions are dropped; unset is year 1.
	if got := list[0]["createdAt"]; got != "2026-11-21T14:03:00" {
		t.Errorf("createdAt %v", got)
	}
	if got := list[0]["updatedAt"]; got != "0001-01-01T00:00:00" {
		t.Errorf("updatedAt %v", got)
	}
}

func TestBranchInputDecoding(t *testing.T) {
	f := &fakeTenants{}
	b := setup(t, Options{Tenants: f})
	tests := []struct {
		name  string
		body  string
		want  tenant.BranchInput
		field string // a 400 on this field when set
	}{
		{"ok/camel", `{"sucursal":"003","razonComercial":"Tienda","monedaLocal":"CRC","monedaExtranjera":"USD","verMonedaExtranjera":"S","barrio":null}`,
			tenant.BranchInput{Sucursal: "003", RazonComercial: "Tienda", MonedaLocal: "CRC", MonedaExtranjera: "USD", VerMonedaExtranjera: "S"}, ""},
		{"ok/pascal and alternates", `{"Sucursal":"004","RazonComercial":"Otra","MonedaIdLocal":"CRC","MonedaIdExtranjera":"EUR","VerMonedaExtranjera":false,"Telefono":22223333}`,
			tenant.BranchInput{Sucursal: "004", RazonComercial: "Otra", MonedaLocal: "CRC", MonedaExtranjera: "EUR", VerMonedaExtranjera: "N", Telefono: "22223333"}, ""},
		{"error/one field in three spellings", `{"sucursal":"006","Sucursal":"007","SUCURSAL":"008"}`,
			tenant.BranchInput{}, "sucursal"},
		{"error/unknown name", `{"sucursal":"006","razon_comercial":"x"}`, tenant.BranchInput{}, "razon_comercial"},
		{"error/trailing data", `{"sucursal":"005"} {}`, tenant.BranchInput{}, "body"},
		{"error/flag", `{"sucursal":"005","verMonedaExtranjera":"maybe"}`, tenant.BranchInput{}, "verMonedaExtranjera"},
		{"error/object for string", `{"sucursal":{"a":1}}`, tenant.BranchInput{}, "sucursal"},
		{"error/invalid json", `{"sucursal":`, tenant.BranchInput{}, "body"},
		{"error/array", `[1,2]`, tenant.BranchInput{}, "body"},
		{"error/empty", ``, tenant.BranchInput{}, "body"},
		{"error/conflict", `{"sucursal":"002"}`, tenant.BranchInput{}, "sucursal"},
		{"error/field errors", `{"sucursal":"bad"}`, tenant.BranchInput{}, "sucursal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.do(t, "POST", "/api/companies/2/branches/v4", &fakeUser, "application/json", []byte(tt.body))
			if tt.field != "" {
				requireField(t, requireA7(t, r, 400), tt.field)
				return
			}
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			requireShape(t, "branch create", r.object(t), shapeBranchCreate)
			f.mu.Lock()
			got := f.branchIn
			f.mu.Unlock()
			if got != tt.want {
				t.Errorf("input\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestCompanyMultipartDecoding(t *testing.T) {
	f := &fakeTenants{}
	b := setup(t, Options{Tenants: f})
	values := map[string]string{
		"tipoIdentificacion": "02", "IDENTIFICACION": "3101123456", "RazonSocial": "Ñandú S.A.",
		"FacturacionElectronica": "true", "Clave": "1234", "ContrasenaHacienda": "secret",
		"MonedaLocal": "CRC", "provincia": "1", "Canton": "01", "DISTRITO": "01", "OtrasSenas": "Avenida central",
		"CorreoElectronico": "facturas@example.com",
	}
	for _, path := range []string{"/api/companies/v4", "/api/companies/0/branches/v4"} {
		ct, body := multipartBody(t, values, map[string][]byte{"Certificado": []byte("p12 bytes")})
		r := b.do(t, "POST", path, &fakeUser, ct, body)
		if r.status != 200 {
			t.Fatalf("%s: status %d: %s", path, r.status, r.body)
		}
		requireShape(t, "company create", r.object(t), shapeCompanyCreate)
		f.mu.Lock()
		in := f.companyIn
		f.mu.Unlock()
		if in.TipoIdentificacion != "02" || in.Identificacion != "3101123456" || in.RazonSocial != "Ñandú S.A." ||
			!in.FacturacionElectronica || string(in.CertificatePIN) != "1234" || string(in.ContrasenaHacienda) != "secret" ||
			string(in.Certificate) != "p12 bytes" || in.MonedaLocal != "CRC" {
			t.Errorf("%s: decoded %+v", path, in)
		}
	}
	// A company form must be a form.
	r := b.do(t, "POST", "/api/companies/v4", &fakeUser, "application/json", []byte(`{"RazonSocial":"x"}`))
	requireField(t, requireA7(t, r, 400), "body")
	// The certificate must be a file.
	ct, body := multipartBody(t, map[string]string{"Certificado": "not a file"}, nil)
	r = b.do(t, "POST", "/api/companies/v4", &fakeUser, ct, body)
	requireField(t, requireA7(t, r, 400), "Certificado")
	// A bad boolean names its field.
	ct, body = multipartBody(t, map[string]string{"FacturacionElectronica": "quizas"}, nil)
	r = b.do(t, "POST", "/api/companies/v4", &fakeUser, ct, body)
	requireField(t, requireA7(t, r, 400), "FacturacionElectronica")
}

func TestBodyLimits(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}, MaxJSONBody: 1 << 10, MaxMultipartBody: 64 << 10})
	big := []byte(`{"sucursal":"003","razonComercial":"` + strings.Repeat("x", 2<<10) + `"}`)
	r := b.do(t, "POST", "/api/companies/2/branches/v4", &fakeUser, "application/json", big)
	requireA7(t, r, 413)

	// The same size is fine as a multipart company form...
	ct, body := multipartBody(t, companyForm("3101123456", "Empresa S.A."), map[string][]byte{"Certificado": bytes.Repeat([]byte{1}, 8<<10)})
	r = b.do(t, "POST", "/api/companies/2/branches/v4", &fakeUser, ct, body)
	if r.status != 200 {
		t.Fatalf("multipart under its limit: %d %s", r.status, r.body)
	}
	// ...up to the multipart limit.
	ct, body = multipartBody(t, map[string]string{"RazonSocial": "x"}, map[string][]byte{"Certificado": bytes.Repeat([]byte{1}, 70<<10)})
	r = b.do(t, "POST", "/api/companies/v4", &fakeUser, ct, body)
	requireA7(t, r, 413)
	// A client that asks first (Expect: 100-continue) hears 413 before it
	// sends the body.
	conn, err := b.apiLn.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.Write([]byte("POST /api/companies/v4 HTTP/1.1\r\nHost: x\r\nAuthToken: t\r\n" +
		"Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: 99999999\r\nExpect: 100-continue\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	var resp fasthttp.Response
	if err := resp.Read(bufio.NewReader(conn)); err != nil {
		t.Fatal(err)
	}
	requireA7(t, reply{status: resp.StatusCode(), body: resp.Body()}, 413)

	// Headers past the read buffer are 431.
	r = b.do(t, "GET", "/api/companies/2/branches/v4", &fakeUser, "", nil, "X-Padding", strings.Repeat("p", 16<<10))
	requireA7(t, r, 431)

	// A route without a body takes almost none.
	r = b.do(t, "GET", "/api/companies/2/branches/v4", &fakeUser, "application/json", bytes.Repeat([]byte{' '}, 8<<10))
	requireA7(t, r, 413)
}

func TestErrorMapping(t *testing.T) {
	f := &fakeTenants{}
	b := setup(t, Options{Tenants: f})

	t.Run("error/not found", func(t *testing.T) {
		requireA7(t, b.do(t, "GET", "/api/companies/5/v4", &fakeUser, "", nil), 404)
		requireA7(t, b.do(t, "PUT", "/api/companies/5/branches/6/v4", &fakeUser, "application/json", []byte(`{}`)), 404)
	})
	t.Run("error/bad id", func(t *testing.T) {
		requireField(t, requireA7(t, b.do(t, "GET", "/api/companies/abc/v4", &fakeUser, "", nil), 400), "id")
	})
	t.Run("error/user conflict", func(t *testing.T) {
		f.userErr = fmt.Errorf("insert user: %w", tenant.ErrConflict)
		defer func() { f.userErr = nil }()
		r := b.do(t, "POST", "/api/companies/1/branches/2/users/v4", &fakeUser, "application/json", []byte(`{"usuario":"a"}`))
		requireField(t, requireA7(t, r, 400), "usuario")
	})
	t.Run("error/A.6 500 carries the answer", func(t *testing.T) {
		f.userErr = errors.New("disk full at /var/secret")
		defer func() { f.userErr = nil }()
		r := b.do(t, "POST", "/api/companies/1/branches/2/users/v4", &fakeUser, "application/json", []byte(`{"usuario":"a"}`))
		if r.status != 500 {
			t.Fatalf("status %d", r.status)
		}
		m := r.object(t)
		requireShape(t, "user create 500", m, shapeCredentials)
		code := incidentIn(t, m["mensaje_api"].(string))
		if strings.Contains(string(r.body), "disk full") {
			t.Error("cause leaked into the body")
		}
		if m["mensaje_api_key"] != "internal_error" {
			t.Errorf("mensaje_api_key %v, want internal_error", m["mensaje_api_key"])
		}
		requireLogged(t, b, code, "disk full")
		// In Spanish when asked, with the same code.
		r = b.do(t, "POST", "/api/companies/1/branches/2/users/v4", &fakeUser, "application/json", []byte(`{"usuario":"a"}`), "Accept-Language", "es-CR")
		m = r.object(t)
		if es, _ := m["mensaje_api"].(string); r.status != 500 || !spanishIncidentRE.MatchString(es) || m["mensaje_api_key"] != "internal_error" {
			t.Errorf("in Spanish: %d %s", r.status, r.body)
		}
	})
	t.Run("error/commit outcome unknown is a 500 that says to check first", func(t *testing.T) {
		// The COMMIT's deadline ran out on its way: not the 503 of a
		// deadline, which tells the client to send the create again.
		f.userErr = tenant.OutcomeUnknown(fmt.Errorf("commit at db-7: %w", context.DeadlineExceeded))
		defer func() { f.userErr = nil }()
		r := b.do(t, "POST", "/api/companies/1/branches/2/users/v4", &fakeUser, "application/json", []byte(`{"usuario":"a"}`))
		if r.status != 500 || r.header.Get("Retry-After") != "" {
			t.Fatalf("status %d, Retry-After %q: %s; want 500 without Retry-After", r.status, r.header.Get("Retry-After"), r.body)
		}
		m := r.object(t)
		requireShape(t, "user create 500", m, shapeCredentials)
		msg := m["mensaje_api"].(string)
		if !strings.HasPrefix(msg, msgApology) || !strings.Contains(msg, "it may have been made") ||
			!strings.Contains(msg, "before sending the request again") {
			t.Errorf("message %q does not say the change may have been made and to check first", msg)
		}
		if m["mensaje_api_key"] != "outcome_unknown" {
			t.Errorf("mensaje_api_key %v, want outcome_unknown", m["mensaje_api_key"])
		}
		if strings.Contains(string(r.body), "db-7") {
			t.Error("cause leaked into the body")
		}
		requireLogged(t, b, incidentIn(t, msg), "db-7")
	})
	t.Run("error/A.6 500 on company update", func(t *testing.T) {
		ct, body := multipartBody(t, map[string]string{"RazonSocial": "x"}, nil)
		r := b.do(t, "PUT", "/api/companies/3/v4", &fakeUser, ct, body)
		if r.status != 500 {
			t.Fatalf("status %d", r.status)
		}
		m := r.object(t)
		requireShape(t, "company update 500", m, shapeCompanyUpdate)
		requireLogged(t, b, incidentIn(t, m["mensajeApi"].(string)), "store on fire")
	})
	t.Run("error/authentication failure is severe, in the call's form", func(t *testing.T) {
		down := creds{token: "store-down", user: "u", pass: "p"}
		r := b.do(t, "POST", "/api/companies/1/branches/v4", &down, "application/json", []byte(`{"sucursal":"003"}`))
		if r.status != 500 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		m := r.object(t)
		requireShape(t, "branch create 500", m, shapeBranchCreate)
		requireLogged(t, b, incidentIn(t, m["mensajeApi"].(string)), "store unreachable")
		if id := m["id"]; id != float64(0) {
			t.Errorf("id %v in a failure", id)
		}
		r = b.do(t, "GET", "/api/companies/1/branches/v4", &down, "", nil)
		if r.status != 500 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		msg, _ := r.object(t)["error"].(string)
		requireLogged(t, b, incidentIn(t, msg), "store unreachable")
	})
	t.Run("error/panic", func(t *testing.T) {
		r := b.do(t, "GET", "/api/companies/666/v4", &fakeUser, "", nil)
		if r.status != 500 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		m := r.object(t)
		msg, _ := m["error"].(string)
		incident := incidentIn(t, msg)
		requireLogged(t, b, incident, "boom")
		if m["code"] != "internal_error" || m["incident"] != incident {
			t.Errorf("severe body %s: want code internal_error and incident %s", r.body, incident)
		}
		// The server still serves.
		if r := b.do(t, "GET", "/api/companies/2/branches/v4", &fakeUser, "", nil); r.status != 200 {
			t.Errorf("after panic: %d", r.status)
		}
	})
	t.Run("error/method not allowed", func(t *testing.T) {
		requireA7(t, b.do(t, "DELETE", "/api/companies/v4", &fakeUser, "", nil), 405)
	})
	t.Run("error/put branches path without a form", func(t *testing.T) {
		r := b.do(t, "PUT", "/api/companies/3/branches/v4", &fakeUser, "application/json", []byte(`{}`))
		requireField(t, requireA7(t, r, 400), "body")
	})
}

var incidentRE = regexp.MustCompile(`incident ([0-9A-F]{10})`)

// spanishIncidentRE matches the Spanish apology of a 500 with its
// incident code.
var spanishIncidentRE = regexp.MustCompile(`^Lo sentimos.* incidente [0-9A-F]{10}\.$`)

func incidentIn(t testing.TB, msg string) string {
	t.Helper()
	m := incidentRE.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("no incident code in %q", msg)
	}
	return m[1]
}

// requireLogged fails unless one log record holds the incident code and
// the cause.
func requireLogged(t testing.TB, b *testBundle, code, cause string) {
	t.Helper()
	for _, line := range strings.Split(b.logs.String(), "\n") {
		if strings.Contains(line, code) && strings.Contains(line, cause) {
			return
		}
	}
	t.Errorf("incident %s with cause %q not logged:\n%s", code, cause, b.logs.String())
}

func TestMetrics(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}})
	b.do(t, "GET", "/api/companies/2/branches/v4", &fakeUser, "", nil)
	b.do(t, "GET", "/api/companies/3/branches/v4", &fakeUser, "", nil)
	b.do(t, "GET", "/api/companies/3/branches/v4", nil, "", nil)
	b.do(t, "GET", "/no/such/thing", nil, "", nil)
	ok := testutil.ToFloat64(b.srv.metrics.requests.WithLabelValues(pathBranches, "GET", "2xx"))
	unauth := testutil.ToFloat64(b.srv.metrics.requests.WithLabelValues(pathBranches, "GET", "4xx"))
	unmatched := testutil.ToFloat64(b.srv.metrics.requests.WithLabelValues("unmatched", "", "4xx"))
	if ok != 2 || unauth != 1 || unmatched != 1 {
		t.Errorf("counts ok=%v unauth=%v unmatched=%v", ok, unauth, unmatched)
	}
	r := doWith(t, b.admin, "GET", "/metrics", nil, "", nil)
	// A company's own management shares its histogram (one per method).
	if r.status != 200 || !bytes.Contains(r.body, []byte(`facturad_http_request_duration_seconds_bucket{method="GET",route="other",le=`)) ||
		bytes.Contains(r.body, []byte(`facturad_http_request_duration_seconds_bucket{method="GET",route="/api/companies/{companyId}/branches/v4"`)) {
		t.Errorf("/metrics: %d\n%s", r.status, r.body)
	}
	if bytes.Contains(r.body, []byte(`/no/such/thing`)) || bytes.Contains(r.body, []byte(`route="/api/companies/3`)) {
		t.Error("a raw path became a label")
	}
}

// Only the 2xx, 4xx and 5xx counters exist before traffic, and shed on a
// route that sheds (Route.Sheds); 1xx and 3xx (and shed elsewhere)
// counters and the route's duration histogram appear with their first
// answer, and the histogram is one whatever the classes answered: the
// route's own on a document's path, the one shared by the other routes of
// its method elsewhere.
func TestMetricsSeriesOnFirstUse(t *testing.T) {
	for _, tt := range []struct {
		name, path, pattern, histogram string
		sheds                          bool
	}{
		{"a company's management", "/api/companies/%d/branches/v4", pathBranches, SharedLatencyRoute, false},
		{"a document's path", "/api/documents/%d/xml/v4", "/api/documents/{clave}/xml/v4", "/api/documents/{clave}/xml/v4", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, Options{Tenants: &fakeTenants{}, Routes: []Route{{Method: "GET", Path: "/api/documents/{clave}/xml/v4", Sheds: true,
				Handle: func(context.Context, *Request) (Reply, error) {
					return Reply{Body: []byte("<FacturaElectronica/>"), ContentType: "application/xml"}, nil
				}}}})
			series := func() (counters, histograms string) {
				t.Helper()
				r := doWith(t, b.admin, "GET", "/metrics", nil, "", nil)
				var cs, hs []string
				for _, l := range strings.Split(string(r.body), "\n") {
					if strings.Contains(l, `facturad_http_requests_total{method="GET",route="`+tt.pattern+`"`) {
						cs = append(cs, l)
					}
					if strings.Contains(l, `facturad_http_request_duration_seconds_count{method="GET",route="`) {
						hs = append(hs, l)
					}
				}
				return strings.Join(cs, "\n"), strings.Join(hs, "\n")
			}
			before, hist := series()
			classes, absent := []string{"2xx", "4xx", "5xx"}, []string{`status="1xx"`, `status="3xx"`}
			if tt.sheds {
				classes = append(classes, "shed")
			} else {
				absent = append(absent, `status="shed"`)
			}
			for _, class := range classes {
				if !strings.Contains(before, `facturad_http_requests_total{method="GET",route="`+tt.pattern+`",status="`+class+`"} 0`) {
					t.Errorf("no %s counter at zero before traffic:\n%s", class, before)
				}
			}
			for _, absent := range absent {
				if strings.Contains(before, absent) {
					t.Errorf("%s exported before traffic:\n%s", absent, before)
				}
			}
			if hist != "" {
				t.Errorf("a GET histogram before traffic:\n%s", hist)
			}
			b.do(t, "GET", fmt.Sprintf(tt.path, 2), &fakeUser, "", nil)
			_, hist = series()
			if !strings.Contains(hist, `facturad_http_request_duration_seconds_count{method="GET",route="`+tt.histogram+`"} 1`) {
				t.Errorf("no histogram %q after a 2xx answer:\n%s", tt.histogram, hist)
			}
			b.do(t, "GET", fmt.Sprintf(tt.path, 3), nil, "", nil) // 401
			_, hist = series()
			if hist != `facturad_http_request_duration_seconds_count{method="GET",route="`+tt.histogram+`"} 2` {
				t.Errorf("want the 4xx answer in the route's one histogram %q, and no other:\n%s", tt.histogram, hist)
			}
		})
	}
}

// switchable is a readiness check whose answer a test sets.
type switchable struct {
	mu  sync.Mutex
	err error
}

func (c *switchable) Ready(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *switchable) set(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
}

// hang is a readiness check that answers only when its context ends.
type hang struct{}

func (hang) Ready(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

func TestHealthAndReadiness(t *testing.T) {
	store, redis := &switchable{}, &switchable{}
	b := setup(t, Options{Tenants: &fakeTenants{}, Ready: store,
		ReadyChecks: []ReadyCheck{{Name: "redis", Check: redis, Degrades: true}}})
	if r := doWith(t, b.admin, "GET", "/healthz", nil, "", nil); r.status != 200 {
		t.Errorf("healthz %d", r.status)
	}
	// The causes quote what must not leave the process.
	secret := errors.New("dial tcp 10.0.0.7:5432: password authentication failed for user facturad (postgres://facturad:hunter2@db)")
	tests := []struct {
		name         string
		store, redis error
		status       int
		want         string
		checks       map[string]string
	}{
		{"ok/everything up", nil, nil, 200, "ready", map[string]string{"store": "ok", "redis": "ok"}},
		{"ok/redis down is degraded", nil, secret, 200, "degraded", map[string]string{"store": "ok", "redis": "down: unreachable"}},
		{"error/store down is not ready", secret, nil, 503, "not ready", map[string]string{"store": "down: unreachable", "redis": "ok"}},
		{"error/both down", secret, secret, 503, "not ready", map[string]string{"store": "down: unreachable", "redis": "down: unreachable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store.set(tt.store)
			redis.set(tt.redis)
			r := doWith(t, b.admin, "GET", "/readyz", nil, "", nil)
			if r.status == 503 {
				requireA7(t, r, 503)
				if r.header.Get("Retry-After") == "" {
					t.Error("503 without Retry-After")
				}
			}
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			var body struct {
				Status string            `json:"status"`
				Checks map[string]string `json:"checks"`
			}
			if err := json.Unmarshal(r.body, &body); err != nil {
				t.Fatalf("body %s: %v", r.body, err)
			}
			if body.Status != tt.want || !maps.Equal(body.Checks, tt.checks) {
				t.Errorf("body %s, want status %q checks %v", r.body, tt.want, tt.checks)
			}
			for _, leak := range []string{"hunter2", "10.0.0.7", "postgres://", "facturad:"} {
				if bytes.Contains(r.body, []byte(leak)) {
					t.Errorf("the body quotes %q: %s", leak, r.body)
				}
			}
		})
	}
}

func TestReadinessTimeout(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}, Ready: ReadyFunc(func(context.Context) error { return nil }),
		ReadyChecks: []ReadyCheck{{Name: "redis", Check: hang{}, Degrades: true}}, ReadyTimeout: 50 * time.Millisecond})
	start := time.Now()
	r := doWith(t, b.admin, "GET", "/readyz", nil, "", nil)
	if r.status != 200 || !bytes.Contains(r.body, []byte(`"redis":"down: no answer within 50ms"`)) || !bytes.Contains(r.body, []byte(`"status":"degraded"`)) {
		t.Errorf("hanging redis: %d %s", r.status, r.body)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("/readyz took %s with a 50ms check timeout", d)
	}
}

func TestReadinessChecksValidated(t *testing.T) {
	ok := ReadyFunc(func(context.Context) error { return nil })
	tests := []struct {
		name string
		o    Options
	}{
		{"error/no name", Options{ReadyChecks: []ReadyCheck{{Check: ok}}}},
		{"error/no check", Options{ReadyChecks: []ReadyCheck{{Name: "redis"}}}},
		{"error/twice the same name", Options{ReadyChecks: []ReadyCheck{{Name: "redis", Check: ok}, {Name: "redis", Check: ok}}}},
		{"error/store taken by Ready", Options{Ready: ok, ReadyChecks: []ReadyCheck{{Name: "store", Check: ok}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Tenants = &fakeTenants{}
			if _, err := New(tt.o); err == nil {
				t.Error("New accepted the checks")
			}
		})
	}
}

func TestGracefulShutdown(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	f := &fakeTenants{branchesFn: func(ctx context.Context) ([]tenant.Branch, error) {
		close(entered)
		<-release
		return []tenant.Branch{{ID: 1}}, ctx.Err()
	}}
	b := setup(t, Options{Tenants: f})

	done := make(chan reply, 1)
	go func() { done <- b.do(t, "GET", "/api/companies/2/branches/v4", &fakeUser, "", nil) }()
	<-entered

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- b.srv.Shutdown(ctx)
	}()
	// Readiness fails while the request is still in flight.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := doWith(t, b.admin, "GET", "/readyz", nil, "", nil)
		if r.status == 503 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("readyz never failed during shutdown")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned with a request in flight: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	r := <-done
	if r.status != 200 {
		t.Fatalf("in-flight request: %d %s", r.status, r.body)
	}
	if got := r.header.Get("Connection"); !strings.EqualFold(got, "close") {
		t.Errorf("in-flight answer during shutdown has Connection %q", got)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := <-b.served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
}

// TestDrainDelay: Shutdown fails /readyz at once, keeps serving new
// connections for DrainDelay, then refuses them and lets the request in
// flight finish.
func TestDrainDelay(t *testing.T) {
	const drain = 500 * time.Millisecond
	entered := make(chan struct{})
	release := make(chan struct{})
	f := &fakeTenants{branchesFn: func(ctx context.Context) ([]tenant.Branch, error) {
		close(entered)
		<-release
		return []tenant.Branch{{ID: 1}}, ctx.Err()
	}}
	b := setup(t, Options{Tenants: f, DrainDelay: drain})
	done := make(chan reply, 1)
	go func() { done <- b.do(t, "GET", "/api/companies/2/branches/v4", &fakeUser, "", nil) }()
	<-entered

	start := time.Now()
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- b.srv.Shutdown(ctx)
	}()
	fresh := func() *fasthttp.Client { // a new connection for each call
		return &fasthttp.Client{Dial: func(string) (net.Conn, error) { return b.apiLn.Dial() }, ReadTimeout: 5 * time.Second}
	}
	for doWith(t, b.admin, "GET", "/readyz", nil, "", nil).status != 503 {
		if time.Since(start) > 100*time.Millisecond {
			t.Fatal("readyz did not fail at once")
		}
		time.Sleep(time.Millisecond)
	}
	served := 0
	for time.Since(start) < drain-100*time.Millisecond {
		r := doWith(t, fresh(), "GET", "/api/companies/v4", &fakeUser, "", nil)
		if r.status != 200 {
			t.Fatalf("%s into the drain: %d %s", time.Since(start), r.status, r.body)
		}
		if !strings.EqualFold(r.header.Get("Connection"), "close") {
			t.Errorf("an answer during the drain keeps its connection open")
		}
		if got := doWith(t, b.admin, "GET", "/readyz", nil, "", nil).status; got != 503 {
			t.Fatalf("readyz %d during the drain", got)
		}
		served++
	}
	if served == 0 {
		t.Fatal("no call made during the drain")
	}
	if r := doWith(t, fresh(), "GET", "/nowhere", nil, "", nil); r.status != 404 || !strings.EqualFold(r.header.Get("Connection"), "close") {
		t.Errorf("an unmatched path during the drain: %d, Connection %q", r.status, r.header.Get("Connection"))
	}
	for {
		conn, err := b.apiLn.Dial()
		if err != nil {
			break
		}
		conn.Close()
		if time.Since(start) > drain+2*time.Second {
			t.Fatal("the API listener still accepts after the drain")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if d := time.Since(start); d < drain {
		t.Errorf("the API listener closed %s into a drain of %s", d, drain)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned with a request in flight: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if r := <-done; r.status != 200 {
		t.Fatalf("in-flight request: %d %s", r.status, r.body)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestExtraRoutes(t *testing.T) {
	var got *Request
	b := setup(t, Options{Tenants: &fakeTenants{}, Routes: []Route{{
		Method: "POST", Path: "/api/documents/{clave}/v4",
		Handle: func(_ context.Context, r *Request) (Reply, error) {
			got = r
			if r.Params["clave"] == "missing" {
				return Reply{}, tenant.ErrNotFound
			}
			return Reply{Status: 201, JSON: map[string]string{"clave": r.Params["clave"]}}, nil
		},
	}}})
	r := b.do(t, "POST", "/api/documents/506/v4?includeData=true", &fakeUser, "application/json", []byte(`{"a":1}`))
	if r.status != 201 || got == nil || got.Principal.Username != "u1" || got.Query.Get("includeData") != "true" || string(got.Body) != `{"a":1}` {
		t.Fatalf("extra route: %d %s %+v", r.status, r.body, got)
	}
	requireA7(t, b.do(t, "POST", "/api/documents/missing/v4", &fakeUser, "application/json", []byte(`{}`)), 404)
	requireA7(t, b.do(t, "POST", "/api/documents/506/v4", nil, "application/json", []byte(`{}`)), 401)
}

func TestOpenAPIListsEveryRoute(t *testing.T) {
	// Every route the package makes is registered (never called) so that
	// it is held to the description too.
	b := setup(t, Options{Tenants: &fakeTenants{}, Routes: serviceRoutes(t, routeDeps{})})
	r := b.do(t, "GET", "/openapi.json", nil, "", nil)
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi version %q", doc.OpenAPI)
	}
	// Every served API route is described under its own pattern, path
	// parameter names included, which is also the route label of its
	// metrics; and every described path is served.
	served := map[string]bool{}
	for _, rt := range b.srv.routes {
		if rt.public {
			continue
		}
		if rt.m.pattern != rt.pattern {
			t.Errorf("%s %s: metrics label %q", rt.method, rt.pattern, rt.m.pattern)
		}
		served[rt.pattern+" "+strings.ToLower(rt.method)] = true
	}
	described := map[string]bool{}
	for p, ops := range doc.Paths {
		for m := range ops {
			if m == "parameters" {
				continue
			}
			described[p+" "+m] = true
		}
	}
	for k := range served {
		if !described[k] {
			t.Errorf("served but not described: %s", k)
		}
	}
	for k := range described {
		if !served[k] {
			t.Errorf("described but not served: %s", k)
		}
	}
	if r := b.do(t, "GET", "/docs", nil, "", nil); r.status != 200 || !bytes.Contains(r.body, []byte("<html")) {
		t.Errorf("/docs: %d", r.status)
	}
}

// TestShutdownNow: a server that already failed stops at once, without
// the drain delay, and still lets the request in flight finish.
func TestShutdownNow(t *testing.T) {
	const drain = 5 * time.Second
	entered := make(chan struct{})
	release := make(chan struct{})
	f := &fakeTenants{branchesFn: func(ctx context.Context) ([]tenant.Branch, error) {
		close(entered)
		<-release
		return []tenant.Branch{{ID: 1}}, ctx.Err()
	}}
	b := setup(t, Options{Tenants: f, DrainDelay: drain})
	done := make(chan reply, 1)
	go func() { done <- b.do(t, "GET", "/api/companies/2/branches/v4", &fakeUser, "", nil) }()
	<-entered

	start := time.Now()
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- b.srv.ShutdownNow(ctx)
	}()
	for {
		conn, err := b.apiLn.Dial()
		if err != nil {
			break
		}
		conn.Close()
		if time.Since(start) > drain/2 {
			t.Fatal("the API listener still accepts: ShutdownNow waited for the drain delay")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-shut:
		t.Fatalf("ShutdownNow returned with a request in flight: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if r := <-done; r.status != 200 {
		t.Fatalf("in-flight request: %d %s", r.status, r.body)
	}
	if err := <-shut; err != nil {
		t.Fatalf("ShutdownNow: %v", err)
	}
	if d := time.Since(start); d >= drain {
		t.Errorf("ShutdownNow took %s, not less than the drain delay %s", d, drain)
	}
}
