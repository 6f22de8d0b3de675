package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"facturad/tenant"
)

// CredentialStopStore is what the credential-stop suite needs: companies,
// documents and the tenant.CredentialStopStore under test. Both adapters
// are all of it.
type CredentialStopStore interface {
	DocumentStore
	tenant.ReceivedStore
	tenant.CredentialStopStore
}

// RunCredentialStops checks every behaviour of tenant.CredentialStopStore
// as subtests. open must return a fresh, empty, migrated store for each
// call.
func RunCredentialStops(t *testing.T, open func(t *testing.T) CredentialStopStore) {
	contract[CredentialStopStore]{
		{"ok/a stop probes one stopped document at a time, slower each time", testProbeCredentialStops},
		{"ok/a stop with nothing left to probe is forgotten", testProbeForgetsEmptyStop},
		{"ok/resume makes every stopped document of the company due, and only once", testResumeCredentialStop},
		{"ok/requeue moves on documents that wait for their company, by clave, company or all", testRequeueStopped},
		{"ok/a company's stopped messages are probed, resumed and re-queued like its documents", testCredentialStopsMessages},
	}.run(t, open)
}

var stopBase = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

// stoppedDocument stores a document of b in state st with the next attempt
// given (zero: it waits for its company) and a clave of its own.
func stoppedDocument(t *testing.T, s CredentialStopStore, b tenant.Branch, name string, st tenant.State, next time.Time) tenant.Document {
	t.Helper()
	ctx := context.Background()
	d := minimalDocument(b, name, "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	d.Clave = fmt.Sprintf("506%047d", d.ID)
	d.Consecutivo = fmt.Sprintf("%020d", d.ID)
	d.NextAttemptAt = next
	d.Place(st)
	mustNot(t, "SaveDocument", s.SaveDocument(ctx, &d))
	return d
}

// nextOf reads a document's next attempt.
func nextOf(t *testing.T, s CredentialStopStore, d tenant.Document) time.Time {
	t.Helper()
	got, err := s.DocumentByClave(context.Background(), d.Clave)
	mustNot(t, "DocumentByClave", err)
	return got.NextAttemptAt
}

func testProbeCredentialStops(t *testing.T, s CredentialStopStore) {
	ctx := context.Background()
	f, g := newDocFixture(t, s), newDocFixture(t, s)
	a1 := stoppedDocument(t, s, f.Branch, "a1", tenant.StateNotSentYet, time.Time{})
	a2 := stoppedDocument(t, s, f.Branch2, "a2", tenant.StateNotSentYet, time.Time{})
	leased := stoppedDocument(t, s, f.Branch, "leased", tenant.StateNotSentYet, stopBase.Add(time.Minute))
	b1 := stoppedDocument(t, s, g.Branch, "b1", tenant.StateNotSentYet, time.Time{})
	const base, max = 5 * time.Minute, time.Hour
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, f.Company.ID, stopBase, stopBase.Add(base), nil))
	// A second refusal keeps the first record.
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, f.Company.ID, stopBase.Add(time.Minute), stopBase.Add(time.Minute+base), nil))
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, g.Company.ID, stopBase.Add(time.Minute), stopBase.Add(time.Minute+base), nil))

	probe := func(at time.Time, want ...int64) {
		t.Helper()
		got, err := s.ProbeCredentialStops(ctx, at, base, max, 10)
		mustNot(t, "ProbeCredentialStops", err)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("probed at %s: companies %v, want %v", at.Format(time.TimeOnly), got, want)
		}
	}
	probe(stopBase.Add(base - time.Second)) // not due yet
	at := stopBase.Add(base)
	probe(at, f.Company.ID) // g's first probe is a minute later
	if got := nextOf(t, s, a1); !got.Equal(at) {
		t.Errorf("the oldest stopped document's next attempt is %v, want %v", got, at)
	}
	if got := nextOf(t, s, a2); !got.IsZero() {
		t.Errorf("a second stopped document was made due too: %v", got)
	}
	if got := nextOf(t, s, leased); !got.Equal(stopBase.Add(time.Minute)) {
		t.Errorf("a document with a next attempt was touched: %v", got)
	}
	// The next probe waits twice as long; a1 no longer waits (it has a next
	// attempt), so a2 is probed.
	probe(at.Add(2*base-time.Second), g.Company.ID)
	probe(at.Add(2*base), f.Company.ID)
	if got := nextOf(t, s, a2); !got.Equal(at.Add(2 * base)) {
		t.Errorf("the second probe made a2 due at %v, want %v", got, at.Add(2*base))
	}
	if got := nextOf(t, s, b1); got.IsZero() {
		t.Error("company g's document was not probed")
	}
	// limit bounds how many companies one call probes.
	h := newDocFixture(t, s)
	stoppedDocument(t, s, h.Branch, "h1", tenant.StateNotSentYet, time.Time{})
	stoppedDocument(t, s, h.Branch, "h2", tenant.StateNotSentYet, time.Time{})
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, h.Company.ID, stopBase, stopBase, nil))
	got, err := s.ProbeCredentialStops(ctx, stopBase.Add(24*time.Hour), base, max, 1)
	mustNot(t, "ProbeCredentialStops", err)
	if len(got) != 1 {
		t.Errorf("a probe with limit 1 took %v", got)
	}
	if got, err := s.ProbeCredentialStops(ctx, stopBase.Add(24*time.Hour), base, max, 0); err != nil || len(got) != 0 {
		t.Errorf("a probe with limit 0 took %v, %v", got, err)
	}
}

