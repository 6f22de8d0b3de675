package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/tenant"
)

// TenantEventStore is what the tenant events' suite needs: companies,
// documents, webhooks and e-mails, credential stops and the
// tenant.TenantEventStore under test. Both adapters are all of it.
type TenantEventStore interface {
	DeliveryStore
	tenant.CredentialStopStore
	tenant.TenantEventStore
}

// RunTenantEvents checks every behaviour of tenant.TenantEventStore, and
// the event of a credential stop that begins, as subtests. open must
// return a fresh, empty, migrated store for each call.
func RunTenantEvents(t *testing.T, open func(t *testing.T) TenantEventStore) {
	contract[TenantEventStore]{
		{"ok/an occasion is recorded once: its deliveries and e-mail once, nothing after", testTenantEventOnce},
		{"ok/an event records only its new occasions and renders its data for them", testTenantEventNewOccasions},
		{"ok/a notice e-mail is claimed, recorded, re-queued and purged like a document's, and is no document's", testTenantEventEmail},
		{"error/an event without company, name, id, payload or occasion is refused", testTenantEventRefused},
		{"error/an event whose data cannot be rendered writes nothing", testTenantEventRenderFails},
		{"ok/a credential stop that begins is announced once, one already there is not", testCredentialStopEvent},
		{"ok/expiring certificates: active companies before the date, by expiry, in pages, of an owner", testExpiringCertificates},
		{"ok/stuck documents: unsettled, numbered before the time, oldest first, in pages, of an owner", testStuckDocuments},
		{"ok/stuck documents not yet announced leave out those a documentos.detenidos named", testStuckUnannounced},
	}.run(t, open)
}

