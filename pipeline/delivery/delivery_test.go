package delivery_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/gateway/client"
	"facturad/hacienda"
	"facturad/hacienda/sample"
	"facturad/pipeline/delivery"
	"facturad/tenant"
	"facturad/tenant/certopen"
	"facturad/tenant/seal"
	"facturad/tenant/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// store is what the tests need of a store: both adapters are all of it.
type store interface {
	storetest.DeliveryStore
}

var storeKinds = []struct {
	name string
	open func(t *testing.T) store
}{
	{"sqlite", func(t *testing.T) store { return storetest.NewSQLiteStore(t) }},
	{"postgres", func(t *testing.T) store { return storetest.NewPostgresStore(t) }},
}

// eachStore runs fn on SQLite, and on PostgreSQL when the test
// environment has it.
func eachStore(t *testing.T, fn func(t *testing.T, s store)) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			if k.name == "postgres" && os.Getenv(storetest.EnvDatabaseURL) == "" && !storetest.RequireServices(t) {
				t.Skip("no " + storetest.EnvDatabaseURL)
			}
			fn(t, k.open(t))
		})
	}
}

type fixture struct {
	s     store
	svc   *tenant.Service
	admin tenant.Principal
	reg   *prometheus.Registry
}

func newFixture(t testing.TB, s store) *fixture {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := tenant.NewService(tenant.ServiceOptions{
		Store: s, Sealer: sealer, Certificates: certopen.Opener{},
		Passwords:   tenant.Argon2id{Memory: 64, Time: 1, Threads: 1},
		WebhookURLs: delivery.URLPolicy{AllowHTTP: true, AllowPrivate: true}, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{s: s, svc: svc, admin: tenant.Principal{UserID: 1, Username: "admin", Role: tenant.RoleAdmin}, reg: prometheus.NewRegistry()}
}

// company makes a company and returns it with its first branch.
func (f *fixture) company(t testing.TB, name string) (tenant.Company, tenant.Branch) {
	t.Helper()
	c := storetest.AddCompany(t, f.s, name)
	bs, err := f.s.Branches(context.Background(), c.ID)
	if err != nil || len(bs) == 0 {
		t.Fatalf("branches: %v", err)
	}
	return c, bs[0]
}

// webhook registers url for the company's events through the service,
// as the API does, and returns it with its secret.
func (f *fixture) webhook(t testing.TB, companyID int64, url string, eventos ...string) (tenant.Webhook, string) {
	t.Helper()
	w, secret, err := f.svc.CreateWebhook(context.Background(), f.admin, companyID, tenant.WebhookInput{URL: url, Eventos: eventos})
	if err != nil {
		t.Fatalf("CreateWebhook: %v", err)
	}
	return w, secret
}

var docSeq atomic.Int64

// event stores a document of the branch changing to estado: the outbox
// gets its event in the same save, as the pipeline's saves do.
func (f *fixture) event(t testing.TB, b tenant.Branch, to tenant.State, email []string, mods ...func(*tenant.Document)) tenant.Document {
	t.Helper()
	return f.eventIn(t, b, "", to, email, mods...)
}

// eventIn is event for a document numbered in ambiente (tenant.AmbientePruebas,
// AmbienteProduccion, or "" for none).
func (f *fixture) eventIn(t testing.TB, b tenant.Branch, ambiente string, to tenant.State, email []string, mods ...func(*tenant.Document)) tenant.Document {
	t.Helper()
	ctx := context.Background()
	n := docSeq.Add(1)
	d := tenant.Document{
		CompanyID:  b.CompanyID,
		BranchID:   b.ID,
		IDExterno:  fmt.Sprintf("ev-%d", n),
		Tipo:       "01",
		Terminal:   "00001",
		Situacion:  "1",
		Ambiente:   ambiente,
		Submission: tenant.Submission{Phase: tenant.PhaseFor(tenant.StatePending), Estado: tenant.StatePending},
	}
	if err := f.s.ReserveDocument(ctx, &d); err != nil {
		t.Fatal(err)
	}
	d.Clave = fmt.Sprintf("50621112600310112345600100001010%010d1%07d", d.Numero, n)
	d.Consecutivo = fmt.Sprintf("0010000101%010d", d.Numero)
	d.SignedXML = documentXML(t, d.Clave, d.Consecutivo)
	d.ResponseXML = []byte(fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?><MensajeHacienda><Clave>%s</Clave><Mensaje>1</Mensaje></MensajeHacienda>`, d.Clave))
	d.Place(to)
	for _, m := range mods {
		m(&d)
	}
	payload, _ := json.Marshal(map[string]string{"clave": d.Clave, "estado": string(to)})
	d.Event = &tenant.Event{ID: fmt.Sprintf("evt_%d_%d", b.CompanyID, n), Name: "documento." + tenant.EventState(to),
		Created: time.Now(), Clave: d.Clave, Payload: payload, Email: email}
	if err := f.s.SaveDocument(ctx, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// documentXML is a v4.4 Factura Electrónica (the sample's first, issued
// by sample.Issuer) with the given clave and consecutivo, as the store
// keeps a document's signed XML (its signature aside, which nothing here
// reads).
func documentXML(t testing.TB, clave, consecutivo string) []byte {
	t.Helper()
	doc := sample.Documents(1, 1)[0]
	doc.Clave, doc.NumeroConsecutivo = clave, consecutivo
	x, err := hacienda.MarshalXML(doc)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// deliverer starts a deliverer on the fixture's store with fast retries.
func (f *fixture) deliverer(t *testing.T, mod func(*delivery.Options)) *delivery.Deliverer {
	t.Helper()
	o := delivery.Options{
		Store: f.s, Secrets: f.svc, Holder: "test-" + t.Name(), Policy: delivery.URLPolicy{AllowHTTP: true, AllowPrivate: true},
		PollInterval: 10 * time.Millisecond, BackoffBase: 20 * time.Millisecond, BackoffMax: 100 * time.Millisecond,
		AttemptTimeout: 5 * time.Second, Logger: quiet, Registerer: f.reg,
	}
	if mod != nil {
		mod(&o)
	}
	d, err := delivery.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return d
}

// receiver is a real HTTP endpoint receiving webhooks: it verifies every
// signature with the documented verifier (client.VerifyWebhook), answers
// with status(n) for the n-th request, and keeps what it received.
type receiver struct {
	srv    *httptest.Server
	secret string
	status func(n int) int

	mu       sync.Mutex
	requests int
	events   []client.WebhookEvent
	badSigs  int
	got      chan client.WebhookEvent
}

func newReceiver(t *testing.T, status func(n int) int) *receiver {
	r := &receiver{status: status, got: make(chan client.WebhookEvent, 1000)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.requests++
		n := r.requests
		secret := r.secret
		r.mu.Unlock()
		if err := client.VerifyWebhook(secret, req.Header.Get(delivery.SignatureHeader), body, time.Now(), client.WebhookTolerance); err != nil {
			r.mu.Lock()
			r.badSigs++
			r.mu.Unlock()
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		code := http.StatusOK
		if r.status != nil {
			code = r.status(n)
		}
		if code/100 == 2 {
			var ev client.WebhookEvent
			if err := json.Unmarshal(body, &ev); err != nil {
				http.Error(w, "bad body", http.StatusBadRequest)
				return
			}
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
			r.got <- ev
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) wait(t *testing.T, n int) []client.WebhookEvent {
	t.Helper()
	var out []client.WebhookEvent
	timeout := time.After(30 * time.Second)
	for len(out) < n {
		select {
		case ev := <-r.got:
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("received %d of %d events", len(out), n)
		}
	}
	return out
}

func TestWebhookDeliveryRetriesAndSignature(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		f := newFixture(t, s)
		c, b := f.company(t, "Retries S.A.")
		// The endpoint answers 500 three times, then 200.
		r := newReceiver(t, func(n int) int {
			if n <= 3 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		w, secret := f.webhook(t, c.ID, r.srv.URL+"/hooks", "documento.aceptado")
		r.secret = secret
		d := f.event(t, b, tenant.StateAccepted, nil)
		f.event(t, b, tenant.StateRejected, nil) // not asked for
		f.deliverer(t, nil)
		evs := r.wait(t, 1)
		ev := evs[0]
		if ev.Evento != "documento.aceptado" || ev.ID == "" {
			t.Fatalf("event %+v", ev)
		}
		var data map[string]string
		if err := json.Unmarshal(ev.Data, &data); err != nil || data["clave"] != d.Clave {
			t.Fatalf("data %s: %v", ev.Data, err)
		}
		// The log shows the four attempts and the delivery.
		waitFor(t, func() bool {
			log, err := f.svc.WebhookDeliveries(context.Background(), f.admin, c.ID, w.ID, tenant.DeliveryPage{})
			return err == nil && len(log) == 1 && log[0].State() == tenant.DeliveryDelivered
		})
		log, _ := f.svc.WebhookDeliveries(context.Background(), f.admin, c.ID, w.ID, tenant.DeliveryPage{})
		if l := log[0]; l.Attempts != 4 || l.LastStatus != 200 || l.LastError != "" || l.EventID != ev.ID || l.Evento != "documento.aceptado" {
			t.Fatalf("log %+v", l)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.requests != 4 || r.badSigs != 0 {
			t.Fatalf("%d requests, %d bad signatures", r.requests, r.badSigs)
		}
		if v := attempts(t, f.reg, "webhook", "retry"); v != 3 {
			t.Errorf("retries counted %v", v)
		}
	})
}

// metricValue is the value of the counter or gauge name whose labels
// include labels.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			has := map[string]string{}
			for _, l := range m.GetLabel() {
				has[l.GetName()] = l.GetValue()
			}
			match := true
			for k, v := range labels {
				match = match && has[k] == v
			}
			if !match {
				continue
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return 0
}

// attempts reads facturad_delivery_attempts_total{kind,outcome}.
func attempts(t *testing.T, reg *prometheus.Registry, kind, outcome string) float64 {
	t.Helper()
	return metricValue(t, reg, "facturad_delivery_attempts_total", map[string]string{"kind": kind, "outcome": outcome})
}

// purged reads facturad_delivery_purged_total{kind}.
func purged(t *testing.T, reg *prometheus.Registry, kind string) float64 {
	t.Helper()
	return metricValue(t, reg, "facturad_delivery_purged_total", map[string]string{"kind": kind})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 3000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not met in 30s")
}

// A repeated delivery (the receiver's answer lost) carries the same event
// id and body: the receiver can tell it.
func TestWebhookRedeliveryKeepsEventID(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		f := newFixture(t, s)
		c, b := f.company(t, "Dedupe S.A.")
		// The first answer is a 503 after the receiver kept the event:
		// the service sends it again.
		var bodies [][]byte
		var mu sync.Mutex
		got := make(chan struct{}, 10)
		var secret string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			if err := client.VerifyWebhook(secret, req.Header.Get(delivery.SignatureHeader), body, time.Now(), client.WebhookTolerance); err != nil {
				http.Error(w, "bad signature", http.StatusUnauthorized)
				return
			}
			mu.Lock()
			bodies = append(bodies, body)
			n := len(bodies)
			mu.Unlock()
			got <- struct{}{}
			if n == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		defer srv.Close()
		_, secret = f.webhook(t, c.ID, srv.URL, "documento.aceptado")
		f.event(t, b, tenant.StateAccepted, nil)
		f.deliverer(t, nil)
		<-got
		<-got
		mu.Lock()
		defer mu.Unlock()
		if string(bodies[0]) != string(bodies[1]) {
			t.Fatalf("a repeat sent another body:\n%s\n%s", bodies[0], bodies[1])
		}
		var a, b2 client.WebhookEvent
		_ = json.Unmarshal(bodies[0], &a)
		_ = json.Unmarshal(bodies[1], &b2)
		if a.ID == "" || a.ID != b2.ID {
			t.Fatalf("event ids %q and %q", a.ID, b2.ID)
		}
	})
}

// A dead endpoint (it never answers) of one company does not delay
// another company's deliveries: they arrive while the dead one's
// attempts still hang.
func TestDeadEndpointDoesNotDelayOthers(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		f := newFixture(t, s)
		dead, deadBranch := f.company(t, "Muerta S.A.")
		alive, aliveBranch := f.company(t, "Viva S.A.")
		release := make(chan struct{})
		var hanging atomic.Int32
		deadSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			hanging.Add(1)
			select {
			case <-release:
			case <-req.Context().Done():
			}
		}))
		defer deadSrv.Close()
		defer close(release)
		f.webhook(t, dead.ID, deadSrv.URL, "documento.aceptado")
		for range 20 {
			f.event(t, deadBranch, tenant.StateAccepted, nil)
		}
		r := newReceiver(t, nil)
		_, r.secret = f.webhook(t, alive.ID, r.srv.URL, "documento.aceptado")
		// Attempts never time out within the test: the dead endpoint holds
		// its attempts as long as the test lasts.
		f.deliverer(t, func(o *delivery.Options) { o.AttemptTimeout = time.Hour; o.PerEndpoint = 2 })
		waitFor(t, func() bool { return hanging.Load() == 2 })
		for range 5 {
			f.event(t, aliveBranch, tenant.StateAccepted, nil)
		}
		r.wait(t, 5)
		if h := hanging.Load(); h != 2 {
			t.Fatalf("%d attempts at the dead endpoint at once, want its limit 2", h)
		}
	})
}

// At most PerEndpoint attempts run against one webhook at once.
func TestPerEndpointConcurrency(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		f := newFixture(t, s)
		c, b := f.company(t, "Concurrencia S.A.")
		var inFlight, most atomic.Int32
		var secret string
		done := make(chan struct{}, 100)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			n := inFlight.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
			inFlight.Add(-1)
			body, _ := io.ReadAll(req.Body)
			if client.VerifyWebhook(secret, req.Header.Get(delivery.SignatureHeader), body, time.Now(), client.WebhookTolerance) != nil {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			done <- struct{}{}
		}))
		defer srv.Close()
		_, secret = f.webhook(t, c.ID, srv.URL, "documento.enviado")
		for range 24 {
			f.event(t, b, tenant.StateSent, nil)
		}
		f.deliverer(t, func(o *delivery.Options) { o.PerEndpoint = 3 })
		for range 24 {
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("deliveries did not arrive")
			}
		}
		if m := most.Load(); m > 3 || m < 2 {
			t.Fatalf("%d attempts at once, want at most 3 (and some at once)", m)
		}
	})
}

// Redirects are answers, not followed; a delivery past MaxAge fails.
func TestRedirectNotFollowedAndGiveUp(t *testing.T) {
	f := newFixture(t, storetest.NewSQLiteStore(t))
	c, b := f.company(t, "Redirige S.A.")
	var followed atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { followed.Add(1) }))
	defer target.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target.URL, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	w, _ := f.webhook(t, c.ID, redirect.URL, "documento.error")
	f.event(t, b, tenant.StateError, nil)
	f.deliverer(t, func(o *delivery.Options) { o.MaxAge = 50 * time.Millisecond })
	waitFor(t, func() bool {
		log, err := f.svc.WebhookDeliveries(context.Background(), f.admin, c.ID, w.ID, tenant.DeliveryPage{})
		return err == nil && len(log) == 1 && log[0].State() == tenant.DeliveryFailed
	})
	log, _ := f.svc.WebhookDeliveries(context.Background(), f.admin, c.ID, w.ID, tenant.DeliveryPage{})
	if log[0].LastStatus != http.StatusTemporaryRedirect || log[0].LastError != "HTTP 307" || log[0].Attempts < 1 {
		t.Fatalf("log %+v", log[0])
	}
	if followed.Load() != 0 {
		t.Fatal("the redirect was followed")
	}
}

// storedWebhook stores a webhook for url without the service's checks
// (as if its name had resolved elsewhere at registration), with a secret
// sealed for the company as the service seals one, subscribed to
// documento.aceptado.
func (f *fixture) storedWebhook(t testing.TB, companyID int64, url string) tenant.Webhook {
	t.Helper()
	sealed, _, err := f.svc.CreateWebhook(context.Background(), f.admin, companyID, tenant.WebhookInput{URL: "http://127.0.0.1:1/unused", Eventos: []string{"recibido.error"}})
	if err != nil {
		t.Fatal(err)
	}
	w := tenant.Webhook{CompanyID: companyID, URL: url, Eventos: []string{"documento.aceptado"}, SealedSecret: sealed.SealedSecret}
	if err := f.s.CreateWebhook(context.Background(), &w, 10); err != nil {
		t.Fatal(err)
	}
	return w
}

// The deliverer deletes settled deliveries and e-mails past the
// retention, in batches, on its own: a delivered webhook delivery and a
// sent e-mail disappear, a delivery still being retried stays however
// old, and the purged counter says how many went.
func TestPurgeLoopDeletesSettled(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		f := newFixture(t, s)
		c, b := f.company(t, "Retencion S.A.")
		ok := newReceiver(t, nil)
		okHook, secret := f.webhook(t, c.ID, ok.srv.URL, "documento.aceptado")
		ok.secret = secret
		down := newReceiver(t, func(int) int { return http.StatusServiceUnavailable })
		downHook, secret := f.webhook(t, c.ID, down.srv.URL, "documento.aceptado")
		down.secret = secret
		var docs []tenant.Document
		for range 3 {
			docs = append(docs, f.event(t, b, tenant.StateAccepted, []string{"cliente@example.com"}))
		}
		// No mailer runs: the e-mails are recorded as sent here.
		for _, d := range docs {
			es, err := s.DocumentEmails(ctx, d.ID)
			if err != nil || len(es) != 1 {
				t.Fatalf("e-mails of %s: %v %v", d.Clave, es, err)
			}
			if err := s.RecordEmail(ctx, es[0].ID, tenant.EmailResult{At: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		deliveries := func(id int64) []tenant.Delivery {
			t.Helper()
			log, err := f.svc.WebhookDeliveries(ctx, f.admin, c.ID, id, tenant.DeliveryPage{})
			if err != nil {
				t.Fatal(err)
			}
			return log
		}
		f.deliverer(t, func(o *delivery.Options) {
			o.Retention, o.PurgeInterval, o.PurgeBatch = 300*time.Millisecond, 20*time.Millisecond, 2
		})
		ok.wait(t, 3)
		// The counter is added to after the batch's rows are gone: wait
		// for both, then check that it counted each row once.
		waitFor(t, func() bool {
			if len(deliveries(okHook.ID)) != 0 {
				return false
			}
			for _, d := range docs {
				if es, err := s.DocumentEmails(ctx, d.ID); err != nil || len(es) != 0 {
					return false
				}
			}
			return purged(t, f.reg, "webhook") >= 3 && purged(t, f.reg, "email") >= 3
		})
		left := deliveries(downHook.ID)
		if len(left) != 3 {
			t.Fatalf("%d deliveries left on the failing endpoint, want its 3 pending ones", len(left))
		}
		for _, l := range left {
			if l.State() != tenant.DeliveryPending || l.Attempts < 1 {
				t.Fatalf("a delivery being retried: %+v", l)
			}
		}
		for kind, want := range map[string]float64{"webhook": 3, "email": 3} {
			if v := purged(t, f.reg, kind); v != want {
				t.Errorf("facturad_delivery_purged_total{kind=%q} = %v, want %v", kind, v, want)
			}
		}
	})
}

// A retention that is negative keeps everything: no purge runs.
func TestPurgeOffKeepsSettled(t *testing.T) {
	f := newFixture(t, storetest.NewSQLiteStore(t))
	c, b := f.company(t, "Para Siempre S.A.")
	r := newReceiver(t, nil)
	w, secret := f.webhook(t, c.ID, r.srv.URL, "documento.aceptado")
	r.secret = secret
	f.event(t, b, tenant.StateAccepted, nil)
	f.deliverer(t, func(o *delivery.Options) {
		o.Retention, o.PurgeInterval = -1, 10*time.Millisecond
	})
	r.wait(t, 1)
	time.Sleep(200 * time.Millisecond) // ten purge intervals
	log, err := f.svc.WebhookDeliveries(context.Background(), f.admin, c.ID, w.ID, tenant.DeliveryPage{})
	if err != nil || len(log) != 1 {
		t.Fatalf("log %v: %v, want the delivered one kept", log, err)
	}
	if v := purged(t, f.reg, "webhook"); v != 0 {
		t.Fatalf("purged %v", v)
	}
}

// facturad_webhook_endpoints counts webhooks, not attempts: one dead
// endpoint, however many deliveries it retries, is one failing webhook
// beside the healthy ones.
func TestWebhookEndpointsGauge(t *testing.T) {
	f := newFixture(t, storetest.NewSQLiteStore(t))
	var healthy []*receiver
	for i := range 3 {
		c, b := f.company(t, fmt.Sprintf("Sana %d S.A.", i))
		r := newReceiver(t, nil)
		_, r.secret = f.webhook(t, c.ID, r.srv.URL, "documento.aceptado")
		f.event(t, b, tenant.StateAccepted, nil)
		healthy = append(healthy, r)
	}
	c, b := f.company(t, "Caida S.A.")
	dead := newReceiver(t, func(int) int { return http.StatusBadGateway })
	_, dead.secret = f.webhook(t, c.ID, dead.srv.URL, "documento.aceptado")
	for range 10 {
		f.event(t, b, tenant.StateAccepted, nil)
	}
	f.deliverer(t, nil)
	for _, r := range healthy {
		r.wait(t, 1)
	}
	waitFor(t, func() bool {
		dead.mu.Lock()
		defer dead.mu.Unlock()
		return dead.requests >= 20 // every delivery retried at least once
	})
	up := metricValue(t, f.reg, "facturad_webhook_endpoints", map[string]string{"state": "healthy"})
	down := metricValue(t, f.reg, "facturad_webhook_endpoints", map[string]string{"state": "failing"})
	if up != 3 || down != 1 {
		t.Fatalf("facturad_webhook_endpoints: %v healthy and %v failing, want 3 and 1", up, down)
	}
}

// The delivery log gives one row more than its largest page when asked
// (the gateway's look at whether another page follows), so a log longer
// than a page of DeliveryLogLimit still pages on.
func TestDeliveryLogLargestPage(t *testing.T) {
	f := newFixture(t, storetest.NewSQLiteStore(t))
	c, b := f.company(t, "Bitácora S.A.")
	w, _ := f.webhook(t, c.ID, "https://93.184.215.14/log", "documento.error")
	for range tenant.DeliveryLogLimit + 2 {
		f.event(t, b, tenant.StateError, nil)
	}
	for _, tt := range []struct{ ask, want int }{
		{tenant.DeliveryLogLimit + 1, tenant.DeliveryLogLimit + 1},
		{tenant.DeliveryLogLimit + 50, tenant.DeliveryLogLimit + 1},
		{0, tenant.DeliveryLogLimit + 1},
		{10, 10},
	} {
		log, err := f.svc.WebhookDeliveries(context.Background(), f.admin, c.ID, w.ID, tenant.DeliveryPage{Limit: tt.ask})
		if err != nil || len(log) != tt.want {
			t.Errorf("asked %d: %d rows, %v; want %d", tt.ask, len(log), err, tt.want)
		}
	}
}