func testProbeForgetsEmptyStop(t *testing.T, s CredentialStopStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, f.Company.ID, stopBase, stopBase, nil))
	got, err := s.ProbeCredentialStops(ctx, stopBase, time.Minute, time.Hour, 10)
	mustNot(t, "ProbeCredentialStops", err)
	if len(got) != 0 {
		t.Fatalf("probed %v with no stopped document", got)
	}
	// Forgotten: a resume finds nothing to do, and a new stop starts over.
	d := stoppedDocument(t, s, f.Branch, "late", tenant.StateNotSentYet, time.Time{})
	if n, err := s.ResumeCredentialStop(ctx, f.Company.ID, stopBase); err != nil || n != 0 {
		t.Errorf("resume of a forgotten stop: %d, %v", n, err)
	}
	if got := nextOf(t, s, d); !got.IsZero() {
		t.Errorf("a resume without a stop made a document due: %v", got)
	}
}

func testResumeCredentialStop(t *testing.T, s CredentialStopStore) {
	ctx := context.Background()
	f, g := newDocFixture(t, s), newDocFixture(t, s)
	stopped := []tenant.Document{
		stoppedDocument(t, s, f.Branch, "s1", tenant.StateNotSentYet, time.Time{}),
		stoppedDocument(t, s, f.Branch2, "s2", tenant.StateNotSentYet, time.Time{}),
	}
	pending := stoppedDocument(t, s, f.Branch, "cert", tenant.StatePending, time.Time{})
	polled := stoppedDocument(t, s, f.Branch, "polled", tenant.StateSent, time.Time{})
	held := stoppedDocument(t, s, f.Branch, "held", tenant.StateNotSentYet, stopBase.Add(time.Minute))
	other := stoppedDocument(t, s, g.Branch, "other", tenant.StateNotSentYet, time.Time{})
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, f.Company.ID, stopBase, stopBase.Add(time.Hour), nil))
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, g.Company.ID, stopBase, stopBase.Add(time.Hour), nil))

	at := stopBase.Add(10 * time.Second)
	n, err := s.ResumeCredentialStop(ctx, f.Company.ID, at)
	mustNot(t, "ResumeCredentialStop", err)
	if n != len(stopped) {
		t.Errorf("resumed %d documents, want %d", n, len(stopped))
	}
	for _, d := range stopped {
		if got := nextOf(t, s, d); !got.Equal(at) {
			t.Errorf("%s: next attempt %v, want %v", d.IDExterno, got, at)
		}
	}
	for _, d := range []tenant.Document{pending, polled, other} {
		if got := nextOf(t, s, d); !got.IsZero() {
			t.Errorf("%s (estado %s) was made due: %v", d.IDExterno, d.Estado, got)
		}
	}
	if got := nextOf(t, s, held); !got.Equal(stopBase.Add(time.Minute)) {
		t.Errorf("a held document was touched: %v", got)
	}
	if n, err := s.ResumeCredentialStop(ctx, f.Company.ID, at); err != nil || n != 0 {
		t.Errorf("a second resume: %d, %v; want nothing", n, err)
	}
	// The other company is still stopped: its probe comes.
	got, err := s.ProbeCredentialStops(ctx, stopBase.Add(time.Hour), time.Minute, time.Hour, 10)
	mustNot(t, "ProbeCredentialStops", err)
	if !slices.Equal(got, []int64{g.Company.ID}) {
		t.Errorf("probed %v, want only company %d", got, g.Company.ID)
	}
}

