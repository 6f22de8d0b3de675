package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"facturad/hacienda"
	"facturad/hacienda/msg"
	"facturad/hacienda/registry"
	"facturad/hacienda/sandbox"
	"facturad/tenant"
	"facturad/tenant/authcache"
	"facturad/tenant/storetest"
)

// The sandbox's registry data set (docs/sandbox-registry.md): any
// well-formed identification is registered with the standard activities,
// except those ending in 0000 (unknown); CAByS codes ending in 999 are not
// in force.
const (
	unknownReceptor = "109870000"
	inactiveCode    = "9609.0"
	unknownCabys    = "8314100000999"
)

// refusals are the send-time refusals of A.13, each with the field it
// names.
var refusals = []struct {
	name  string
	field string
	edit  func(r map[string]any)
}{
	{"receptor not registered", "ReceptorRequest.Identificacion", func(r map[string]any) {
		r["receptor"].(map[string]any)["identificacion"] = map[string]any{"tipo": "01", "numero": unknownReceptor}
	}},
	{"issuer activity inactive", "codigo_actividad_emisor", func(r map[string]any) { r["codigo_actividad_emisor"] = inactiveCode }},
	{"receptor activity not its own", "codigo_actividad_receptor", func(r map[string]any) { r["codigo_actividad_receptor"] = "0111.1" }},
	{"CAByS not in force", "detalleServicio[0].codigoCABYS", func(r map[string]any) {
		r["detalleServicio"].([]any)[0].(map[string]any)["codigoCABYS"] = unknownCabys
	}},
	{"receptor no inscrito", "ReceptorRequest.Identificacion", func(r map[string]any) {
		r["receptor"].(map[string]any)["identificacion"] = map[string]any{"tipo": "02", "numero": "3101239999"}
	}},
	{"exoneration unknown", exoneracion + "numeroDocumento", exonerate("AL-99999999-25", "", 13)},
	{"exoneration another taxpayer's", exoneracion + "numeroDocumento", exonerate("AL-00100004-26", "", 13)},
	{"exoneration expired", exoneracion + "numeroDocumento", exonerate("AL-00100003-23", "", 13)},
	{"exoneration not covering the CAByS", exoneracion + "numeroDocumento", exonerate("AL-00100002-26", "8314100000000", 10)},
	{"exoneration above its percentage", exoneracion + "tarifaExonerada", exonerate("AL-00100002-26", "4321000000200", 13)},
}

const exoneracion = "detalleServicio[0].impuesto[0].exoneracion."

// exonerate exonerates the request's line under the authorisation
// numero, sold to its owner in the sandbox's data set (114440555), with
// the line's CAByS code set to cabys when given.
func exonerate(numero, cabys string, tarifa int) func(r map[string]any) {
	return func(r map[string]any) {
		r["receptor"].(map[string]any)["identificacion"] = map[string]any{"tipo": "01", "numero": "114440555"}
		line := r["detalleServicio"].([]any)[0].(map[string]any)
		if cabys != "" {
			line["codigoCABYS"] = cabys
		}
		tax := line["impuesto"].([]any)[0].(map[string]any)
		// The day the sandbox's data set says each was issued.
		issued := map[string]string{"AL-00012345-24": "2026-01-10", "AL-00100003-23": "2023-03-01"}[numero]
		if issued == "" {
			issued = "2026-01-05"
		}
		tax["exoneracion"] = map[string]any{"tipoDocumentoEX1": "04", "numeroDocumento": numero,
			"nombreInstitucion": "01", "fechaEmisionEX": issued + "T00:00:00", "tarifaExonerada": tarifa}
	}
}

