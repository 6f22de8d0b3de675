package tenant_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"facturad/signer/certmint"
	"facturad/tenant"
	"facturad/tenant/authcache"
	"facturad/tenant/certopen"
	"facturad/tenant/seal"
	"facturad/tenant/storetest"
)

// countingHasher counts slow-hash verifications, to prove the warm path
// never runs one.
type countingHasher struct {
	tenant.PasswordHasher
	verifies atomic.Int64
}

func (h *countingHasher) Verify(encoded string, password []byte) (bool, error) {
	h.verifies.Add(1)
	return h.PasswordHasher.Verify(encoded, password)
}

// testArgon2id keeps test runs fast; production uses DefaultArgon2id.
var testArgon2id = tenant.Argon2id{Memory: 64, Time: 1, Threads: 1}

type bundle struct {
	svc     *tenant.Service
	store   tenant.Store
	sealer  *seal.Sealer
	hasher  *countingHasher
	cache   tenant.AuthCache
	now     time.Time
	admin   tenant.Principal
	adminCr tenant.Credentials
	opts    tenant.ServiceOptions // to start a second replica on the same store
}

type bundleOpts struct {
	cache  tenant.AuthCache
	now    time.Time
	hasher tenant.PasswordHasher // default testArgon2id
	store  tenant.Store          // default a fresh SQLite store
	// hideSecrets is ServiceOptions.HideCompanySecrets.
	hideSecrets bool
}

func newBundle(t testing.TB, o bundleOpts) *bundle {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	authKey, err := seal.DeriveKey(key, "facturad auth-cache v1")
	if err != nil {
		t.Fatal(err)
	}
	if o.cache == nil {
		o.cache = authcache.NewMemory(authcache.MemoryOptions{})
	}
	if o.now.IsZero() {
		o.now = time.Now()
	}
	if o.hasher == nil {
		o.hasher = testArgon2id
	}
	if o.store == nil {
		o.store = storetest.NewSQLite(t)
	}
	b := &bundle{
		store:  o.store,
		sealer: sealer,
		hasher: &countingHasher{PasswordHasher: o.hasher},
		cache:  o.cache,
		now:    o.now,
	}
	b.opts = tenant.ServiceOptions{
		Store:        b.store,
		Sealer:       sealer,
		Certificates: certopen.Opener{},
		Cache:        o.cache,
		AuthKey:      authKey,
		Passwords:    b.hasher,
		Now:          func() time.Time { return o.now },

		HideCompanySecrets: o.hideSecrets,
	}
	b.svc, err = tenant.NewService(b.opts)
	if err != nil {
		t.Fatal(err)
	}
	cr, created, err := b.svc.EnsureAdmin(context.Background(), "", "", "")
	if err != nil || !created {
		t.Fatalf("EnsureAdmin = %v, %v", created, err)
	}
	b.adminCr = cr
	b.admin = b.login(t, cr)
	return b
}

func (b *bundle) login(t testing.TB, cr tenant.Credentials) tenant.Principal {
	t.Helper()
	p, err := b.svc.Authenticate(context.Background(), cr.APIToken, cr.Usuario, cr.Contrasena)
	if err != nil {
		t.Fatalf("Authenticate %s: %v", cr.Usuario, err)
	}
	return p
}

// Certificates are minted once per identification and reused: key
// generation is the slow part.
var (
	certMu    sync.Mutex
	certCache = map[string]*certmint.Minted{}
	certCA    *certmint.CA
)

func mint(t testing.TB, o certmint.Options) *certmint.Minted {
	t.Helper()
	key := fmt.Sprintf("%s/%s/%s/%v/%v/%d", o.TipoIdentificacion, o.Identificacion, o.PIN, o.NotAfter.Unix(), o.Legacy, o.Iterations)
	certMu.Lock()
	defer certMu.Unlock()
	if m, ok := certCache[key]; ok {
		return m
	}
	if certCA == nil {
		ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(0)})
		if err != nil {
			t.Fatal(err)
		}
		certCA = ca
	}
	if o.Name == "" {
		o.Name = "EMPRESA DE PRUEBA"
	}
	if o.PIN == "" {
		o.PIN = "1234"
	}
	o.CA = certCA
	o.Key = certmint.TestKey(1)
	m, err := certmint.MintCertificate(o)
	if err != nil {
		t.Fatal(err)
	}
	certCache[key] = m
	return m
}

// companyInput is a valid create request for a cédula jurídica, with a
// matching certificate.
func companyInput(t testing.TB, ident string) tenant.CompanyInput {
	t.Helper()
	m := mint(t, certmint.Options{TipoIdentificacion: "02", Identificacion: ident})
	return tenant.CompanyInput{
		TipoIdentificacion:     "02",
		Identificacion:         ident,
		RazonSocial:            "Servicios Ñandú S.A.",
		ActividadComercial:     "722003",
		UsuarioHacienda:        "cpj-3-101-123456@stag.comprobanteselectronicos.go.cr",
		ContrasenaHacienda:     tenant.Secret("s3cr3t$/@);]+|"),
		TipoCliente:            "Empresa",
		RazonComercial:         "Ñandú",
		Provincia:              "1",
		Canton:                 "01",
		Distrito:               "03",
		Barrio:                 "Barrio Amón",
		OtrasSenas:             "Avenida 7, calle 9, casa 12",
		CodPais:                "506",
		Telefono:               "22223333",
		CorreoElectronico:      "facturas@nandu.example",
		FacturacionElectronica: true,
		Certificate:            tenant.Secret(m.P12),
		CertificatePIN:         tenant.Secret(m.PIN),
	}
}

func branchInput(sucursal string) tenant.BranchInput {
	return tenant.BranchInput{
		Sucursal:          sucursal,
		RazonComercial:    "Sucursal " + sucursal,
		Provincia:         "2",
		Canton:            "1",
		Distrito:          "01",
		OtrasSenas:        "Frente al parque central",
		Telefono:          "2444-5555",
		CorreoElectronico: "sucursal@nandu.example",
	}
}

// tenantFixture is one company with its first branch user, created by p.
type tenantFixture struct {
	created tenant.CreatedCompany
	user    tenant.Principal
	creds   tenant.Credentials
}

func (b *bundle) newCompany(t testing.TB, p tenant.Principal, ident string) tenantFixture {
	t.Helper()
	cc, err := b.svc.CreateCompany(context.Background(), p, companyInput(t, ident))
	if err != nil {
		t.Fatalf("CreateCompany %s: %v", ident, err)
	}
	return tenantFixture{created: cc, creds: cc.Credentials, user: b.login(t, cc.Credentials)}
}

func (b *bundle) newReseller(t testing.TB, name string) (tenant.Principal, tenant.Credentials) {
	t.Helper()
	cr, err := b.svc.CreateReseller(context.Background(), b.admin, name)
	if err != nil {
		t.Fatalf("CreateReseller: %v", err)
	}
	return b.login(t, cr), cr
}

// fieldErrors returns the field errors of a *tenant.ValidationError, failing
// the test for any other error.
func fieldErrors(t testing.TB, err error) map[string][]string {
	t.Helper()
	var ve *tenant.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a *tenant.ValidationError", err)
	}
	if len(ve.FieldErrors()) == 0 {
		t.Fatal("validation error without fields")
	}
	return ve.FieldErrors()
}