// RunTenantEventReplicas records the same occasions from two stores on one
// database at once, many times: each occasion is recorded once, with one
// delivery per webhook and one e-mail, whichever store recorded it.
func RunTenantEventReplicas(t *testing.T, open func(t *testing.T) (TenantEventStore, TenantEventStore)) {
	a, b := open(t)
	ctx := context.Background()
	f := newDocFixture(t, a)
	hook := newWebhook(t, a, f.Company.ID, "https://hooks.example/events", tenant.EventCertificateExpiring, tenant.EventDocumentsStuck)
	const occasions = 12
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		recorded = map[string]int{}
	)
	for w := range 8 {
		s := []TenantEventStore{a, b}[w%2]
		wg.Go(func() {
			for i := range occasions {
				// Overlapping sets, in different orders: recorders of one
				// occasion queue, and none deadlocks.
				occ := []string{fmt.Sprintf("o-%02d", i), fmt.Sprintf("o-%02d", (i+w)%occasions)}
				if w%3 == 0 {
					slices.Reverse(occ)
				}
				ev := testEvent(f.Company.ID, tenant.EventDocumentsStuck, []string{"aviso@example.com"}, occ...)
				got, err := s.RecordTenantEvent(ctx, ev)
				if err != nil {
					t.Errorf("RecordTenantEvent: %v", err)
					return
				}
				mu.Lock()
				for _, o := range got {
					recorded[o]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(recorded) != occasions {
		t.Errorf("%d occasions recorded, want %d: %v", len(recorded), occasions, recorded)
	}
	for o, n := range recorded {
		if n != 1 {
			t.Errorf("occasion %s recorded %d times", o, n)
		}
	}
	// Every delivery's data names the occasions its event recorded: their
	// union is every occasion, each once.
	seen := map[string]int{}
	for _, d := range allDeliveries(t, a, hook.ID) {
		for _, o := range payloadOccasions(t, d.Payload) {
			seen[o]++
		}
	}
	for o, n := range seen {
		if n != 1 {
			t.Errorf("occasion %s delivered %d times", o, n)
		}
	}
	if len(seen) != occasions {
		t.Errorf("%d occasions delivered, want %d", len(seen), occasions)
	}
	mails := notices(t, a)
	mailed := map[string]int{}
	for _, e := range mails {
		for _, o := range payloadOccasions(t, e.Payload) {
			mailed[o]++
		}
	}
	if len(mailed) != occasions || len(mails) != len(allDeliveries(t, a, hook.ID)) {
		t.Errorf("%d e-mails naming %d occasions, want one per event naming %d", len(mails), len(mailed), occasions)
	}
}

// testEvent is an event whose data lists the occasions it records, as
// {"ocasiones": [...]}.
func testEvent(companyID int64, name string, email []string, occasions ...string) tenant.TenantEvent {
	return tenant.TenantEvent{
		CompanyID: companyID,
		Name:      name,
		ID:        tenant.NewEventID(),
		Created:   time.Now().UTC().Truncate(time.Microsecond),
		Occasions: occasions,
		Email:     email,
		Payload: func(recorded []string) ([]byte, error) {
			return json.Marshal(map[string][]string{"ocasiones": recorded})
		},
	}
}

func payloadOccasions(t *testing.T, payload []byte) []string {
	t.Helper()
	var p struct {
		Ocasiones []string `json:"ocasiones"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		t.Fatalf("payload %s: %v", payload, err)
	}
	return p.Ocasiones
}

// notices claims every due notice e-mail (far in the future, so that none
// is left) and returns them; a document's e-mail claimed fails the test.
func notices(t *testing.T, s DeliveryStore) []tenant.EmailDelivery {
	t.Helper()
	far := time.Now().Add(24 * time.Hour)
	es, err := s.ClaimDueEmails(context.Background(), far, far.Add(time.Hour), 1000)
	mustNot(t, "ClaimDueEmails", err)
	for _, e := range es {
		if e.Evento == "" || e.DocumentID != 0 {
			t.Errorf("claimed %+v, want notices only", e)
		}
	}
	return es
}

func testTenantEventOnce(t *testing.T, s TenantEventStore) {
	ctx := context.Background()
	f, other := newDocFixture(t, s), newDocFixture(t, s)
	asked := newWebhook(t, s, f.Company.ID, "https://hooks.example/cert", tenant.EventCertificateExpiring)
	notAsked := newWebhook(t, s, f.Company.ID, "https://hooks.example/docs", "documento.aceptado", tenant.EventCertificateExpired)
	otherHook := newWebhook(t, s, other.Company.ID, "https://hooks.example/other", tenant.EventCertificateExpiring)

	ev := testEvent(f.Company.ID, tenant.EventCertificateExpiring, []string{"aviso@example.com", "otro@example.com"}, "30d:2027-01-01T00:00:00Z")
	got, err := s.RecordTenantEvent(ctx, ev)
	mustNot(t, "RecordTenantEvent", err)
	if !slices.Equal(got, ev.Occasions) {
		t.Errorf("recorded %v, want %v", got, ev.Occasions)
	}
	ds := allDeliveries(t, s, asked.ID)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries to the webhook that asked, want 1", len(ds))
	}
	d := ds[0]
	if d.EventID != ev.ID || d.Evento != ev.Name || d.Clave != "" || d.CompanyID != f.Company.ID ||
		!d.Created.Equal(ev.Created) || d.State() != tenant.DeliveryPending || !d.NextAttemptAt.Equal(ev.Created) {
		t.Errorf("delivery %+v, want event %s %s created %s, pending, due at once", d, ev.ID, ev.Name, ev.Created)
	}
	if o := payloadOccasions(t, d.Payload); !slices.Equal(o, ev.Occasions) {
		t.Errorf("delivered data names %v", o)
	}
	for _, h := range []tenant.Webhook{notAsked, otherHook} {
		if n := len(allDeliveries(t, s, h.ID)); n != 0 {
			t.Errorf("%d deliveries to webhook %s, which did not ask or is another company's", n, h.URL)
		}
	}
	mails := notices(t, s)
	if len(mails) != 1 {
		t.Fatalf("%d notice e-mails, want 1", len(mails))
	}
	m := mails[0]
	if m.CompanyID != f.Company.ID || m.Evento != ev.Name || m.EventID != ev.ID || m.Clave != "" ||
		!slices.Equal(m.Recipients, ev.Email) || !m.Created.Equal(ev.Created) || string(m.Payload) != string(d.Payload) {
		t.Errorf("notice e-mail %+v, want the event's addresses and data", m)
	}

	// The same occasion again, as another replica or a restart would
	// record it, under another event id: nothing.
	again := testEvent(f.Company.ID, tenant.EventCertificateExpiring, []string{"aviso@example.com"}, ev.Occasions...)
	got, err = s.RecordTenantEvent(ctx, again)
	mustNot(t, "RecordTenantEvent again", err)
	if len(got) != 0 {
		t.Errorf("recorded %v again", got)
	}
	if n := len(allDeliveries(t, s, asked.ID)); n != 1 {
		t.Errorf("%d deliveries after recording the occasion again, want 1", n)
	}
	if n := len(notices(t, s)); n != 0 {
		t.Errorf("%d e-mails written by the repeat", n)
	}
	// The occasion is the company's and the event's: another company, or
	// another event, with the same occasion is its own.
	for _, e := range []tenant.TenantEvent{
		testEvent(other.Company.ID, tenant.EventCertificateExpiring, nil, ev.Occasions...),
		testEvent(f.Company.ID, tenant.EventCertificateExpired, nil, ev.Occasions...),
	} {
		got, err := s.RecordTenantEvent(ctx, e)
		mustNot(t, "RecordTenantEvent", err)
		if len(got) != 1 {
			t.Errorf("%s of company %d: recorded %v, want its own occasion", e.Name, e.CompanyID, got)
		}
	}
	if n := len(allDeliveries(t, s, otherHook.ID)); n != 1 {
		t.Errorf("%d deliveries to the other company's webhook, want 1", n)
	}
	if n := len(allDeliveries(t, s, notAsked.ID)); n != 1 {
		t.Errorf("%d deliveries of certificado.vencido, want 1", n)
	}
	if n := len(notices(t, s)); n != 0 {
		t.Errorf("%d e-mails of events without addresses", n)
	}
}

func testTenantEventNewOccasions(t *testing.T, s TenantEventStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	hook := newWebhook(t, s, f.Company.ID, "https://hooks.example/stuck", tenant.EventDocumentsStuck)
	first := testEvent(f.Company.ID, tenant.EventDocumentsStuck, nil, "c", "a")
	got, err := s.RecordTenantEvent(ctx, first)
	mustNot(t, "RecordTenantEvent", err)
	if !slices.Equal(got, []string{"c", "a"}) {
		t.Errorf("recorded %v, want [c a] (the event's order)", got)
	}
	// b and d are new; a and c were recorded; d twice is one.
	second := testEvent(f.Company.ID, tenant.EventDocumentsStuck, nil, "d", "a", "b", "c", "d")
	got, err = s.RecordTenantEvent(ctx, second)
	mustNot(t, "RecordTenantEvent", err)
	if !slices.Equal(got, []string{"d", "b"}) {
		t.Errorf("recorded %v, want [d b]", got)
	}
	ds := allDeliveries(t, s, hook.ID) // newest first
	if len(ds) != 2 {
		t.Fatalf("%d deliveries, want 2", len(ds))
	}
	if o := payloadOccasions(t, ds[0].Payload); ds[0].EventID != second.ID || !slices.Equal(o, []string{"d", "b"}) {
		t.Errorf("second event's delivery %s names %v, want %s naming [d b]", ds[0].EventID, o, second.ID)
	}
	if o := payloadOccasions(t, ds[1].Payload); ds[1].EventID != first.ID || !slices.Equal(o, []string{"c", "a"}) {
		t.Errorf("first event's delivery %s names %v, want %s naming [c a]", ds[1].EventID, o, first.ID)
	}
}

func testTenantEventEmail(t *testing.T, s TenantEventStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	created := time.Now().Add(-2 * time.Hour).UTC().Truncate(time.Microsecond)
	ev := testEvent(f.Company.ID, tenant.EventCredentialsRefused, []string{"aviso@example.com"}, "2026-11-27T08:00:00Z")
	ev.Created = created
	_, err := s.RecordTenantEvent(ctx, ev)
	mustNot(t, "RecordTenantEvent", err)
	// A document's e-mail beside it: the document's list holds its own
	// only.
	d := savedEventAt(t, s, f.Branch, "doc-mail", tenant.StateAccepted, []string{"cliente@example.com"}, created)
	docMail := docEmail(t, s, d.ID)
	if docMail.Evento != "" || docMail.EventID != "" || docMail.Payload != nil || docMail.DocumentID != d.ID {
		t.Errorf("a document's e-mail %+v carries a notice's fields", docMail)
	}

	now := time.Now()
	claimed, err := s.ClaimDueEmails(ctx, now, now.Add(time.Minute), 10)
	mustNot(t, "ClaimDueEmails", err)
	if len(claimed) != 2 {
		t.Fatalf("claimed %d e-mails, want the notice and the document's", len(claimed))
	}
	var notice tenant.EmailDelivery
	for _, e := range claimed {
		if e.Evento != "" {
			notice = e
		}
	}
	if notice.DocumentID != 0 || notice.EventID != ev.ID || notice.Evento != tenant.EventCredentialsRefused {
		t.Fatalf("claimed notice %+v", notice)
	}
	again, err := s.ClaimDueEmails(ctx, now, now.Add(time.Minute), 10)
	mustNot(t, "ClaimDueEmails", err)
	if len(again) != 0 {
		t.Errorf("claimed %d e-mails again within the lease", len(again))
	}
	// Failed for good, re-queued in bulk with the company's others, sent.
	mustNot(t, "RecordEmail", s.RecordEmail(ctx, notice.ID, tenant.EmailResult{At: now, Error: "smtp rcpt: every recipient was refused"}))
	n, err := s.RequeueFailedEmails(ctx, created.Add(-time.Minute), f.Company.ID, now)
	mustNot(t, "RequeueFailedEmails", err)
	if n != 1 {
		t.Errorf("re-queued %d failed e-mails, want the notice", n)
	}
	claimed, err = s.ClaimDueEmails(ctx, now, now.Add(time.Minute), 10)
	mustNot(t, "ClaimDueEmails", err)
	if len(claimed) != 1 || claimed[0].ID != notice.ID {
		t.Fatalf("claimed %+v after the re-queue, want the notice", claimed)
	}
	mustNot(t, "RecordEmail", s.RecordEmail(ctx, notice.ID, tenant.EmailResult{At: now}))
	mustNot(t, "RecordEmail", s.RecordEmail(ctx, docMail.ID, tenant.EmailResult{At: now}))
	pending, _, err := s.EmailBacklog(ctx)
	mustNot(t, "EmailBacklog", err)
	if pending != 0 {
		t.Errorf("%d e-mails pending after both were sent", pending)
	}
	// Past the retention both go.
	_, emails, err := s.PurgeDeliveries(ctx, now, 10)
	mustNot(t, "PurgeDeliveries", err)
	if emails != 2 {
		t.Errorf("purged %d e-mails, want the notice and the document's", emails)
	}
}

func testTenantEventRefused(t *testing.T, s TenantEventStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	ok := testEvent(f.Company.ID, tenant.EventCertificateExpired, nil, "x")
	for name, change := range map[string]func(e *tenant.TenantEvent){
		"no company":     func(e *tenant.TenantEvent) { e.CompanyID = 0 },
		"document event": func(e *tenant.TenantEvent) { e.Name = "documento.aceptado" },
		"no id":          func(e *tenant.TenantEvent) { e.ID = "" },
		"no time":        func(e *tenant.TenantEvent) { e.Created = time.Time{} },
		"no payload":     func(e *tenant.TenantEvent) { e.Payload = nil },
		"no occasion":    func(e *tenant.TenantEvent) { e.Occasions = nil },
		"empty occasion": func(e *tenant.TenantEvent) { e.Occasions = []string{"y", ""} },
	} {
		e := ok
		change(&e)
		if got, err := s.RecordTenantEvent(ctx, e); err == nil {
			t.Errorf("%s: recorded %v", name, got)
		}
	}
	// Refused, nothing was recorded: the good event records its occasion.
	got, err := s.RecordTenantEvent(ctx, ok)
	mustNot(t, "RecordTenantEvent", err)
	if len(got) != 1 {
		t.Errorf("recorded %v after the refusals, want [x]", got)
	}
	// A company that does not exist.
	if _, err := s.RecordTenantEvent(ctx, testEvent(f.Company.ID+1000, tenant.EventCertificateExpired, nil, "x")); err == nil {
		t.Error("an event of a company that does not exist was recorded")
	}
}

func testTenantEventRenderFails(t *testing.T, s TenantEventStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	hook := newWebhook(t, s, f.Company.ID, "https://hooks.example/x", tenant.EventCertificateExpired)
	ev := testEvent(f.Company.ID, tenant.EventCertificateExpired, []string{"aviso@example.com"}, "z")
	ev.Payload = func([]string) ([]byte, error) { return nil, fmt.Errorf("cannot render") }
	if _, err := s.RecordTenantEvent(ctx, ev); err == nil || !strings.Contains(err.Error(), "cannot render") {
		t.Errorf("RecordTenantEvent = %v, want the render's error", err)
	}
	if n := len(allDeliveries(t, s, hook.ID)); n != 0 {
		t.Errorf("%d deliveries written", n)
	}
	// The occasion was rolled back with the rest: recorded now.
	got, err := s.RecordTenantEvent(ctx, testEvent(f.Company.ID, tenant.EventCertificateExpired, nil, "z"))
	mustNot(t, "RecordTenantEvent", err)
	if len(got) != 1 {
		t.Errorf("recorded %v, want [z]: the failed event must leave nothing", got)
	}
}

func testCredentialStopEvent(t *testing.T, s TenantEventStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	hook := newWebhook(t, s, f.Company.ID, "https://hooks.example/creds", tenant.EventCredentialsRefused)
	since := stopBase
	ev := testEvent(f.Company.ID, tenant.EventCredentialsRefused, []string{"aviso@example.com"}, since.Format(time.RFC3339Nano))
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, f.Company.ID, since, since.Add(time.Minute), &ev))
	if n := len(allDeliveries(t, s, hook.ID)); n != 1 {
		t.Fatalf("%d deliveries of the stop that began, want 1", n)
	}
	// Another refusal while stopped: the stop is there, nothing announced,
	// even with an occasion of its own.
	later := testEvent(f.Company.ID, tenant.EventCredentialsRefused, []string{"aviso@example.com"}, since.Add(time.Minute).Format(time.RFC3339Nano))
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, f.Company.ID, since.Add(time.Minute), since.Add(2*time.Minute), &later))
	if n := len(allDeliveries(t, s, hook.ID)); n != 1 {
		t.Errorf("%d deliveries after a refusal while stopped, want 1", n)
	}
	if n := len(notices(t, s)); n != 1 {
		t.Errorf("%d notice e-mails, want 1", n)
	}
	// Resumed, then refused again: a new stop, a new event.
	_, err := s.ResumeCredentialStop(ctx, f.Company.ID, since.Add(time.Hour))
	mustNot(t, "ResumeCredentialStop", err)
	again := testEvent(f.Company.ID, tenant.EventCredentialsRefused, nil, since.Add(2*time.Hour).Format(time.RFC3339Nano))
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, f.Company.ID, since.Add(2*time.Hour), since.Add(3*time.Hour), &again))
	if n := len(allDeliveries(t, s, hook.ID)); n != 2 {
		t.Errorf("%d deliveries after a second stop, want 2", n)
	}
	// A refused event leaves the stop unrecorded too (one transaction).
	g := newDocFixture(t, s)
	bad := testEvent(g.Company.ID, tenant.EventCredentialsRefused, nil, "x")
	bad.Payload = func([]string) ([]byte, error) { return nil, fmt.Errorf("cannot render") }
	if err := s.StopOnCredentials(ctx, g.Company.ID, since, since.Add(time.Minute), &bad); err == nil {
		t.Error("a stop whose event fails was recorded")
	}
	probed, err := s.ProbeCredentialStops(ctx, since.Add(time.Hour), time.Minute, time.Hour, 10)
	mustNot(t, "ProbeCredentialStops", err)
	if slices.Contains(probed, g.Company.ID) {
		t.Error("the stop whose event failed was kept")
	}
}

// certCompany creates a company of owner whose certificate expires at
// expiry, active or not.
func certCompany(t *testing.T, s tenant.Store, name string, owner int64, expiry time.Time, active bool) tenant.Company {
	t.Helper()
	ctx := context.Background()
	id, err := s.NextCompanyID(ctx)
	mustNot(t, "NextCompanyID", err)
	c, b, u := company(id, name), branch("001"), user(fmt.Sprintf("cert-%d", id))
	c.OwnerID, c.CertificateExpiry, c.Activo = owner, expiry, active
	c.CorreoNotificaciones = fmt.Sprintf("aviso%d@example.com", id)
	if expiry.IsZero() {
		c.SealedCertificate, c.SealedCertificatePIN = nil, nil
	}
	mustNot(t, "CreateCompany", s.CreateCompany(ctx, &c, &b, &u))
	return c
}

func testExpiringCertificates(t *testing.T, s TenantEventStore) {
	ctx := context.Background()
	base := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	day := func(d int) time.Time { return base.Add(time.Duration(d) * 24 * time.Hour) }
	// Ties on the expiry order by id.
	want := []tenant.Company{
		certCompany(t, s, "Vencida", 0, day(-3), true),
		certCompany(t, s, "Pronto A", 7, day(2), true),
		certCompany(t, s, "Pronto B", 0, day(2), true),
		certCompany(t, s, "Mes", 7, day(20), true),
	}
	certCompany(t, s, "Inactiva", 0, day(1), false)
	certCompany(t, s, "Sin certificado", 0, time.Time{}, true)
	certCompany(t, s, "Lejana", 7, day(40), true)
	edge := certCompany(t, s, "En el borde", 0, day(30), true)

	list := func(q tenant.CertificateQuery) []int64 {
		t.Helper()
		var ids []int64
		for {
			page, err := s.ExpiringCertificates(ctx, q)
			mustNot(t, "ExpiringCertificates", err)
			for _, c := range page {
				ids = append(ids, c.CompanyID)
			}
			if len(page) < q.Limit {
				return ids
			}
			k := page[len(page)-1].ListKey()
			q.After = &k
		}
	}
	ids := func(cs []tenant.Company) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	// Strictly before: the one expiring at day(30) is left out.
	for _, limit := range []int{1, 2, 3, 100} {
		got := list(tenant.CertificateQuery{Before: day(30), Limit: limit})
		if !slices.Equal(got, ids(want)) {
			t.Errorf("pages of %d: %v, want %v", limit, got, ids(want))
		}
	}
	if got := list(tenant.CertificateQuery{Before: day(30).Add(time.Microsecond), Limit: 10}); !slices.Equal(got, append(ids(want), edge.ID)) {
		t.Errorf("up to the edge: %v", got)
	}
	if got := list(tenant.CertificateQuery{Before: day(30), OwnerID: 7, Limit: 1}); !slices.Equal(got, []int64{want[1].ID, want[3].ID}) {
		t.Errorf("owner 7: %v, want %v", got, []int64{want[1].ID, want[3].ID})
	}
	page, err := s.ExpiringCertificates(ctx, tenant.CertificateQuery{Before: day(0), Limit: 10})
	mustNot(t, "ExpiringCertificates", err)
	if len(page) != 1 {
		t.Fatalf("expired only: %+v", page)
	}
	c := page[0]
	w := want[0]
	if c.CompanyID != w.ID || c.OwnerID != 0 || c.NumeroIdentificacion != w.NumeroIdentificacion || c.RazonSocial != w.RazonSocial ||
		c.Ambiente != w.Ambiente || c.CorreoNotificaciones != w.CorreoNotificaciones || !c.Expiry.Equal(w.CertificateExpiry) || !isUTC(c.Expiry) {
		t.Errorf("row %+v, want company %+v", c, w)
	}
	for _, q := range []tenant.CertificateQuery{{Limit: 1}, {Before: day(1)}, {Before: day(1), Limit: tenant.MaxListLimit + 2}} {
		if _, err := s.ExpiringCertificates(ctx, q); err == nil {
			t.Errorf("query %+v was run", q)
		}
	}
}

// stuckFixture stores documents of two companies (one of owner 9) in
// every state, numbered in turn; cut falls between the early ones and the
// late ones.
type stuckFixture struct {
	early, late []tenant.Document // unsettled, numbered before and after cut
	owned       []tenant.Document // of early, those of owner 9's company
	cut         time.Time
}

func newStuckFixture(t *testing.T, s TenantEventStore) stuckFixture {
	t.Helper()
	ctx := context.Background()
	f := newDocFixture(t, s)
	id, err := s.NextCompanyID(ctx)
	mustNot(t, "NextCompanyID", err)
	c, b, u := company(id, "Revendida"), branch("001"), user(fmt.Sprintf("stuck-%d", id))
	c.OwnerID = 9
	mustNot(t, "CreateCompany", s.CreateCompany(ctx, &c, &b, &u))
	var fx stuckFixture
	doc := func(br tenant.Branch, name string, st tenant.State, next time.Time) tenant.Document {
		d := stoppedDocument(t, s, br, name, st, next)
		time.Sleep(2 * time.Millisecond) // distinct numbering times
		return d
	}
	soon := time.Now().Add(time.Hour)
	for i, st := range []tenant.State{tenant.StatePending, tenant.StateSent, tenant.StateNotSentYet, tenant.StateAccepted, tenant.StateRejected, tenant.StateError} {
		next := time.Time{}
		if i%2 == 0 {
			next = soon
		}
		d := doc(f.Branch, "early-"+string(st), st, next)
		o := doc(b, "owned-"+string(st), st, next)
		if st == tenant.StatePending || st == tenant.StateSent || st == tenant.StateNotSentYet {
			fx.early = append(fx.early, d, o)
			fx.owned = append(fx.owned, o)
		}
	}
	fx.cut = time.Now()
	time.Sleep(2 * time.Millisecond)
	fx.late = append(fx.late, doc(f.Branch, "late", tenant.StateNotSentYet, soon))
	return fx
}

func stuckClaves(t *testing.T, s TenantEventStore, q tenant.StuckQuery) []string {
	t.Helper()
	var out []string
	for {
		page, err := s.StuckDocuments(context.Background(), q)
		mustNot(t, "StuckDocuments", err)
		for _, d := range page {
			out = append(out, d.Clave)
		}
		if len(page) < q.Limit {
			return out
		}
		k := page[len(page)-1].ListKey()
		q.After = &k
	}
}

func claves(ds []tenant.Document) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Clave)
	}
	return out
}

func testStuckDocuments(t *testing.T, s TenantEventStore) {
	ctx := context.Background()
	fx := newStuckFixture(t, s)
	// The oldest first, across the three states, in pages of any size.
	for _, limit := range []int{1, 2, 5, 100} {
		got := stuckClaves(t, s, tenant.StuckQuery{NumberedBefore: fx.cut, Limit: limit})
		if !slices.Equal(got, claves(fx.early)) {
			t.Errorf("pages of %d:\n%v\nwant\n%v", limit, got, claves(fx.early))
		}
	}
	all := stuckClaves(t, s, tenant.StuckQuery{NumberedBefore: time.Now().Add(time.Minute), Limit: 3})
	if !slices.Equal(all, append(claves(fx.early), claves(fx.late)...)) {
		t.Errorf("numbered before now: %v", all)
	}
	if got := stuckClaves(t, s, tenant.StuckQuery{NumberedBefore: fx.cut, OwnerID: 9, Limit: 2}); !slices.Equal(got, claves(fx.owned)) {
		t.Errorf("owner 9: %v, want %v", got, claves(fx.owned))
	}
	page, err := s.StuckDocuments(ctx, tenant.StuckQuery{NumberedBefore: fx.cut, Limit: 100})
	mustNot(t, "StuckDocuments", err)
	for i, d := range page {
		w := fx.early[i]
		if d.DocumentID != w.ID || d.Estado != w.Estado || !d.NumberedAt.Equal(w.CreatedAt) || !isUTC(d.NumberedAt) ||
			d.WaitsForCaller != w.NextAttemptAt.IsZero() || d.CompanyID != w.CompanyID {
			t.Errorf("row %+v, want document %d %s numbered %s, waiting for its company %v",
				d, w.ID, w.Estado, w.CreatedAt, w.NextAttemptAt.IsZero())
		}
		c, err := s.Company(ctx, d.CompanyID)
		mustNot(t, "Company", err)
		if d.NumeroIdentificacion != c.NumeroIdentificacion || d.RazonSocial != c.RazonSocial || d.Ambiente != c.Ambiente ||
			d.CorreoNotificaciones != c.CorreoNotificaciones {
			t.Errorf("row %+v does not carry its company %+v", d, c)
		}
	}
	for _, q := range []tenant.StuckQuery{{Limit: 1}, {NumberedBefore: fx.cut}, {NumberedBefore: fx.cut, Limit: tenant.MaxStuckScan + 1}} {
		if _, err := s.StuckDocuments(ctx, q); err == nil {
			t.Errorf("query %+v was run", q)
		}
	}
}

func testStuckUnannounced(t *testing.T, s TenantEventStore) {
	ctx := context.Background()
	fx := newStuckFixture(t, s)
	q := tenant.StuckQuery{NumberedBefore: fx.cut, Unannounced: true, Limit: 2}
	if got := stuckClaves(t, s, q); !slices.Equal(got, claves(fx.early)) {
		t.Fatalf("nothing announced yet: %v", got)
	}
	// The first two documents of their company are announced (and, under
	// another event, a third: only documentos.detenidos counts).
	first := fx.early[0]
	_, err := s.RecordTenantEvent(ctx, testEvent(first.CompanyID, tenant.EventDocumentsStuck, nil, fx.early[0].Clave, fx.early[2].Clave))
	mustNot(t, "RecordTenantEvent", err)
	_, err = s.RecordTenantEvent(ctx, testEvent(first.CompanyID, tenant.EventCertificateExpired, nil, fx.early[4].Clave))
	mustNot(t, "RecordTenantEvent", err)
	var want []string
	for i, d := range fx.early {
		if i != 0 && i != 2 {
			want = append(want, d.Clave)
		}
	}
	if got := stuckClaves(t, s, q); !slices.Equal(got, want) {
		t.Errorf("after the announcement:\n%v\nwant\n%v", got, want)
	}
	// The listing for operators names them all still.
	q.Unannounced = false
	if got := stuckClaves(t, s, q); !slices.Equal(got, claves(fx.early)) {
		t.Errorf("operators' list: %v", got)
	}
}
