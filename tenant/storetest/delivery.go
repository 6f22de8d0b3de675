package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"facturad/tenant"
)

// DeliveryStore is what the delivery suite needs: documents and received
// documents whose saves write the outbox, webhooks and e-mails. Both
// adapters are all of it.
type DeliveryStore interface {
	ReceivedStore
	tenant.WebhookStore
	tenant.EmailStore
}

// RunDelivery checks the outbox written by SaveDocument and SaveReceived
// and every behaviour of tenant.WebhookStore and tenant.EmailStore as
// subtests. open must return a fresh, empty, migrated store for each call.
func RunDelivery(t *testing.T, open func(t *testing.T) DeliveryStore) {
	contract[DeliveryStore]{
		{"ok/webhooks create, list, read, delete", testWebhookCRUD},
		{"error/creates at once never pass a company's webhook limit", testWebhookLimit},
		{"ok/a save with an event writes one delivery per webhook that asked for it", testOutboxFanOut},
		{"ok/a save without an event or with no webhook writes nothing", testOutboxNothing},
		{"error/a stale save writes no event", testOutboxStaleSave},
		{"ok/received documents write their events too", testOutboxReceived},
		{"ok/an accepted document's e-mail is written, claimed and recorded", testOutboxEmail},
		{"ok/a document's failed e-mails are re-queued, its sent and pending ones left alone", testRequeueEmails},
		{"ok/failed e-mails are re-queued in bulk, since a time and of one company or all", testRequeueFailedEmails},
		{"ok/endpoints are leased to one holder, renewed and released to the back", testEndpointLeases},
		{"ok/attempts are recorded: retried, delivered, failed", testDeliveryAttempts},
		{"ok/the delivery log pages newest first", testDeliveryLog},
		{"ok/settled deliveries and e-mails past the retention are deleted, oldest first, in batches", testDeliveryPurge},
	}.run(t, open)
}