func testRequeueStopped(t *testing.T, s CredentialStopStore) {
	ctx := context.Background()
	f, g := newDocFixture(t, s), newDocFixture(t, s)
	cred := stoppedDocument(t, s, f.Branch, "cred", tenant.StateNotSentYet, time.Time{})
	cert := stoppedDocument(t, s, f.Branch, "cert", tenant.StatePending, time.Time{})
	polled := stoppedDocument(t, s, f.Branch2, "polled", tenant.StateSent, time.Time{})
	held := stoppedDocument(t, s, f.Branch, "held", tenant.StateNotSentYet, stopBase.Add(time.Minute))
	accepted := stoppedDocument(t, s, f.Branch, "accepted", tenant.StateAccepted, time.Time{})
	gcred := stoppedDocument(t, s, g.Branch, "gcred", tenant.StateNotSentYet, time.Time{})
	gcert := stoppedDocument(t, s, g.Branch, "gcert", tenant.StatePending, time.Time{})
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, f.Company.ID, stopBase, stopBase.Add(time.Hour), nil))
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, g.Company.ID, stopBase, stopBase.Add(time.Hour), nil))

	steps := []struct {
		name string
		q    tenant.RequeueQuery
		want []tenant.Document
	}{
		{"one clave", tenant.RequeueQuery{Clave: cert.Clave}, []tenant.Document{cert}},
		{"an unknown clave", tenant.RequeueQuery{Clave: "50600000000000000000000000000000000000000000099999"}, nil},
		{"a settled document's clave", tenant.RequeueQuery{Clave: accepted.Clave}, nil},
		{"one company", tenant.RequeueQuery{CompanyID: f.Company.ID}, []tenant.Document{cred, polled}},
		{"every company", tenant.RequeueQuery{}, []tenant.Document{gcred, gcert}},
		{"again", tenant.RequeueQuery{}, nil},
	}
	for i, st := range steps {
		at := stopBase.Add(time.Duration(i+1) * time.Second)
		n, err := s.RequeueStopped(ctx, st.q, at)
		mustNot(t, "RequeueStopped", err)
		if n != len(st.want) {
			t.Errorf("%s: re-queued %d, want %d", st.name, n, len(st.want))
		}
		for _, d := range st.want {
			if got := nextOf(t, s, d); !got.Equal(at) {
				t.Errorf("%s: %s next attempt %v, want %v", st.name, d.IDExterno, got, at)
			}
		}
	}
	if got := nextOf(t, s, held); !got.Equal(stopBase.Add(time.Minute)) {
		t.Errorf("a held document was touched: %v", got)
	}
	if got := nextOf(t, s, accepted); !got.IsZero() {
		t.Errorf("a settled document was made due: %v", got)
	}
	// The companies' stops went with their documents.
	if got, err := s.ProbeCredentialStops(ctx, stopBase.Add(48*time.Hour), time.Minute, time.Hour, 10); err != nil || len(got) != 0 {
		t.Errorf("probes after a re-queue of every company: %v, %v", got, err)
	}
}

// StoppedDocument stores, for a company of its own, a document in state st
// that waits for its company (no next attempt), for the tests of the
// commands that move such documents on.
func StoppedDocument(t *testing.T, s CredentialStopStore, name string, st tenant.State) tenant.Document {
	t.Helper()
	f := newDocFixture(t, s)
	return stoppedDocument(t, s, f.Branch, name, st, time.Time{})
}

// messageSeq numbers the suppliers' claves of stoppedMessage.
var messageSeq atomic.Int64

