package pipeline

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"facturad/hacienda/api"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/signer/certmint"
	"facturad/tenant"
)

// The connection test (A.14) against the sandbox: what it says of the
// login and of the certificate, who may run it, and that it goes through
// the company's environment and the limiter.

// storeCertificate writes a certificate and PIN into the company's row
// past the tenant service's upload checks (which refuse a certificate of
// another taxpayer or an expired one), as a store restored from an old
// backup or a wrong master key would leave it; a nil p12 leaves the
// company without a certificate, and every write forgets the expiry
// recorded at upload.
func (b *bundle) storeCertificate(t *testing.T, p12, pin []byte) {
	t.Helper()
	ctx := context.Background()
	c, err := b.store.Company(ctx, b.company.ID)
	if err != nil {
		t.Fatal(err)
	}
	c.SealedCertificate, c.SealedCertificatePIN, c.CertificateExpiry = nil, nil, time.Time{}
	if p12 != nil {
		if c.SealedCertificate, err = b.sealer.Seal(c.ID, tenant.PurposeCertificate, p12); err != nil {
			t.Fatal(err)
		}
		if c.SealedCertificatePIN, err = b.sealer.Seal(c.ID, tenant.PurposeCertificatePIN, pin); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.store.UpdateCompany(ctx, &c, true); err != nil {
		t.Fatal(err)
	}
}

func TestConnectionTest(t *testing.T) {
	const password = "hacienda-pass" // the harness company's
	other, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02", Identificacion: "3101999999", Name: "Otra", PIN: "1234", Key: certmint.TestKey(1), CA: harnessCA(),
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		users    map[string]string // the sandbox's; nil: any user of the right shape
		before   func(t *testing.T, b *bundle)
		token    string
		cert     string // exact, or a prefix ending in "…"
		coincide bool
		// expiry: the certificate's (true) or the stored one's.
		grants, logouts int64
	}{
		{name: "ok/everything works", token: api.ConnectionOK, cert: api.ConnectionOK, coincide: true, grants: 1, logouts: 1},
		{name: "error/a wrong password: the token service's words", users: map[string]string{"cpj-3-101-123456@stag.comprobanteselectronicos.go.cr": "another"},
			token: "Invalid user credentials", cert: api.ConnectionOK, coincide: true},
		{name: "error/expired", before: func(t *testing.T, b *bundle) { b.clock.advance(11 * 365 * 24 * time.Hour) },
			token: api.ConnectionOK, cert: "expired on " + "…", coincide: true, grants: 1, logouts: 1},
		{name: "error/not valid yet", before: func(t *testing.T, b *bundle) { b.clock.advance(-48 * time.Hour) },
			token: api.ConnectionOK, cert: "not valid before …", coincide: true, grants: 1, logouts: 1},
		{name: "error/another taxpayer's certificate", before: func(t *testing.T, b *bundle) { b.storeCertificate(t, other.P12, []byte("1234")) },
			token: api.ConnectionOK, cert: api.ConnectionOK, coincide: false, grants: 1, logouts: 1},
		{name: "error/a PIN that does not open it", before: func(t *testing.T, b *bundle) { b.storeCertificate(t, other.P12, []byte("9999")) },
			token: api.ConnectionOK, cert: "the stored PIN does not open the certificate", grants: 1, logouts: 1},
		{name: "error/not a certificate", before: func(t *testing.T, b *bundle) { b.storeCertificate(t, []byte("not a p12"), []byte("1234")) },
			token: api.ConnectionOK, cert: "the stored certificate is not a PKCS#12 (.p12/.pfx) file", grants: 1, logouts: 1},
		{name: "error/no certificate", before: func(t *testing.T, b *bundle) { b.storeCertificate(t, nil, nil) },
			token: api.ConnectionOK, cert: "the company has no certificate", grants: 1, logouts: 1},
		{name: "error/no tax-authority password: no login", before: func(t *testing.T, b *bundle) {
			c, err := b.store.Company(context.Background(), b.company.ID)
			if err != nil {
				t.Fatal(err)
			}
			c.FacturacionElectronica, c.SealedContrasenaHacienda = false, nil
			if err := b.store.UpdateCompany(context.Background(), &c, false); err != nil {
				t.Fatal(err)
			}
		}, token: "the company has no tax-authority user or password", cert: api.ConnectionOK, coincide: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, setupOptions{sandbox: sandbox.Options{Users: tt.users}})
			if tt.before != nil {
				tt.before(t, b)
			}
			stored, err := b.store.Company(context.Background(), b.company.ID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.p.TestConnection(context.Background(), b.branch, b.company.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Ambiente != tenant.AmbientePruebas || got.Token != tt.token || got.IdentificacionCoincide != tt.coincide {
				t.Errorf("ambiente %q token %q coincide %v; want %q, %q, %v", got.Ambiente, got.Token, got.IdentificacionCoincide,
					tenant.AmbientePruebas, tt.token, tt.coincide)
			}
			if p, cut := strings.CutSuffix(tt.cert, "…"); cut {
				if !strings.HasPrefix(got.Certificado, p) {
					t.Errorf("certificado %q, want %q…", got.Certificado, p)
				}
			} else if got.Certificado != tt.cert {
				t.Errorf("certificado %q, want %q", got.Certificado, tt.cert)
			}
			// The expiry is the certificate's, in the answer's words.
			switch {
			case strings.HasPrefix(got.Certificado, "expired on "):
				if got.Certificado != "expired on "+api.LocalTime(stored.CertificateExpiry) {
					t.Errorf("certificado %q, want the expiry %s", got.Certificado, api.LocalTime(stored.CertificateExpiry))
				}
			case tt.name == "error/another taxpayer's certificate":
				if !got.VencimientoCertificado.Equal(other.Leaf.NotAfter) {
					t.Errorf("vencimiento %v, want the stored certificate's %v", got.VencimientoCertificado, other.Leaf.NotAfter)
				}
			}
			if !got.VencimientoCertificado.Equal(stored.CertificateExpiry) && tt.name != "error/another taxpayer's certificate" {
				t.Errorf("vencimiento %v, want %v", got.VencimientoCertificado, stored.CertificateExpiry)
			}
			st := b.sb.Stats()
			if st.PasswordGrants != tt.grants || st.Logouts != tt.logouts || st.Submissions != 0 || st.StatusQueries != 0 {
				t.Errorf("sandbox: %d grants, %d logouts, %d submissions, %d status queries; want %d, %d, none, none",
					st.PasswordGrants, st.Logouts, st.Submissions, st.StatusQueries, tt.grants, tt.logouts)
			}
			if strings.Contains(got.Token, password) || strings.Contains(got.Certificado, "1234") {
				t.Errorf("a secret in the answer: %+v", got)
			}
		})
	}
}