// RunDeliveryReplicas claims endpoints and e-mails from two stores on one
// database at once: no endpoint or e-mail is held by both.
func RunDeliveryReplicas(t *testing.T, open func(t *testing.T) (DeliveryStore, DeliveryStore)) {
	a, b := open(t)
	ctx := context.Background()
	f := newDocFixture(t, a)
	const hooks = 24
	for i := range hooks {
		newWebhook(t, a, f.Company.ID, fmt.Sprintf("https://hooks.example/%d", i), "documento.aceptado")
	}
	for i := range 9 {
		savedEvent(t, a, f.Branch, fmt.Sprintf("rep-%d", i), tenant.StateAccepted, []string{"b@example.com"})
	}
	now := time.Now().Add(time.Second)
	var (
		mu     sync.Mutex
		held   = map[int64]string{}
		mailed = map[int64]int{}
		wg     sync.WaitGroup
	)
	for w := range 8 {
		s := []DeliveryStore{a, b}[w%2]
		holder := fmt.Sprintf("replica-%d", w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				eps, err := s.ClaimEndpoints(ctx, holder, now, now.Add(time.Minute), 3)
				if err != nil {
					t.Errorf("ClaimEndpoints: %v", err)
					return
				}
				es, err := s.ClaimDueEmails(ctx, now, now.Add(time.Minute), 2)
				if err != nil {
					t.Errorf("ClaimDueEmails: %v", err)
					return
				}
				mu.Lock()
				for _, e := range eps {
					if other, ok := held[e.ID]; ok {
						t.Errorf("webhook %d leased by %s and %s", e.ID, other, holder)
					}
					held[e.ID] = holder
				}
				for _, e := range es {
					mailed[e.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(held) != hooks {
		t.Errorf("%d of %d webhooks leased", len(held), hooks)
	}
	if len(mailed) != 9 {
		t.Errorf("%d of 9 e-mails claimed", len(mailed))
	}
	for id, n := range mailed {
		if n != 1 {
			t.Errorf("e-mail %d claimed %d times", id, n)
		}
	}
}

func newWebhook(t *testing.T, s DeliveryStore, companyID int64, url string, eventos ...string) tenant.Webhook {
	t.Helper()
	w := tenant.Webhook{CompanyID: companyID, URL: url, Eventos: eventos, SealedSecret: []byte("sealed " + url)}
	if err := s.CreateWebhook(context.Background(), &w, 100); err != nil {
		t.Fatalf("CreateWebhook: %v", err)
	}
	return w
}

// savedEvent reserves a document and saves it in estado to with a pending
// event, returning the saved document.
func savedEvent(t *testing.T, s DeliveryStore, b tenant.Branch, idExterno string, to tenant.State, email []string) tenant.Document {
	t.Helper()
	return savedEventAt(t, s, b, idExterno, to, email, time.Now())
}

// savedEventAt is savedEvent with the event created at created.
func savedEventAt(t *testing.T, s DeliveryStore, b tenant.Branch, idExterno string, to tenant.State, email []string, created time.Time) tenant.Document {
	t.Helper()
	ctx := context.Background()
	d := minimalDocument(b, idExterno, "01", "00001")
	if err := s.ReserveDocument(ctx, &d); err != nil {
		t.Fatalf("ReserveDocument: %v", err)
	}
	d.Place(to)
	d.Clave = fmt.Sprintf("506%047d", d.ID)
	d.Event = &tenant.Event{ID: "ev-" + idExterno, Name: "documento." + tenant.EventState(to),
		Created: created.UTC().Truncate(time.Microsecond), Clave: d.Clave, Payload: []byte(`{"clave":"` + d.Clave + `"}`), Email: email}
	if err := s.SaveDocument(ctx, &d); err != nil {
		t.Fatalf("SaveDocument: %v", err)
	}
	if d.Event != nil {
		t.Fatalf("the save left its event: %+v", d.Event)
	}
	return d
}

func allDeliveries(t *testing.T, s DeliveryStore, webhookID int64) []tenant.Delivery {
	t.Helper()
	ds, err := s.Deliveries(context.Background(), webhookID, tenant.DeliveryPage{Limit: 1000})
	if err != nil {
		t.Fatalf("Deliveries: %v", err)
	}
	return ds
}

func testWebhookCRUD(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	other := newDocFixture(t, s)
	w := newWebhook(t, s, f.Company.ID, "https://a.example/hook", "documento.aceptado", "recibido.rechazado")
	if w.ID == 0 || w.CreatedAt.IsZero() || !isUTC(w.CreatedAt) {
		t.Fatalf("created %+v", w)
	}
	got, err := s.Webhook(ctx, f.Company.ID, w.ID)
	mustNot(t, "Webhook", err)
	same(t, "webhook", w, got)
	_, err = s.Webhook(ctx, other.Company.ID, w.ID)
	wantErr(t, "another company's webhook", err, tenant.ErrNotFound)
	list, err := s.Webhooks(ctx, f.Company.ID)
	mustNot(t, "Webhooks", err)
	if len(list) != 1 {
		t.Fatalf("listed %d webhooks", len(list))
	}
	same(t, "listed webhook", w, list[0])
	list, err = s.Webhooks(ctx, other.Company.ID)
	mustNot(t, "Webhooks", err)
	if list == nil || len(list) != 0 {
		t.Fatalf("other company's webhooks: %#v", list)
	}
	bad := tenant.Webhook{CompanyID: 999999, URL: "https://x.example", Eventos: []string{"documento.error"}, SealedSecret: []byte("s")}
	wantErr(t, "webhook of a missing company", s.CreateWebhook(ctx, &bad, 10), tenant.ErrNotFound)

	savedEvent(t, s, f.Branch, "crud-1", tenant.StateAccepted, nil)
	if n := len(allDeliveries(t, s, w.ID)); n != 1 {
		t.Fatalf("%d deliveries before delete", n)
	}
	wantErr(t, "delete through another company", s.DeleteWebhook(ctx, other.Company.ID, w.ID), tenant.ErrNotFound)
	mustNot(t, "DeleteWebhook", s.DeleteWebhook(ctx, f.Company.ID, w.ID))
	wantErr(t, "delete again", s.DeleteWebhook(ctx, f.Company.ID, w.ID), tenant.ErrNotFound)
	if n := len(allDeliveries(t, s, w.ID)); n != 0 {
		t.Fatalf("%d deliveries left after delete", n)
	}
	n, _, err := s.DeliveryBacklog(ctx)
	mustNot(t, "DeliveryBacklog", err)
	if n != 0 {
		t.Fatalf("backlog %d after delete", n)
	}
}

// testWebhookLimit creates 20 webhooks of one company at once, on a store
// where it has 4 already and the limit is 10: exactly 6 are created, the
// others are ErrWebhookLimit, and another company's are not counted.
func testWebhookLimit(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	other := newDocFixture(t, s)
	const limit = 10
	for i := range 4 {
		w := tenant.Webhook{CompanyID: f.Company.ID, URL: fmt.Sprintf("https://before.example/%d", i), Eventos: []string{"documento.aceptado"}, SealedSecret: []byte("s")}
		mustNot(t, "CreateWebhook", s.CreateWebhook(ctx, &w, limit))
	}
	for i := range 9 {
		w := tenant.Webhook{CompanyID: other.Company.ID, URL: fmt.Sprintf("https://other.example/%d", i), Eventos: []string{"documento.aceptado"}, SealedSecret: []byte("s")}
		mustNot(t, "CreateWebhook", s.CreateWebhook(ctx, &w, limit))
	}
	var (
		wg               sync.WaitGroup
		mu               sync.Mutex
		created, refused int
		start            = make(chan struct{})
	)
	for i := range 20 {
		wg.Go(func() {
			<-start
			w := tenant.Webhook{CompanyID: f.Company.ID, URL: fmt.Sprintf("https://race.example/%d", i), Eventos: []string{"documento.aceptado"}, SealedSecret: []byte("s")}
			err := s.CreateWebhook(ctx, &w, limit)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case errors.Is(err, tenant.ErrWebhookLimit):
				refused++
			default:
				t.Errorf("CreateWebhook: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	list, err := s.Webhooks(ctx, f.Company.ID)
	mustNot(t, "Webhooks", err)
	if len(list) != limit || created != limit-4 || refused != 20-(limit-4) {
		t.Fatalf("%d webhooks after 20 creates at once (%d created, %d refused), want %d", len(list), created, refused, limit)
	}
	w := tenant.Webhook{CompanyID: f.Company.ID, URL: "https://late.example/", Eventos: []string{"documento.aceptado"}, SealedSecret: []byte("s")}
	wantErr(t, "a create past the limit", s.CreateWebhook(ctx, &w, limit), tenant.ErrWebhookLimit)
	mustNot(t, "DeleteWebhook", s.DeleteWebhook(ctx, f.Company.ID, list[0].ID))
	mustNot(t, "a create after a delete", s.CreateWebhook(ctx, &w, limit))
	w = tenant.Webhook{CompanyID: other.Company.ID, URL: "https://other.example/last", Eventos: []string{"documento.aceptado"}, SealedSecret: []byte("s")}
	mustNot(t, "another company's tenth", s.CreateWebhook(ctx, &w, limit))
}

func testOutboxFanOut(t *testing.T, s DeliveryStore) {
	f := newDocFixture(t, s)
	other := newDocFixture(t, s)
	a := newWebhook(t, s, f.Company.ID, "https://a.example/hook", "documento.aceptado", "documento.rechazado")
	b := newWebhook(t, s, f.Company.ID, "https://b.example/hook", "documento.aceptado")
	c := newWebhook(t, s, f.Company.ID, "https://c.example/hook", "documento.enviado")
	o := newWebhook(t, s, other.Company.ID, "https://o.example/hook", "documento.aceptado")

	d := savedEvent(t, s, f.Branch, "fan-1", tenant.StateAccepted, nil)
	for _, w := range []tenant.Webhook{a, b} {
		ds := allDeliveries(t, s, w.ID)
		if len(ds) != 1 {
			t.Fatalf("webhook %s: %d deliveries", w.URL, len(ds))
		}
		got := ds[0]
		if got.EventID != "ev-fan-1" || got.Evento != "documento.aceptado" || got.Clave != d.Clave ||
			got.CompanyID != f.Company.ID || got.WebhookID != w.ID || string(got.Payload) != `{"clave":"`+d.Clave+`"}` ||
			got.State() != tenant.DeliveryPending || got.Attempts != 0 || !got.NextAttemptAt.Equal(got.Created) || !isUTC(got.Created) {
			t.Fatalf("delivery %+v", got)
		}
	}
	for _, w := range []tenant.Webhook{c, o} {
		if n := len(allDeliveries(t, s, w.ID)); n != 0 {
			t.Fatalf("webhook %s got %d deliveries of an event it did not ask for", w.URL, n)
		}
	}
	n, oldest, err := s.DeliveryBacklog(context.Background())
	mustNot(t, "DeliveryBacklog", err)
	if n != 2 || oldest.IsZero() {
		t.Fatalf("backlog %d, oldest %v", n, oldest)
	}
}

func testOutboxNothing(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	// No webhook: a save carrying an event works, with nowhere to write it.
	savedEvent(t, s, f.Branch, "none-1", tenant.StateAccepted, nil)
	w := newWebhook(t, s, f.Company.ID, "https://a.example/hook", "documento.aceptado")
	// An event that is not pending (no Name) writes nothing.
	d := minimalDocument(f.Branch, "none-2", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	d.Place(tenant.StateAccepted)
	d.Event = &tenant.Event{}
	mustNot(t, "SaveDocument", s.SaveDocument(ctx, &d))
	if d.Event != nil {
		t.Fatal("the save left its event")
	}
	if n := len(allDeliveries(t, s, w.ID)); n != 0 {
		t.Fatalf("%d deliveries without a pending event", n)
	}
}

func testOutboxStaleSave(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	w := newWebhook(t, s, f.Company.ID, "https://a.example/hook", "documento.aceptado", "documento.enviado")
	d := minimalDocument(f.Branch, "stale-1", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	stale := d
	d.Place(tenant.StateSent)
	mustNot(t, "SaveDocument", s.SaveDocument(ctx, &d))
	stale.Place(tenant.StateAccepted)
	stale.Event = &tenant.Event{ID: "ev-stale", Name: "documento.aceptado", Created: time.Now(), Clave: "x",
		Payload: []byte("{}"), Email: []string{"x@example.com"}}
	wantErr(t, "stale save", s.SaveDocument(ctx, &stale), tenant.ErrConflict)
	if stale.Event == nil {
		t.Fatal("a failed save cleared its event")
	}
	if n := len(allDeliveries(t, s, w.ID)); n != 0 {
		t.Fatalf("a refused save wrote %d deliveries", n)
	}
	es, err := s.DocumentEmails(ctx, d.ID)
	mustNot(t, "DocumentEmails", err)
	if len(es) != 0 {
		t.Fatalf("a refused save wrote %d e-mails", len(es))
	}
}

func testOutboxReceived(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	w := newWebhook(t, s, f.Company.ID, "https://a.example/hook", "recibido.aceptado")
	r := receivedDocument(f.Branch, "rec-ev", receivedClave, "05")
	mustNot(t, "ReserveReceived", s.ReserveReceived(ctx, &r))
	r.Place(tenant.StateAccepted)
	r.Event = &tenant.Event{ID: "ev-rec", Name: "recibido.aceptado", Created: time.Now(), Clave: r.Clave,
		Payload: []byte(`{"mensaje":"1"}`), Email: []string{"ignored@example.com"}}
	mustNot(t, "SaveReceived", s.SaveReceived(ctx, &r))
	if r.Event != nil {
		t.Fatal("the save left its event")
	}
	ds := allDeliveries(t, s, w.ID)
	if len(ds) != 1 || ds[0].Evento != "recibido.aceptado" || ds[0].Clave != receivedClave || string(ds[0].Payload) != `{"mensaje":"1"}` {
		t.Fatalf("deliveries %+v", ds)
	}
	// A stale save of the message (read in a phase it has left) writes
	// nothing.
	stale := r
	stale.From = tenant.PhaseSubmitted
	stale.Event = &tenant.Event{ID: "ev-rec-2", Name: "recibido.aceptado", Created: time.Now(), Payload: []byte("{}")}
	wantErr(t, "stale SaveReceived", s.SaveReceived(ctx, &stale), tenant.ErrConflict)
	if n := len(allDeliveries(t, s, w.ID)); n != 1 {
		t.Fatalf("a refused save of a message wrote a delivery (%d)", n)
	}
}

func testOutboxEmail(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := savedEvent(t, s, f.Branch, "mail-1", tenant.StateAccepted, []string{"a@example.com", "b@example.com"})
	savedEvent(t, s, f.Branch, "mail-2", tenant.StateAccepted, nil)
	es, err := s.DocumentEmails(ctx, d.ID)
	mustNot(t, "DocumentEmails", err)
	if len(es) != 1 {
		t.Fatalf("%d e-mails", len(es))
	}
	e := es[0]
	if e.DocumentID != d.ID || e.CompanyID != f.Company.ID || e.Clave != d.Clave || !slices.Equal(e.Recipients, []string{"a@example.com", "b@example.com"}) ||
		e.State() != tenant.DeliveryPending || len(e.Rejected) != 0 || e.NextAttemptAt.IsZero() {
		t.Fatalf("e-mail %+v", e)
	}
	n, _, err := s.EmailBacklog(ctx)
	mustNot(t, "EmailBacklog", err)
	if n != 1 {
		t.Fatalf("e-mail backlog %d", n)
	}
	now := time.Now().Add(time.Second)
	claimed, err := s.ClaimDueEmails(ctx, now, now.Add(time.Minute), 10)
	mustNot(t, "ClaimDueEmails", err)
	if len(claimed) != 1 || claimed[0].ID != e.ID {
		t.Fatalf("claimed %+v", claimed)
	}
	again, err := s.ClaimDueEmails(ctx, now, now.Add(time.Minute), 10)
	mustNot(t, "ClaimDueEmails", err)
	if len(again) != 0 {
		t.Fatalf("a leased e-mail was claimed again: %+v", again)
	}
	// A retry, then sent with one address refused for good.
	mustNot(t, "RecordEmail", s.RecordEmail(ctx, e.ID, tenant.EmailResult{At: now, Error: "421 try later", Next: now.Add(time.Minute)}))
	rej := []tenant.EmailRejection{{Address: "b@example.com", Code: 550, Message: "5.1.1 no such user"}}
	mustNot(t, "RecordEmail", s.RecordEmail(ctx, e.ID, tenant.EmailResult{At: now.Add(time.Minute), Rejected: rej}))
	es, err = s.DocumentEmails(ctx, d.ID)
	mustNot(t, "DocumentEmails", err)
	e = es[0]
	if e.State() != tenant.DeliveryDelivered || e.Attempts != 2 || !e.NextAttemptAt.IsZero() || e.LastError != "" {
		t.Fatalf("after sending: %+v", e)
	}
	if !reflect.DeepEqual(rej, e.Rejected) {
		t.Fatalf("rejections %+v, want %+v", e.Rejected, rej)
	}
	n, oldest, err := s.EmailBacklog(ctx)
	mustNot(t, "EmailBacklog", err)
	if n != 0 || !oldest.IsZero() {
		t.Fatalf("e-mail backlog %d %v after sending", n, oldest)
	}
	// A permanent failure.
	d3 := savedEvent(t, s, f.Branch, "mail-3", tenant.StateAccepted, []string{"c@example.com"})
	es, _ = s.DocumentEmails(ctx, d3.ID)
	mustNot(t, "RecordEmail", s.RecordEmail(ctx, es[0].ID, tenant.EmailResult{At: now, Error: "554 refused",
		Rejected: []tenant.EmailRejection{{Address: "c@example.com", Code: 554, Message: "refused"}}}))
	es, _ = s.DocumentEmails(ctx, d3.ID)
	if es[0].State() != tenant.DeliveryFailed || es[0].LastError != "554 refused" || len(es[0].Rejected) != 1 {
		t.Fatalf("failed e-mail %+v", es[0])
	}
}

// testRequeueEmails: RequeueEmails makes a document's failed e-mail
// pending and due again, keeping its attempts and last error; another
// document's failed e-mail, and sent ones, stay as they are.
func testRequeueEmails(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := savedEvent(t, s, f.Branch, "requeue-1", tenant.StateAccepted, []string{"a@example.com"})
	other := savedEvent(t, s, f.Branch, "requeue-2", tenant.StateAccepted, []string{"b@example.com"})
	sent := savedEvent(t, s, f.Branch, "requeue-3", tenant.StateAccepted, []string{"c@example.com"})
	now := time.Now().UTC().Truncate(time.Microsecond)
	email := func(d tenant.Document) tenant.EmailDelivery { t.Helper(); return docEmail(t, s, d.ID) }
	for _, x := range []tenant.Document{d, other} {
		mustNot(t, "RecordEmail", s.RecordEmail(ctx, email(x).ID, tenant.EmailResult{At: now, Error: "smtp auth: 535 bad credentials"}))
	}
	mustNot(t, "RecordEmail", s.RecordEmail(ctx, email(sent).ID, tenant.EmailResult{At: now}))

	at := now.Add(time.Second)
	n, err := s.RequeueEmails(ctx, d.ID, at)
	mustNot(t, "RequeueEmails", err)
	e := email(d)
	if n != 1 || e.State() != tenant.DeliveryPending || !e.NextAttemptAt.Equal(at) || !e.FailedAt.IsZero() ||
		e.Attempts != 1 || e.LastError != "smtp auth: 535 bad credentials" {
		t.Fatalf("re-queued %d: %+v", n, e)
	}
	if e := email(other); e.State() != tenant.DeliveryFailed {
		t.Fatalf("another document's e-mail: %+v", e)
	}
	claimed, err := s.ClaimDueEmails(ctx, at, at.Add(time.Minute), 10)
	mustNot(t, "ClaimDueEmails", err)
	if len(claimed) != 1 || claimed[0].ID != e.ID {
		t.Fatalf("claimed %+v, want the re-queued e-mail", claimed)
	}
	// Pending (claimed) and sent e-mails are not failed: nothing to do.
	for _, x := range []tenant.Document{d, sent} {
		n, err := s.RequeueEmails(ctx, x.ID, at)
		mustNot(t, "RequeueEmails", err)
		if n != 0 {
			t.Fatalf("re-queued %d e-mails of %s, want none", n, x.IDExterno)
		}
	}
	if e := email(sent); e.State() != tenant.DeliveryDelivered || !e.NextAttemptAt.IsZero() {
		t.Fatalf("a sent e-mail: %+v", e)
	}
}

// testRequeueFailedEmails: RequeueFailedEmails re-queues the failed
// e-mails created since the time given, of the company given or of all,
// and leaves older failed, sent and pending e-mails as they are.
func testRequeueFailedEmails(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	fa, fb := newDocFixture(t, s), newDocFixture(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	saved := func(f docFixture, id string, created time.Time) tenant.EmailDelivery {
		t.Helper()
		d := savedEventAt(t, s, f.Branch, id, tenant.StateAccepted, []string{id + "@example.com"}, created)
		return docEmail(t, s, d.ID)
	}
	old := saved(fa, "bulk-old", now.Add(-3*time.Hour))
	a := saved(fa, "bulk-a", now.Add(-time.Hour))
	b := saved(fb, "bulk-b", now.Add(-time.Hour))
	sent := saved(fa, "bulk-sent", now.Add(-time.Hour))
	pending := saved(fa, "bulk-pending", now.Add(-time.Hour))
	for _, e := range []tenant.EmailDelivery{old, a, b} {
		mustNot(t, "RecordEmail", s.RecordEmail(ctx, e.ID, tenant.EmailResult{At: now, Error: "smtp data: 554 5.7.1 refused"}))
	}
	mustNot(t, "RecordEmail", s.RecordEmail(ctx, sent.ID, tenant.EmailResult{At: now}))

	state := func(e tenant.EmailDelivery) tenant.EmailDelivery { t.Helper(); return docEmail(t, s, e.DocumentID) }
	at := now.Add(time.Second)
	steps := []struct {
		name    string
		since   time.Time
		company int64
		want    []tenant.EmailDelivery // re-queued by this step
	}{
		{"one company since two hours ago", now.Add(-2 * time.Hour), fa.Company.ID, []tenant.EmailDelivery{a}},
		{"every company since two hours ago", now.Add(-2 * time.Hour), 0, []tenant.EmailDelivery{b}},
		{"a company with none failed", now.Add(-4 * time.Hour), fb.Company.ID, nil},
		{"a company id past 32 bits, of no company", now.Add(-4 * time.Hour), 3_000_000_000, nil},
		{"every company since four hours ago", now.Add(-4 * time.Hour), 0, []tenant.EmailDelivery{old}},
		{"again: nothing failed is left", now.Add(-4 * time.Hour), 0, nil},
	}
	for _, step := range steps {
		n, err := s.RequeueFailedEmails(ctx, step.since, step.company, at)
		mustNot(t, "RequeueFailedEmails "+step.name, err)
		if n != len(step.want) {
			t.Fatalf("%s: re-queued %d, want %d", step.name, n, len(step.want))
		}
		for _, e := range step.want {
			if e := state(e); e.State() != tenant.DeliveryPending || !e.NextAttemptAt.Equal(at) || !e.FailedAt.IsZero() || e.Attempts != 1 {
				t.Fatalf("%s: %+v, want pending at %v with its attempt kept", step.name, e, at)
			}
		}
	}
	if e := state(sent); e.State() != tenant.DeliveryDelivered {
		t.Errorf("a sent e-mail: %+v", e)
	}
	if e := state(pending); e.State() != tenant.DeliveryPending || !e.NextAttemptAt.Equal(pending.NextAttemptAt) {
		t.Errorf("a pending e-mail was moved: %+v, was due %v", e, pending.NextAttemptAt)
	}
}

func testEndpointLeases(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	a := newWebhook(t, s, f.Company.ID, "https://a.example/hook", "documento.aceptado")
	b := newWebhook(t, s, f.Company.ID, "https://b.example/hook", "documento.aceptado")
	newWebhook(t, s, f.Company.ID, "https://idle.example/hook", "documento.error")
	savedEvent(t, s, f.Branch, "lease-1", tenant.StateAccepted, nil)
	now := time.Now().Add(time.Second)
	got, err := s.ClaimEndpoints(ctx, "r1", now, now.Add(time.Minute), 10)
	mustNot(t, "ClaimEndpoints", err)
	ids := []int64{}
	for _, e := range got {
		ids = append(ids, e.ID)
		if e.URL == "" || len(e.SealedSecret) == 0 || len(e.Eventos) == 0 {
			t.Fatalf("endpoint without its webhook: %+v", e)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []int64{a.ID, b.ID}) {
		t.Fatalf("claimed %v, want %v and %v (the idle one has nothing due)", ids, a.ID, b.ID)
	}
	again, err := s.ClaimEndpoints(ctx, "r2", now, now.Add(time.Minute), 10)
	mustNot(t, "ClaimEndpoints", err)
	if len(again) != 0 {
		t.Fatalf("leased endpoints claimed again: %+v", again)
	}
	ok, err := s.RenewEndpoint(ctx, "r2", a.ID, now.Add(2*time.Minute))
	mustNot(t, "RenewEndpoint", err)
	if ok {
		t.Fatal("another holder renewed the lease")
	}
	ok, err = s.RenewEndpoint(ctx, "r1", a.ID, now.Add(2*time.Minute))
	mustNot(t, "RenewEndpoint", err)
	if !ok {
		t.Fatal("the holder could not renew")
	}
	due, err := s.DueDeliveries(ctx, a.ID, now, 10)
	mustNot(t, "DueDeliveries", err)
	if len(due) != 1 || due[0].WebhookID != a.ID {
		t.Fatalf("due %+v", due)
	}
	// Released endpoints go to the back of the line: b was released
	// before a, so a claim of one takes b.
	mustNot(t, "ReleaseEndpoint", s.ReleaseEndpoint(ctx, "r1", b.ID, now))
	mustNot(t, "ReleaseEndpoint", s.ReleaseEndpoint(ctx, "r1", a.ID, now.Add(time.Millisecond)))
	later := now.Add(time.Second)
	one, err := s.ClaimEndpoints(ctx, "r2", later, later.Add(time.Minute), 1)
	mustNot(t, "ClaimEndpoints", err)
	if len(one) != 1 || one[0].ID != b.ID {
		t.Fatalf("claimed %+v, want the least recently released (%d)", one, b.ID)
	}
	// An expired lease is taken over.
	expired := later.Add(5 * time.Minute)
	over, err := s.ClaimEndpoints(ctx, "r3", expired, expired.Add(time.Minute), 10)
	mustNot(t, "ClaimEndpoints", err)
	if len(over) != 2 {
		t.Fatalf("expired leases not taken over: %+v", over)
	}
	ok, err = s.RenewEndpoint(ctx, "r2", b.ID, expired.Add(time.Hour))
	mustNot(t, "RenewEndpoint", err)
	if ok {
		t.Fatal("the old holder renewed a lease taken over")
	}
	if _, err := s.ClaimEndpoints(ctx, "r1", now, now, 1); err == nil {
		t.Fatal("a lease ending now was accepted")
	}
}

func testDeliveryAttempts(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	w := newWebhook(t, s, f.Company.ID, "https://a.example/hook", "documento.aceptado")
	savedEvent(t, s, f.Branch, "att-1", tenant.StateAccepted, nil)
	savedEvent(t, s, f.Branch, "att-2", tenant.StateAccepted, nil)
	ds := allDeliveries(t, s, w.ID)
	if len(ds) != 2 {
		t.Fatalf("%d deliveries", len(ds))
	}
	now := time.Now().Add(time.Second).UTC().Truncate(time.Microsecond)
	first, second := ds[1], ds[0] // newest first
	mustNot(t, "RecordAttempt", s.RecordAttempt(ctx, first.ID, tenant.AttemptResult{At: now, Status: 500, Error: "HTTP 500", Next: now.Add(time.Hour)}))
	due, err := s.DueDeliveries(ctx, w.ID, now, 10)
	mustNot(t, "DueDeliveries", err)
	if len(due) != 1 || due[0].ID != second.ID {
		t.Fatalf("due after a retry was scheduled: %+v", due)
	}
	mustNot(t, "RecordAttempt", s.RecordAttempt(ctx, first.ID, tenant.AttemptResult{At: now.Add(time.Hour), Status: 204}))
	mustNot(t, "RecordAttempt", s.RecordAttempt(ctx, second.ID, tenant.AttemptResult{At: now, Error: "connection refused"}))
	// A delivery already settled is not changed by a late attempt.
	mustNot(t, "RecordAttempt", s.RecordAttempt(ctx, second.ID, tenant.AttemptResult{At: now.Add(time.Minute), Status: 200}))
	ds = allDeliveries(t, s, w.ID)
	got1, got2 := ds[1], ds[0]
	if got1.State() != tenant.DeliveryDelivered || got1.Attempts != 2 || got1.LastStatus != 204 || got1.LastError != "" ||
		!got1.DeliveredAt.Equal(now.Add(time.Hour)) || !got1.NextAttemptAt.IsZero() {
		t.Fatalf("delivered: %+v", got1)
	}
	if got2.State() != tenant.DeliveryFailed || got2.Attempts != 1 || got2.LastStatus != 0 || got2.LastError != "connection refused" ||
		!got2.FailedAt.Equal(now) || !got2.NextAttemptAt.IsZero() {
		t.Fatalf("failed: %+v", got2)
	}
	n, _, err := s.DeliveryBacklog(ctx)
	mustNot(t, "DeliveryBacklog", err)
	if n != 0 {
		t.Fatalf("backlog %d", n)
	}
}

// testDeliveryPurge: settled webhook deliveries and e-mails created
// before the cut are deleted, the oldest first and at most limit of each
// per call; pending ones, however old, and newer ones stay.
func testDeliveryPurge(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	w := newWebhook(t, s, f.Company.ID, "https://a.example/hook", "documento.aceptado")
	now := time.Now().UTC().Truncate(time.Microsecond)
	cut := now.Add(-30 * 24 * time.Hour)
	to := []string{"b@example.com"}
	// Each document makes one delivery and one e-mail.
	docs := map[string]tenant.Document{
		"delivered-oldest": savedEventAt(t, s, f.Branch, "purge-1", tenant.StateAccepted, to, cut.Add(-3*time.Hour)),
		"failed-old":       savedEventAt(t, s, f.Branch, "purge-2", tenant.StateAccepted, to, cut.Add(-2*time.Hour)),
		"pending-old":      savedEventAt(t, s, f.Branch, "purge-3", tenant.StateAccepted, to, cut.Add(-4*time.Hour)),
		"delivered-recent": savedEventAt(t, s, f.Branch, "purge-4", tenant.StateAccepted, to, cut.Add(time.Hour)),
	}
	hooks := map[string]tenant.Delivery{}
	for _, dl := range allDeliveries(t, s, w.ID) {
		for name, d := range docs {
			if dl.Clave == d.Clave {
				hooks[name] = dl
			}
		}
	}
	if len(hooks) != len(docs) {
		t.Fatalf("deliveries %v, want one for each of %d documents", hooks, len(docs))
	}
	mails := map[string]tenant.EmailDelivery{}
	for name, d := range docs {
		mails[name] = docEmail(t, s, d.ID)
	}
	for _, name := range []string{"delivered-oldest", "delivered-recent"} {
		mustNot(t, "RecordAttempt", s.RecordAttempt(ctx, hooks[name].ID, tenant.AttemptResult{At: now, Status: 204}))
		mustNot(t, "RecordEmail", s.RecordEmail(ctx, mails[name].ID, tenant.EmailResult{At: now}))
	}
	mustNot(t, "RecordAttempt", s.RecordAttempt(ctx, hooks["failed-old"].ID, tenant.AttemptResult{At: now, Error: "HTTP 500"}))
	mustNot(t, "RecordEmail", s.RecordEmail(ctx, mails["failed-old"].ID, tenant.EmailResult{At: now, Error: "smtp data: 554 refused"}))
	mustNot(t, "RecordAttempt", s.RecordAttempt(ctx, hooks["pending-old"].ID, tenant.AttemptResult{At: now, Error: "HTTP 500", Next: now.Add(time.Hour)}))
	mustNot(t, "RecordEmail", s.RecordEmail(ctx, mails["pending-old"].ID, tenant.EmailResult{At: now, Error: "smtp rcpt: 451 later", Next: now.Add(time.Hour)}))

	left := func() (hookNames, mailNames []string) {
		t.Helper()
		for _, dl := range allDeliveries(t, s, w.ID) {
			for name, h := range hooks {
				if h.ID == dl.ID {
					hookNames = append(hookNames, name)
				}
			}
		}
		for name, d := range docs {
			es, err := s.DocumentEmails(ctx, d.ID)
			mustNot(t, "DocumentEmails", err)
			if len(es) == 1 {
				mailNames = append(mailNames, name)
			}
		}
		slices.Sort(hookNames)
		slices.Sort(mailNames)
		return hookNames, mailNames
	}
	purge := func(limit, wantHooks, wantMails int, want ...string) {
		t.Helper()
		h, m, err := s.PurgeDeliveries(ctx, cut, limit)
		mustNot(t, "PurgeDeliveries", err)
		hn, mn := left()
		if h != wantHooks || m != wantMails || !slices.Equal(hn, want) || !slices.Equal(mn, want) {
			t.Fatalf("purge of %d: deleted %d deliveries and %d e-mails, left %v and %v; want %d, %d and %v",
				limit, h, m, hn, mn, wantHooks, wantMails, want)
		}
	}
	// The oldest settled first, one of each; then the rest; then nothing.
	purge(1, 1, 1, "delivered-recent", "failed-old", "pending-old")
	purge(100, 1, 1, "delivered-recent", "pending-old")
	purge(100, 0, 0, "delivered-recent", "pending-old")
	n, _, err := s.DeliveryBacklog(ctx)
	mustNot(t, "DeliveryBacklog", err)
	if n != 1 {
		t.Fatalf("webhook backlog %d after the purges, want the pending one", n)
	}
}

func testDeliveryLog(t *testing.T, s DeliveryStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	w := newWebhook(t, s, f.Company.ID, "https://a.example/hook", "documento.aceptado")
	for i := range 7 {
		savedEvent(t, s, f.Branch, fmt.Sprintf("log-%d", i), tenant.StateAccepted, nil)
	}
	var seen []string
	before := int64(0)
	for {
		page, err := s.Deliveries(ctx, w.ID, tenant.DeliveryPage{Before: before, Limit: 3})
		mustNot(t, "Deliveries", err)
		for _, d := range page {
			seen = append(seen, d.EventID)
			before = d.ID
		}
		if len(page) < 3 {
			break
		}
	}
	want := []string{"ev-log-6", "ev-log-5", "ev-log-4", "ev-log-3", "ev-log-2", "ev-log-1", "ev-log-0"}
	if !slices.Equal(seen, want) {
		t.Fatalf("log %v, want %v", seen, want)
	}
	if _, err := s.Deliveries(ctx, w.ID+1000, tenant.DeliveryPage{Limit: 3}); err != nil && !errors.Is(err, tenant.ErrNotFound) {
		t.Fatalf("log of a missing webhook: %v", err)
	}
}

// BenchOutbox measures what the outbox adds to the save that changes a
// document's estado: the same save (a 2 KB signed XML, estado flipping
// between 04 and 01) without an event (the reference), with an event of a
// company that has no webhook (an index probe that writes nothing), and
// with one webhook that asked for it (a delivery row with a 600-byte
// payload). Compare the three within one run.
func BenchOutbox(b *testing.B, open func(testing.TB) DeliveryStore) {
	payload := []byte(`{"id_externo":"bench","consecutivo":"00100001010000000001","numero_documento":"0000000001","clave":"50621112600310112345600100001010000000001199999999","estado":"01","estado_humanizado":"Accepted","xml":null,"mensaje_api":"","mensaje_api_key":"","xml_respuesta":null,"codigo_mensaje_hacienda":"1","mensaje_hacienda":"Aceptado","detalle_mensaje_hacienda":["Este comprobante fue aceptado en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios"]}`)
	xml := make([]byte, 2048)
	run := func(b *testing.B, event bool, webhooks int) {
		s := open(b)
		f := newDocFixture(b, s)
		for i := range webhooks {
			w := tenant.Webhook{CompanyID: f.Company.ID, URL: fmt.Sprintf("https://hooks.example/%d", i),
				Eventos: []string{"documento.no_enviado", "documento.enviado"}, SealedSecret: []byte("sealed")}
			if err := s.CreateWebhook(context.Background(), &w, 100); err != nil {
				b.Fatal(err)
			}
		}
		// Another company's webhooks are in the table too.
		other := newDocFixture(b, s)
		for i := range 5 {
			w := tenant.Webhook{CompanyID: other.Company.ID, URL: fmt.Sprintf("https://other.example/%d", i),
				Eventos: []string{"documento.aceptado"}, SealedSecret: []byte("sealed")}
			if err := s.CreateWebhook(context.Background(), &w, 100); err != nil {
				b.Fatal(err)
			}
		}
		ctx := context.Background()
		d := minimalDocument(f.Branch, "bench-outbox", "01", "00001")
		if err := s.ReserveDocument(ctx, &d); err != nil {
			b.Fatal(err)
		}
		d.Clave = "50621112600310112345600100001010000000001199999999"
		d.SignedXML = xml
		i := 0
		b.ReportAllocs()
		defer ReportCPU(b)()
		for b.Loop() {
			// Between two phases a row may leave (a verdict is final),
			// each save a change of estado the webhooks asked for.
			d.Place(tenant.StateSent)
			if i%2 == 0 {
				d.Place(tenant.StateNotSentYet)
			}
			i++
			if event {
				d.Event = &tenant.Event{ID: fmt.Sprintf("evt_%d", i), Name: "documento." + tenant.EventState(d.Estado),
					Created: time.Now(), Clave: d.Clave, Payload: payload}
			}
			if err := s.SaveDocument(ctx, &d); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("Save/reference", func(b *testing.B) { run(b, false, 0) })
	b.Run("Save/event-no-webhook", func(b *testing.B) { run(b, true, 0) })
	b.Run("Save/event-one-webhook", func(b *testing.B) { run(b, true, 1) })
}

// FailedEmail seeds s, a migrated store, with a company whose accepted
// document's e-mail, created at created, failed for good; it returns the
// e-mail. For the tests of what an operator does with failed e-mails.
func FailedEmail(t *testing.T, s DeliveryStore, created time.Time) tenant.EmailDelivery {
	t.Helper()
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := savedEventAt(t, s, f.Branch, "failed-email", tenant.StateAccepted, []string{"cliente@example.com"}, created)
	mustNot(t, "RecordEmail", s.RecordEmail(ctx, docEmail(t, s, d.ID).ID, tenant.EmailResult{At: time.Now(), Error: "smtp data: 554 5.7.1 refused"}))
	e := docEmail(t, s, d.ID)
	if e.State() != tenant.DeliveryFailed {
		t.Fatalf("the seeded e-mail is %v, want failed", e.State())
	}
	return e
}

// docEmail is the one e-mail of document documentID.
func docEmail(t *testing.T, s DeliveryStore, documentID int64) tenant.EmailDelivery {
	t.Helper()
	es, err := s.DocumentEmails(context.Background(), documentID)
	mustNot(t, "DocumentEmails", err)
	if len(es) != 1 {
		t.Fatalf("%d e-mails of document %d, want 1", len(es), documentID)
	}
	return es[0]
}