// Each refusal is a 400 on its field, in both languages, and takes no
// number: the next valid send gets the first consecutivo. Under warn the
// same documents go on with advertencias.
func TestRegistryRefusals(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			b := setup(t, setupOptions{store: sk.open, registry: registry.PolicyRefuse})
			for i, tt := range refusals {
				t.Run(tt.name, func(t *testing.T) {
					r := request("01", fmt.Sprintf("refused-%d", i))
					tt.edit(r)
					_, err := b.send(t, r)
					var rr *registryRefusal
					if !errors.As(err, &rr) {
						t.Fatalf("err = %v, want a registry refusal", err)
					}
					spanish := msg.Render(rr.FieldMessages(), msg.Spanish)
					en, es := rr.FieldErrors()[tt.field], spanish[tt.field]
					if len(en) == 0 || len(es) == 0 || en[0] == es[0] {
						t.Errorf("fields %v / %v: want %s in English and Spanish", rr.FieldErrors(), spanish, tt.field)
					}
				})
			}
			exonerated := request("01", "exonerated")
			exonerate("AL-00012345-24", "", 13)(exonerated)
			if out := b.mustSend(t, exonerated); len(out.Advertencias) != 0 {
				t.Errorf("advertencias on a valid exoneration: %+v", out.Advertencias)
			}
			out := b.mustSend(t, request("01", "valid"))
			if !strings.HasSuffix(out.Document.Consecutivo, "0000000002") {
				t.Errorf("consecutivo %s, want the second: a refused document took a number", out.Document.Consecutivo)
			}
			if len(out.Advertencias) != 0 {
				t.Errorf("advertencias on a clean document: %+v", out.Advertencias)
			}

			// The company turns the checks to warn: the same documents go on.
			b.setPolicy(t, "warn")
			for i, tt := range refusals {
				r := request("01", fmt.Sprintf("warned-%d", i))
				tt.edit(r)
				out, err := b.send(t, r)
				if err != nil {
					t.Fatalf("%s under warn: %v", tt.name, err)
				}
				if !hasAdvertencia(out, tt.field) {
					t.Errorf("%s under warn: advertencias %+v, want one on %s", tt.name, out.Advertencias, tt.field)
				}
			}
		})
	}
}