// TestConnectionTestAccess: any principal that may read the company runs
// it; anyone else finds no company.
func TestConnectionTestAccess(t *testing.T) {
	b := setup(t, setupOptions{})
	_, otherBranch := b.newCompany(t, "3101654321")
	for _, tt := range []struct {
		name string
		pr   tenant.Principal
		id   int64
		ok   bool
	}{
		{"ok/the company's branch user", b.branch, b.company.ID, true},
		{"ok/the admin", b.admin, b.company.ID, true},
		{"error/another company's branch user", otherBranch, b.company.ID, false},
		{"error/a reseller that does not own it", tenant.Principal{UserID: 77, Role: tenant.RoleReseller}, b.company.ID, false},
		{"error/a company that does not exist", b.admin, b.company.ID + 1000, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := b.sb.Stats().PasswordGrants
			got, err := b.p.TestConnection(context.Background(), tt.pr, tt.id)
			if tt.ok {
				if err != nil || got.Token != api.ConnectionOK {
					t.Fatalf("%+v %v", got, err)
				}
				return
			}
			if !errors.Is(err, tenant.ErrNotFound) {
				t.Fatalf("%+v %v, want ErrNotFound", got, err)
			}
			if b.sb.Stats().PasswordGrants != before {
				t.Error("a company the caller may not see was logged in for")
			}
		})
	}
}

