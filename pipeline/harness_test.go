package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/registry"
	"facturad/hacienda/sandbox"
	"facturad/signer"
	"facturad/signer/certmint"
	"facturad/tenant"
	"facturad/tenant/certopen"
	"facturad/tenant/seal"
	"facturad/tenant/storetest"
)

// The tests run the real pipeline against a real store, the real tenant
// service, the real signer cache, the real tax-authority client and the
// sandbox on a loopback port.

// fullStore is what the tests need of a store adapter.
type fullStore interface {
	tenant.Store
	tenant.RegistryStore
	Store
}

// storeKinds are the stores the store-sensitive tests run on: the embedded
// default always, PostgreSQL when the test environment has it.
var storeKinds = []struct {
	name string
	open func(testing.TB) fullStore
}{
	{"sqlite", func(t testing.TB) fullStore { return storetest.NewSQLiteStore(t) }},
	{"postgres", func(t testing.TB) fullStore { return storetest.NewPostgresStore(t) }},
}

// testClock is the time plus an offset the test moves.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// harnessCA certifies every company certificate of these tests, so that a
// sandbox can be told to trust it.
var harnessCA = sync.OnceValue(func() *certmint.CA {
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(2)})
	if err != nil {
		panic(err)
	}
	return ca
})

// clockFunc is a recepcion.Clock.
type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

// countingSubmitter counts the calls that reach the client.
type countingSubmitter struct {
	Submitter
	submits, statuses atomic.Int64
}

func (c *countingSubmitter) Submit(ctx context.Context, cr recepcion.Credentials, s recepcion.Submission) (recepcion.Receipt, error) {
	c.submits.Add(1)
	return c.Submitter.Submit(ctx, cr, s)
}

func (c *countingSubmitter) Status(ctx context.Context, cr recepcion.Credentials, key string) (recepcion.Status, error) {
	c.statuses.Add(1)
	return c.Submitter.Status(ctx, cr, key)
}

type bundle struct {
	store  fullStore
	svc    *tenant.Service
	sealer tenant.Sealer // the service's, for writing secrets past its checks
	sb     *sandbox.TestServer
	client *recepcion.Client
	sub    *countingSubmitter
	cache  *signer.Cache
	p      *Pipeline
	reg    *prometheus.Registry
	clock  *testClock
	// registry is the sandbox's registries, when setupOptions.registry.
	registry *registry.Registry

	admin   tenant.Principal
	company tenant.Company
	branch  tenant.Principal // the company's first branch user
}

type setupOptions struct {
	store          func(testing.TB) fullStore
	sandbox        sandbox.Options
	clientTimeout  time.Duration
	clientClock    bool // the client runs on the test's clock (token lifetimes, refused logins)
	pipeline       func(*Options)
	identificacion string
	// registry, when set, gives the pipeline the sandbox's registries
	// (cached in the test's store) under that policy.
	registry registry.Policy
}

