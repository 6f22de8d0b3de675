package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"facturad/hacienda/api"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/pipeline"
	"facturad/signer"
	"facturad/tenant"
	"facturad/tenant/storetest"
)

// The connection test of A.14 through the API, on the real tenant service,
// pipeline, tax-authority client and sandbox: its answer, who may run it,
// and that it is 200 whatever it finds.

var shapePruebaConexion = map[string]jsonKind{
	"ambiente": kString, "token": kString, "certificado": kString,
	"identificacionCoincide": kBool, "vencimientoCertificado": kDate,
}

// connWorld is a world whose pipeline serves the connection test against
// a sandbox that knows the companies' users, on a clock the test moves.
type connWorld struct {
	*world
	sb     *sandbox.TestServer
	sealer tenant.Sealer
	offset atomic.Int64 // added to the pipeline's and the certificates' clock
}

func newConnWorld(t *testing.T) *connWorld {
	t.Helper()
	cw := &connWorld{}
	now := func() time.Time { return time.Now().Add(time.Duration(cw.offset.Load())) }
	store := storetest.NewSQLite(t)
	w, svc := newTenantWorld(t, store, func(so *tenant.ServiceOptions) { cw.sealer = so.Sealer })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cw.sb = sandbox.NewTestServer(t, sandbox.Options{Logger: quiet})
	client, err := recepcion.New(recepcion.Options{APIURL: cw.sb.APIURL, TokenURL: cw.sb.TokenURL, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := signer.NewCache(signer.CacheOptions{Source: svc, Clock: now})
	if err != nil {
		t.Fatal(err)
	}
	docs, ok := store.(pipeline.Store)
	if !ok {
		t.Fatalf("%T keeps no documents", store)
	}
	p, err := pipeline.New(pipeline.Options{Store: docs, Issuers: svc, Signer: cache, Submitter: client, Logger: quiet,
		Clock: now, DisableRetrier: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.StopAndCancel(ctx); err != nil {
			t.Errorf("stop pipeline: %v", err)
		}
	})
	w.testBundle = setup(t, Options{Tenants: svc, Routes: []Route{ConnectionTestRoute(p)}})
	cw.world = w
	return cw
}

// companyUser is the tax-authority user companyForm gives a company.
func companyUser(id string) string {
	return "cpj-3-101-" + id[4:] + "@stag.comprobanteselectronicos.go.cr"
}

// test runs the connection test of company id as who.
func (cw *connWorld) test(t *testing.T, who creds, id int64) reply {
	t.Helper()
	return cw.do(t, "POST", fmt.Sprintf("/api/companies/%d/prueba-conexion/v4", id), &who, "", nil)
}

// connAnswer reads a 200 connection-test answer.
func connAnswer(t *testing.T, r reply) api.PruebaConexion {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d, want 200: %s", r.status, r.body)
	}
	requireShape(t, "PruebaConexion", r.object(t), shapePruebaConexion)
	m := r.object(t)
	return api.PruebaConexion{
		Ambiente: m["ambiente"].(string), Token: m["token"].(string), Certificado: m["certificado"].(string),
		IdentificacionCoincide: m["identificacionCoincide"].(bool), VencimientoCertificado: m["vencimientoCertificado"].(string),
	}
}

func TestConnectionTestRoute(t *testing.T) {
	cw := newConnWorld(t)
	good := cw.createCompany(t, cw.admin, "3101123456", "Conexión Buena S.A.")
	wrongPass := cw.createCompany(t, cw.admin, "3101222333", "Clave Vieja S.A.")
	mismatch := cw.createCompany(t, cw.admin, "3101444555", "Otro Certificado S.A.")
	// The tax authority knows the first and third with the password their
	// forms gave, the second with another one.
	cw.sb.AddUser(companyUser("3101123456"), "hacienda-pass")
	cw.sb.AddUser(companyUser("3101222333"), "the password changed at the tax authority")
	cw.sb.AddUser(companyUser("3101444555"), "hacienda-pass")
	// A certificate of another taxpayer in the third's row, past the
	// upload's checks.
	other := cw.mint(t, "02", "3101999999", false)
	c, err := cw.store.Company(context.Background(), mismatch.id)
	if err != nil {
		t.Fatal(err)
	}
	if c.SealedCertificate, err = cw.sealer.Seal(c.ID, tenant.PurposeCertificate, other.P12); err != nil {
		t.Fatal(err)
	}
	if err := cw.store.UpdateCompany(context.Background(), &c, true); err != nil {
		t.Fatal(err)
	}
	expiry := api.LocalTime(good.cert.Leaf.NotAfter)

	tests := []struct {
		name string
		who  creds
		co   tenantCompany
		want api.PruebaConexion
	}{
		{"ok/the company's branch user", good.user, good,
			api.PruebaConexion{Ambiente: "pruebas", Token: "ok", Certificado: "ok", IdentificacionCoincide: true, VencimientoCertificado: expiry}},
		{"ok/the admin", cw.admin, good,
			api.PruebaConexion{Ambiente: "pruebas", Token: "ok", Certificado: "ok", IdentificacionCoincide: true, VencimientoCertificado: expiry}},
		{"error/a wrong password: the tax authority's words, still 200", wrongPass.user, wrongPass,
			api.PruebaConexion{Ambiente: "pruebas", Token: "Invalid user credentials", Certificado: "ok", IdentificacionCoincide: true,
				VencimientoCertificado: api.LocalTime(wrongPass.cert.Leaf.NotAfter)}},
		{"error/another taxpayer's certificate", mismatch.user, mismatch,
			api.PruebaConexion{Ambiente: "pruebas", Token: "ok", Certificado: "ok", IdentificacionCoincide: false,
				VencimientoCertificado: api.LocalTime(other.Leaf.NotAfter)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := connAnswer(t, cw.test(t, tt.who, tt.co.id)); got != tt.want {
				t.Errorf("answer %+v\nwant   %+v", got, tt.want)
			}
		})
	}
	if st := cw.sb.Stats(); st.Submissions != 0 || st.StatusQueries != 0 || st.PasswordGrants != 3 || st.Logouts != 3 || st.TokenRefused != 1 {
		t.Errorf("the sandbox saw %+v: want 3 logins ended at once, 1 refused, nothing sent", st)
	}

	t.Run("error/another tenant's company is 404", func(t *testing.T) {
		before := cw.sb.Stats()
		requireA7(t, cw.test(t, wrongPass.user, good.id), 404)
		r := cw.do(t, "POST", "/api/resellers/v4", &cw.admin, "application/json", []byte(`{"usuario":"revendedor.conexion"}`))
		m := r.object(t)
		reseller := creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
		requireA7(t, cw.test(t, reseller, good.id), 404)
		requireA7(t, cw.test(t, cw.admin, good.id+1000), 404)
		if after := cw.sb.Stats(); after.PasswordGrants != before.PasswordGrants || after.TokenRefused != before.TokenRefused {
			t.Error("a company the caller may not read was logged in for")
		}
	})
	t.Run("error/not a company id", func(t *testing.T) {
		requireField(t, requireA7(t, cw.do(t, "POST", "/api/companies/x/prueba-conexion/v4", &cw.admin, "", nil), 400), "CompaniaId")
	})
	t.Run("error/an expired certificate", func(t *testing.T) {
		cw.offset.Store(int64(11 * 365 * 24 * time.Hour))
		defer cw.offset.Store(0)
		got := connAnswer(t, cw.test(t, good.user, good.id))
		want := api.PruebaConexion{Ambiente: "pruebas", Token: "ok", Certificado: "expired on " + expiry, IdentificacionCoincide: true, VencimientoCertificado: expiry}
		if got != want {
			t.Errorf("answer %+v\nwant   %+v", got, want)
		}
	})
	t.Run("ok/no secret in the answers", func(t *testing.T) {
		for _, co := range []tenantCompany{good, wrongPass} {
			r := cw.test(t, co.user, co.id)
			if strings.Contains(string(r.body), "hacienda-pass") || strings.Contains(string(r.body), "changed at the tax authority") || strings.Contains(string(r.body), `"1234"`) {
				t.Errorf("a secret in %s", r.body)
			}
		}
	})
}