// stoppedMessage stores a receiver's message of b in state st with the
// next attempt given (zero: it waits for its company).
func stoppedMessage(t *testing.T, s CredentialStopStore, b tenant.Branch, name string, st tenant.State, next time.Time) tenant.ReceivedDocument {
	t.Helper()
	ctx := context.Background()
	r := receivedDocument(b, name, fmt.Sprintf("50677%045d", messageSeq.Add(1)), "05")
	mustNot(t, "ReserveReceived", s.ReserveReceived(ctx, &r))
	r.NextAttemptAt = next
	r.Place(st)
	mustNot(t, "SaveReceived", s.SaveReceived(ctx, &r))
	return r
}

// messageNextOf reads a message's next attempt.
func messageNextOf(t *testing.T, s CredentialStopStore, r tenant.ReceivedDocument) time.Time {
	t.Helper()
	got, err := s.ReceivedByClave(context.Background(), r.CompanyID, r.Clave)
	mustNot(t, "ReceivedByClave", err)
	return got.NextAttemptAt
}

func testCredentialStopsMessages(t *testing.T, s CredentialStopStore) {
	ctx := context.Background()
	const base, max = 5 * time.Minute, time.Hour
	f, g := newDocFixture(t, s), newDocFixture(t, s)

	// A company whose only stopped work is a message: the probe takes it
	// rather than forget the stop.
	m1 := stoppedMessage(t, s, f.Branch, "m1", tenant.StateNotSentYet, time.Time{})
	m2 := stoppedMessage(t, s, f.Branch, "m22", tenant.StateNotSentYet, time.Time{})
	mustNot(t, "StopOnCredentials", s.StopOnCredentials(ctx, f.Company.ID, stopBase, stopBase.Add(base), nil))
	at := stopBase.Add(base)
	got, err := s.ProbeCredentialStops(ctx, at, base, max, 10)
	mustNot(t, "ProbeCredentialStops", err)
	if !slices.Equal(got, []int64{f.Company.ID}) {
		t.Fatalf("probed %v, want the company of the stopped messages", got)
	}
	if got := messageNextOf(t, s, m1); !got.Equal(at) {
		t.Errorf("the oldest stopped message's next attempt is %v, want %v", got, at)
	}
	if got := messageNextOf(t, s, m2); !got.IsZero() {
		t.Errorf("a second message was made due by one probe: %v", got)
	}

	// A login that works resumes the rest, documents and messages.
	d := stoppedDocument(t, s, f.Branch, "d1", tenant.StateNotSentYet, time.Time{})
	resumed := stopBase.Add(time.Hour)
	n, err := s.ResumeCredentialStop(ctx, f.Company.ID, resumed)
	mustNot(t, "ResumeCredentialStop", err)
	if n != 2 || !nextOf(t, s, d).Equal(resumed) || !messageNextOf(t, s, m2).Equal(resumed) {
		t.Errorf("resume made %d due (document %v, message %v), want the document and the message at %v",
			n, nextOf(t, s, d), messageNextOf(t, s, m2), resumed)
	}

	// A re-queue of a company takes its waiting messages; one of a clave
	// does not, as the clave names a document.
	gm := stoppedMessage(t, s, g.Branch, "gm", tenant.StatePending, time.Time{})
	gd := stoppedDocument(t, s, g.Branch, "gd", tenant.StateNotSentYet, time.Time{})
	settled := stoppedMessage(t, s, g.Branch, "settled", tenant.StateAccepted, time.Time{})
	requeued := stopBase.Add(2 * time.Hour)
	if n, err := s.RequeueStopped(ctx, tenant.RequeueQuery{Clave: gd.Clave}, requeued); err != nil || n != 1 {
		t.Errorf("re-queue of a clave: %d, %v, want the document alone", n, err)
	}
	if got := messageNextOf(t, s, gm); !got.IsZero() {
		t.Errorf("a re-queue of a document's clave made a message due: %v", got)
	}
	if n, err := s.RequeueStopped(ctx, tenant.RequeueQuery{CompanyID: g.Company.ID}, requeued); err != nil || n != 1 {
		t.Errorf("re-queue of the company: %d, %v, want its message", n, err)
	}
	if got := messageNextOf(t, s, gm); !got.Equal(requeued) {
		t.Errorf("the company's waiting message's next attempt is %v, want %v", got, requeued)
	}
	if got := messageNextOf(t, s, settled); !got.IsZero() {
		t.Errorf("a settled message was made due: %v", got)
	}
}