// newTestRegistry is a Registry of the registries at url, cached in cache.
func newTestRegistry(t testing.TB, url string, cache registry.Cache, reg prometheus.Registerer) *registry.Registry {
	t.Helper()
	c, err := registry.NewClient(registry.ClientOptions{BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	r, err := registry.New(registry.Options{Client: c, Cache: cache, Registerer: reg, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func setup(t testing.TB, so setupOptions) *bundle {
	t.Helper()
	if so.store == nil {
		so.store = storeKinds[0].open
	}
	if so.identificacion == "" {
		so.identificacion = "3101123456"
	}
	b := &bundle{store: so.store(t), clock: &testClock{}, reg: prometheus.NewRegistry()}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	b.sealer = sealer
	b.svc, err = tenant.NewService(tenant.ServiceOptions{
		Store: b.store, Sealer: sealer, Certificates: certopen.Opener{},
		Passwords: tenant.Argon2id{Memory: 64, Time: 1, Threads: 1}, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	b.admin = tenant.Principal{UserID: 1, Username: "admin", Role: tenant.RoleAdmin}
	b.company, b.branch = b.newCompany(t, so.identificacion)

	if so.sandbox.Logger == nil {
		so.sandbox.Logger = quiet
	}
	b.sb = sandbox.NewTestServer(t, so.sandbox)
	co := recepcion.Options{
		APIURL: b.sb.APIURL, TokenURL: b.sb.TokenURL, Timeout: so.clientTimeout, Logger: quiet,
	}
	if so.clientClock {
		co.Clock = clockFunc(b.clock.now)
	}
	b.client, err = recepcion.New(co)
	if err != nil {
		t.Fatal(err)
	}
	b.sub = &countingSubmitter{Submitter: b.client}
	b.cache, err = signer.NewCache(signer.CacheOptions{Source: b.svc, Clock: b.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		Store: b.store, Issuers: b.svc, Signer: b.cache, Submitter: b.sub,
		Logger: quiet, Registerer: b.reg, Clock: b.clock.now,
		DisableRetrier: true,
		Timings:        Timings{BackoffBase: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond, PollDelay: time.Millisecond},
	}
	if so.registry != "" {
		b.registry = newTestRegistry(t, b.sb.RegistryURL, tenant.RegistryCache{Store: b.store}, b.reg)
		o.Registry, o.RegistryChecks = b.registry, so.registry
	}
	if so.pipeline != nil {
		so.pipeline(&o)
	}
	b.p, err = New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.p.StopAndCancel(ctx); err != nil {
			t.Errorf("stop pipeline: %v", err)
		}
	})
	return b
}

// newCompany creates a company with a minted certificate (fast test key)
// and returns it with its first branch user as a principal.
func (b *bundle) newCompany(t testing.TB, id string) (tenant.Company, tenant.Principal) {
	t.Helper()
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02", Identificacion: id, Name: "Prueba " + id, PIN: "1234", Key: certmint.TestKey(1),
		CA: harnessCA(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cc, err := b.svc.CreateCompany(ctx, b.admin, companyInput(id, m.P12))
	if err != nil {
		t.Fatalf("create company: %v", err)
	}
	is, err := b.svc.Issuer(ctx, cc.Company.ID, cc.Branch.ID)
	if err != nil {
		t.Fatalf("issuer: %v", err)
	}
	return is.Company, tenant.Principal{UserID: 1000 + cc.Company.ID, Role: tenant.RoleBranch, CompanyID: cc.Company.ID, BranchID: cc.Branch.ID}
}

// companyInput is the harness company's form; a nil p12 keeps the stored
// certificate on an update.
func companyInput(id string, p12 []byte) tenant.CompanyInput {
	in := tenant.CompanyInput{
		TipoIdentificacion: "02", Identificacion: id, RazonSocial: "Servicios de Prueba S.A.",
		ActividadComercial: "620100", UsuarioHacienda: "cpj-3-101-" + id[4:] + "@stag.comprobanteselectronicos.go.cr",
		ContrasenaHacienda: tenant.Secret("hacienda-pass"), TipoCliente: "Normal", RazonComercial: "Prueba Comercial",
		Provincia: "1", Canton: "01", Distrito: "01", Barrio: "Barrio Amón", OtrasSenas: "Del parque 100 m norte",
		CodPais: "506", Telefono: "22223333", CorreoElectronico: "facturas@example.com",
		Sucursal: "001", FacturacionElectronica: true, Certificate: p12,
	}
	if p12 != nil {
		in.CertificatePIN = tenant.Secret("1234")
	}
	return in
}

// sendOfType sends request(tipo) under idExterno. A note refers to the FE
// *factura (the tax authority accepts a note only about a document it
// received); an FE sent records its clave there. Send every type in
// hacienda.DocumentTypes order, FE first.
func (b *bundle) sendOfType(t *testing.T, tipo hacienda.DocumentType, idExterno string, factura *string) Outcome {
	t.Helper()
	r := request(string(tipo), idExterno)
	if tipo.IsNote() || tipo == hacienda.TypeREP {
		// The sandbox accepts a note or a payment receipt only about a
		// document it received.
		r["informacionReferencia"] = []any{referenceTo(*factura)}
	}
	out := b.mustSend(t, r)
	if tipo == hacienda.TypeFE {
		*factura = out.Document.Clave
	}
	return out
}

// reference is an InformacionReferencia to an earlier FE.
func reference() map[string]any {
	return referenceTo("50601012600310112345600100001010000000001100000001")
}

// referenceTo is an InformacionReferencia to the FE of that clave (a note
// is accepted only when its reference is a document the tax authority
// received).
func referenceTo(clave string) map[string]any {
	return map[string]any{
		"tipoDocIR": "01", "numero": clave,
		"fechaEmisionIR": "2026-01-01T10:00:00", "codigo": "01", "razon": "Corrige el documento de referencia",
	}
}

// request returns a valid send request of type tipo.
func request(tipo, idExterno string) map[string]any {
	line := map[string]any{
		"numeroLinea": 1, "codigoCABYS": "8314100000000", "cantidad": 2, "unidadMedida": "Sp",
		"detalle": "Servicio de consultoría", "precioUnitario": "12500.50",
		"impuesto": []any{map[string]any{"codigo": "01", "codigoTarifaIVA": "08", "tarifa": 13}},
	}
	r := map[string]any{
		"id_externo":      idExterno,
		"tipo_documento":  tipo,
		"condicion_venta": "01",
		"receptor": map[string]any{
			"nombre": "Cliente de Prueba", "identificacion": map[string]any{"tipo": "01", "numero": "109870654"},
			"correoElectronico": "cliente@example.com",
		},
		"detalleServicio": []any{line},
		"resumenFactura": map[string]any{
			"codigoTipoMoneda": map[string]any{"codigoMoneda": "CRC", "tipoCambio": 1},
			"medioPago":        []any{map[string]any{"tipoMedioPago": "01"}},
		},
	}
	switch tipo {
	case "02", "03":
		r["informacionReferencia"] = []any{reference()}
	case "04":
		delete(r, "receptor")
	case "08":
		r["receptor"] = map[string]any{
			"nombre": "Proveedor Informal", "identificacion": map[string]any{"tipo": "01", "numero": "109870654"},
			"ubicacion": map[string]any{"provincia": "1", "canton": "01", "distrito": "01", "otrasSenas": "Mercado central, local 12"},
		}
		r["informacionReferencia"] = []any{reference()}
	case "09":
		r["receptor"] = map[string]any{"nombre": "Foreign Buyer Inc."}
		line["impuesto"] = []any{map[string]any{"codigo": "01", "codigoTarifaIVA": "01", "tarifa": 0}}
	case "10":
		r["condicion_venta"] = "11"
		delete(line, "codigoCABYS")
		delete(line, "cantidad")
		delete(line, "unidadMedida")
		delete(line, "precioUnitario")
		line["detalle"] = "Pago del IVA diferido de la factura"
		line["montoTotal"] = 10000
		r["informacionReferencia"] = []any{reference()}
		r["resumenFactura"].(map[string]any)["medioPago"] = []any{map[string]any{"tipoMedioPago": "04"}}
	}
	return r
}

func body(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sendRaw decodes a body as the gateway does and sends it as p.
func (b *bundle) sendRaw(ctx context.Context, p tenant.Principal, raw []byte) (Outcome, error) {
	req, err := hacienda.DecodeSendRequest(raw)
	if err != nil {
		return Outcome{}, err
	}
	return b.p.Send(ctx, p, req)
}

// send sends a request as the company's branch user.
func (b *bundle) send(t testing.TB, req map[string]any) (Outcome, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return b.sendRaw(ctx, b.branch, body(t, req))
}

// mustSend sends and fails the test on an error.
func (b *bundle) mustSend(t testing.TB, req map[string]any) Outcome {
	t.Helper()
	out, err := b.send(t, req)
	if err != nil {
		t.Fatalf("send %v: %v", req["id_externo"], err)
	}
	return out
}

// mustSendAs sends a request as p and fails the test on an error.
func (b *bundle) mustSendAs(t testing.TB, p tenant.Principal, req map[string]any) Outcome {
	t.Helper()
	out, err := b.sendRaw(context.Background(), p, body(t, req))
	if err != nil {
		t.Fatalf("send %v: %v", req["id_externo"], err)
	}
	return out
}

// stored reads a document back from the store.
func (b *bundle) stored(t testing.TB, clave string) tenant.Document {
	t.Helper()
	d, err := b.store.DocumentByClave(context.Background(), clave)
	if err != nil {
		t.Fatalf("stored %s: %v", clave, err)
	}
	return d
}

// runDueUntil runs the background worker's rounds (moving the clock past
// every backoff) until cond holds, at most n rounds.
func (b *bundle) runDueUntil(t testing.TB, n int, cond func() bool) {
	t.Helper()
	for i := 0; i < n; i++ {
		if cond() {
			return
		}
		b.clock.advance(time.Hour)
		if _, err := b.p.RunDue(context.Background()); err != nil {
			t.Fatalf("RunDue: %v", err)
		}
	}
	if !cond() {
		t.Fatalf("condition not reached after %d rounds", n)
	}
}

// round runs one round of the background worker an hour later.
func (b *bundle) round(t testing.TB) {
	t.Helper()
	b.clock.advance(time.Hour)
	if _, err := b.p.RunDue(context.Background()); err != nil {
		t.Fatalf("RunDue: %v", err)
	}
}

func describe(o Outcome) string {
	return fmt.Sprintf("estado %s failed %v key %q message %q", o.Estado, o.Failed, o.Key, o.Message)
}