func sum(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

func hasAdvertencia(o Outcome, field string) bool {
	for _, f := range o.Advertencias {
		if f.Field == field {
			return true
		}
	}
	return false
}

// setPolicy sets the company's validacionesRegistro.
func (b *bundle) setPolicy(t testing.TB, p string) {
	t.Helper()
	in := companyInput(b.company.NumeroIdentificacion, nil)
	in.ValidacionesRegistro = &p
	if _, err := b.svc.UpdateCompany(context.Background(), b.admin, b.company.ID, in); err != nil {
		t.Fatalf("update the company's policy: %v", err)
	}
}

// countingRegistry counts what the pipeline asks of the registries.
type countingRegistry struct {
	Registry
	mu     sync.Mutex
	checks int
	rates  int
}

func (c *countingRegistry) Check(ctx context.Context, doc *hacienda.Document) []registry.Finding {
	c.mu.Lock()
	c.checks++
	c.mu.Unlock()
	return c.Registry.Check(ctx, doc)
}

func (c *countingRegistry) Rate(ctx context.Context, moneda string, day time.Time) (registry.Rate, registry.Meta, error) {
	c.mu.Lock()
	c.rates++
	c.mu.Unlock()
	return c.Registry.Rate(ctx, moneda, day)
}

// Under off nothing is asked, and a document the registries would refuse
// goes on: the tax authority (the sandbox, judging against the same
// data) rejects it, and its number is spent.
func TestRegistryOff(t *testing.T) {
	var counting *countingRegistry
	b := setup(t, setupOptions{registry: registry.PolicyOff, sandbox: sandbox.Options{RegistryChecks: true}, pipeline: func(o *Options) {
		counting = &countingRegistry{Registry: o.Registry}
		o.Registry = counting
	}})
	r := request("01", "off")
	refusals[0].edit(r)
	r["resumenFactura"].(map[string]any)["codigoTipoMoneda"] = map[string]any{"codigoMoneda": "USD"}
	if _, err := b.send(t, r); err == nil || !strings.Contains(err.Error(), "tipoCambio") {
		t.Errorf("a dollar document without its rate under off: %v, want tipoCambio required", err)
	}
	r["resumenFactura"].(map[string]any)["codigoTipoMoneda"] = map[string]any{"codigoMoneda": "USD", "tipoCambio": 505.5}
	out := b.mustSend(t, r)
	if len(out.Advertencias) != 0 {
		t.Errorf("advertencias under off: %+v", out.Advertencias)
	}
	var d tenant.Document
	b.runDueUntil(t, 10, func() bool { d = b.stored(t, out.Document.Clave); return d.Estado == tenant.StateRejected })
	if !strings.Contains(strings.Join(d.DetalleMensaje, " "), "no se encuentra inscrito") {
		t.Errorf("rejected with %q, want the receptor's registration named", d.DetalleMensaje)
	}
	if counting.checks != 0 || counting.rates != 0 {
		t.Errorf("under off the registries were asked: %d checks, %d rates", counting.checks, counting.rates)
	}
	if calls := b.sb.Stats().RegistryCalls; sum(calls) != 0 {
		t.Errorf("the sandbox's registry was called: %v", calls)
	}
}

// A document in dollars without its rate gets the central bank's sale
// rate of its day; a past day (contingency) gets that day's.
func TestRegistryFillsTipoCambio(t *testing.T) {
	b := setup(t, setupOptions{registry: registry.PolicyRefuse})
	now := time.Now().In(hacienda.CostaRica)
	for _, tt := range []struct {
		name      string
		situacion string
		at        time.Time
	}{
		{"today", "", time.Time{}},
		{"a contingency's day", "3", now.Add(-48 * time.Hour)},
		{"a date not set (0001-01-01)", "", time.Date(1, 1, 1, 0, 0, 0, 0, hacienda.CostaRica)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := request("01", "usd-"+tt.name)
			r["resumenFactura"].(map[string]any)["codigoTipoMoneda"] = map[string]any{"codigoMoneda": "USD"}
			day := now
			if !tt.at.IsZero() {
				r["fecha_emision"] = tt.at.Format("2006-01-02T15:04:05")
			}
			if tt.situacion != "" {
				r["situacion"] = tt.situacion
				day = tt.at
			}
			out := b.mustSend(t, r)
			want := rateOf(t, b, day)
			doc, err := hacienda.ParseXML(out.Document.SignedXML)
			if err != nil {
				t.Fatal(err)
			}
			if got := doc.ResumenFactura.CodigoTipoMoneda.TipoCambio.Decimal(); !got.Equal(want) {
				t.Errorf("tipoCambio %s, want the sale rate of %s, %s", got, day.Format(time.DateOnly), want)
			}
		})
	}
}

// rateOf is the sandbox's sale rate of the day, asked of its registry
// directly, apart from the pipeline's cache.
func rateOf(t testing.TB, b *bundle, day time.Time) decimal.Decimal {
	t.Helper()
	c, err := registry.NewClient(registry.ClientOptions{BaseURL: b.sb.RegistryURL})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Rate(context.Background(), "USD", day)
	if err != nil {
		t.Fatal(err)
	}
	return r.Venta
}

// A document in dollars numbered before its send was interrupted gets its
// rate when the worker finishes it, even if the company has turned the
// registries off since: it was numbered with it.
func TestRegistryRateOfAnInterruptedSend(t *testing.T) {
	b := setup(t, setupOptions{registry: registry.PolicyRefuse})
	r := request("01", "usd-crash")
	r["resumenFactura"].(map[string]any)["codigoTipoMoneda"] = map[string]any{"codigoMoneda": "USD"}
	d := b.interruptedSend(t, r, true)
	b.setPolicy(t, "off")
	b.runDueUntil(t, 5, func() bool {
		s, err := b.store.DocumentByExternalID(context.Background(), d.BranchID, d.IDExterno)
		return err == nil && s.Estado == tenant.StateAccepted
	})
	s, err := b.store.DocumentByExternalID(context.Background(), d.BranchID, d.IDExterno)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := hacienda.ParseXML(s.SignedXML)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := doc.ResumenFactura.CodigoTipoMoneda.TipoCambio.Decimal(), rateOf(t, b, d.FechaEmision); !got.Equal(want) {
		t.Errorf("tipoCambio %s, want %s", got, want)
	}
}