// TestConnectionTestEnvironments: the login is made at the company's own
// environment, with that environment's client.
func TestConnectionTestEnvironments(t *testing.T) {
	dead := httptest.NewServer(nil)
	deadURL := dead.URL
	dead.Close()
	production, err := recepcion.New(recepcion.Options{Environment: recepcion.Production, APIURL: deadURL + "/api", TokenURL: deadURL + "/token", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, setupOptions{pipeline: func(o *Options) {
		o.Environments = map[string]Submitter{tenant.AmbientePruebas: o.Submitter, tenant.AmbienteProduccion: production}
	}})
	ctx := context.Background()
	got, err := b.p.TestConnection(ctx, b.branch, b.company.ID)
	if err != nil || got.Token != api.ConnectionOK || got.Ambiente != tenant.AmbientePruebas {
		t.Fatalf("pruebas: %+v %v", got, err)
	}
	c, err := b.store.Company(ctx, b.company.ID)
	if err != nil {
		t.Fatal(err)
	}
	c.Ambiente = tenant.AmbienteProduccion
	if err := b.store.UpdateCompany(ctx, &c, false); err != nil {
		t.Fatal(err)
	}
	before := b.sb.Stats().PasswordGrants
	got, err = b.p.TestConnection(ctx, b.branch, b.company.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Ambiente != tenant.AmbienteProduccion || got.Token != "unreachable: connection refused (refused)" || got.Certificado != api.ConnectionOK {
		t.Errorf("produccion: %+v", got)
	}
	if b.sb.Stats().PasswordGrants != before {
		t.Error("the test of a company in produccion logged in at the pruebas sandbox")
	}
}

// TestConnectionTestIsPaced: the login waits for the company's turn like
// every call to the tax authority; a turn that would come too late is not
// waited for.
func TestConnectionTestIsPaced(t *testing.T) {
	b := setup(t, setupOptions{pipeline: func(o *Options) {
		o.Limiter = NewTokenBucket(0.001, 1) // one call, then one every 1,000 s
		o.SubmitTimeout = time.Second
	}})
	ctx := context.Background()
	first, err := b.p.TestConnection(ctx, b.branch, b.company.ID)
	if err != nil || first.Token != api.ConnectionOK {
		t.Fatalf("first: %+v %v", first, err)
	}
	second, err := b.p.TestConnection(ctx, b.branch, b.company.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(second.Token, "not tried: ") || second.Certificado != api.ConnectionOK {
		t.Errorf("second: %+v, want the login not tried", second)
	}
	if g := b.sb.Stats().PasswordGrants; g != 1 {
		t.Errorf("%d logins, want 1", g)
	}
}

// TestConnectionTestResumesStoppedDocuments: a test whose login works lets
// the documents stopped on the company's credentials go at once, the
// client's memory of the refusal included.
func TestConnectionTestResumesStoppedDocuments(t *testing.T) {
	b := setup(t, setupOptions{sandbox: sandbox.Options{Faults: sandbox.Faults{TokenRefusal: 401}}, clientClock: true})
	out := b.mustSend(t, request("01", "conn-stopped"))
	if !out.Failed || out.Estado != tenant.StateNotSentYet {
		t.Fatalf("send: %s", describe(out))
	}
	clave := out.Document.Clave
	if d := b.stored(t, clave); !d.NextAttemptAt.IsZero() {
		t.Fatalf("not stopped: next attempt %v", d.NextAttemptAt)
	}
	refused, err := b.p.TestConnection(context.Background(), b.branch, b.company.ID)
	if err != nil || refused.Token != "Invalid user credentials" {
		t.Fatalf("under the refusal: %+v %v", refused, err)
	}
	if d := b.stored(t, clave); !d.NextAttemptAt.IsZero() {
		t.Fatal("a refused test resumed the document")
	}
	// Corrected at the tax authority, and tested again once the test's own
	// cooldown has passed (before it, the refusal is answered again).
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	b.clock.advance(recepcion.TestLoginCooldown)
	got, err := b.p.TestConnection(context.Background(), b.branch, b.company.ID)
	if err != nil || got.Token != api.ConnectionOK {
		t.Fatalf("%+v %v", got, err)
	}
	if d := b.stored(t, clave); d.NextAttemptAt.IsZero() {
		t.Fatal("the document is still stopped")
	}
	// Within the client's RefusedCredentialsWait: only the test's success
	// lets the document log in now.
	if _, err := b.p.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := b.sb.Stats(); st.Submissions != 1 {
		t.Fatalf("the resumed document was not submitted at once (%d submissions): %q", st.Submissions, b.stored(t, clave).LastError)
	}
	b.runDueUntil(t, 3, func() bool { return b.stored(t, clave).Estado == tenant.StateAccepted })
}