// The registry down: documents go on with a warning, nothing is refused.
func TestRegistryDown(t *testing.T) {
	b := setup(t, setupOptions{registry: registry.PolicyRefuse})
	if err := b.sb.SetFaults(sandbox.Faults{RegistryStatus: 503}); err != nil {
		t.Fatal(err)
	}
	r := request("01", "down")
	refusals[0].edit(r)
	out, err := b.send(t, r)
	if err != nil {
		t.Fatalf("refused while the registry is down: %v", err)
	}
	var said bool
	for _, f := range out.Advertencias {
		said = said || strings.Contains(f.Msg.String(), "could not be reached")
	}
	if !said {
		t.Errorf("advertencias %+v: want one saying the registry could not be reached", out.Advertencias)
	}
}

// A thousand sends at once naming one receptor make one call per
// question to the registry.
func TestRegistryOneCallForManySends(t *testing.T) {
	const n = 1000
	b := setup(t, setupOptions{registry: registry.PolicyRefuse, pipeline: func(o *Options) {
		o.Capacity = Capacity{Workers: 16, QueueSize: n, MaxInFlight: 2 * n, MaxInFlightPerCompany: 2 * n}
	}})
	// The sends wait for their turns as long as they need: the test
	// counts registry calls, and 1,000 sends through 16 workers under the
	// race detector on a busy machine outlast a send's usual 30 s.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if _, err := b.sendRaw(ctx, b.branch, body(t, request("01", fmt.Sprintf("many-%d", i)))); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a send failed: %v", err)
	}
	// The company and the receptor (ae), the line's CAByS.
	calls := b.sb.Stats().RegistryCalls
	if calls[sandbox.RegistryTaxpayers] != 2 || calls[sandbox.RegistryCabys] != 1 {
		t.Errorf("registry calls %v, want ae 2 and cabys 1", calls)
	}
}

// A second replica reuses what the first one asked: through the store
// (PostgreSQL) and through Redis, each replica with its own process state.
func TestRegistrySharedByReplicas(t *testing.T) {
	caches := []struct {
		name string
		open func(t *testing.T) registry.Cache
	}{
		{"postgres", func(t *testing.T) registry.Cache {
			return tenant.RegistryCache{Store: storetest.NewPostgresStore(t)}
		}},
		{"redis", func(t *testing.T) registry.Cache {
			opt, err := redis.ParseURL(storetest.RedisURL(t))
			if err != nil {
				t.Fatal(err)
			}
			opt.ContextTimeoutEnabled = true
			rdb := redis.NewClient(opt)
			t.Cleanup(func() { rdb.Close() })
			c, err := authcache.NewRedis(rdb, authcache.RedisOptions{Prefix: fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano())})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}},
	}
	for _, cc := range caches {
		t.Run(cc.name, func(t *testing.T) {
			sb := sandbox.NewTestServer(t, sandbox.Options{Logger: quiet})
			cache := cc.open(t)
			a := newTestRegistry(t, sb.RegistryURL, cache, nil)
			b := newTestRegistry(t, sb.RegistryURL, cache, nil)
			ctx := context.Background()
			first, _, err := a.Taxpayer(ctx, "3101471100")
			if err != nil {
				t.Fatal(err)
			}
			again, meta, err := b.Taxpayer(ctx, "3101471100")
			if err != nil || again.Nombre != first.Nombre || meta.Desactualizado {
				t.Fatalf("the second replica: %+v %+v %v", again, meta, err)
			}
			if _, _, err := b.Cabys(ctx, "8314100000999"); !errors.Is(err, registry.ErrNotRegistered) {
				t.Fatal(err)
			}
			if _, _, err := a.Cabys(ctx, "8314100000999"); !errors.Is(err, registry.ErrNotRegistered) {
				t.Fatal(err)
			}
			calls := sb.Stats().RegistryCalls
			if calls[sandbox.RegistryTaxpayers] != 1 || calls[sandbox.RegistryCabys] != 1 {
				t.Errorf("registry calls %v, want one of each: the second replica asked again", calls)
			}
		})
	}
}
