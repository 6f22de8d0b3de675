package pipeline

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/tenant"
)

// hookSubmitter runs before once, before the first status call reaches the
// client: a test plays there another worker storing the document.
type hookSubmitter struct {
	Submitter
	before func()
	done   atomic.Bool
}

func (h *hookSubmitter) Status(ctx context.Context, cr recepcion.Credentials, key string) (recepcion.Status, error) {
	if h.done.CompareAndSwap(false, true) {
		h.before()
	}
	return h.Submitter.Status(ctx, cr, key)
}

// TestRetrierClaimsWhatItStarts checks that a round claims no more
// documents than it works on at once, so that none waits for a turn while
// its lease runs out.
func TestRetrierClaimsWhatItStarts(t *testing.T) {
	b := setup(t, setupOptions{
		sandbox:  sandbox.Options{Faults: sandbox.Faults{Outage: true}},
		pipeline: func(o *Options) { o.RetryWorkers, o.RetryBatch = 2, 32 },
	})
	var claves []string
	for i := range 5 {
		out := b.mustSend(t, request("01", "lease-"+string(rune('a'+i))))
		claves = append(claves, out.Document.Clave)
	}
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	b.clock.advance(time.Hour)
	n, err := b.p.RunDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("a round claimed %d documents with 2 workers, want 2", n)
	}
	b.runDueUntil(t, 10, func() bool {
		for _, c := range claves {
			if b.stored(t, c).Estado != tenant.StateAccepted {
				return false
			}
		}
		return true
	})
}

func TestLeaseMustCoverAnAttempt(t *testing.T) {
	b := setup(t, setupOptions{})
	tests := []struct {
		name  string
		lease time.Duration
		ok    bool
	}{
		{"error/shorter than an attempt", 30 * time.Second, false},
		{"error/exactly an attempt", 40 * time.Second, false},
		{"ok/longer than an attempt", 41 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Options{
				Store: b.store, Issuers: b.svc, Signer: b.cache, Submitter: b.sub, Logger: quiet,
				Timings: Timings{SubmitTimeout: 15 * time.Second, StoreTimeout: 10 * time.Second, Lease: tt.lease},
			})
			if (err == nil) != tt.ok {
				t.Fatalf("New with Lease %s: %v", tt.lease, err)
			}
			if err != nil && !strings.Contains(err.Error(), "Lease") {
				t.Errorf("error %q does not name Lease", err)
			}
		})
	}
}

// TestCheckRacingAWorker stores the document from "another worker" while a
// check call asks the tax authority: the check must not overwrite that
// worker's update, and must still record the tax authority's answer.
func TestCheckRacingAWorker(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			b := setup(t, setupOptions{store: k.open})
			out := b.mustSend(t, request("01", "race-check"))
			clave := out.Document.Clave
			hook := &hookSubmitter{Submitter: b.sub, before: func() {
				d := b.stored(t, clave)
				d.Attempts = 7
				d.LastError = "stored by another worker"
				if err := b.store.SaveDocument(context.Background(), &d); err != nil {
					t.Errorf("the other worker's save: %v", err)
				}
			}}
			b.p.o.Submitter = hook
			got, err := b.p.Check(context.Background(), b.branch, clave)
			if err != nil {
				t.Fatalf("check: %v", err)
			}
			if got.Failed || got.Estado != tenant.StateAccepted {
				t.Fatalf("check answered %s", describe(got))
			}
			d := b.stored(t, clave)
			if d.Estado != tenant.StateAccepted || d.CodigoMensaje != "1" || len(d.ResponseXML) == 0 {
				t.Errorf("stored estado %s codigo %q answer %d bytes: the answer was not recorded", d.Estado, d.CodigoMensaje, len(d.ResponseXML))
			}
			if d.Attempts != 7 {
				t.Errorf("stored attempts %d: the other worker's update was overwritten", d.Attempts)
			}
		})
	}
}

// TestRetrierDropsAStaleResult lets "another replica" store the document
// while the background worker works on it: the worker's result is dropped,
// the other one stands.
func TestRetrierDropsAStaleResult(t *testing.T) {
	b := setup(t, setupOptions{sandbox: sandbox.Options{Faults: sandbox.Faults{Outage: true}}})
	out := b.mustSend(t, request("01", "race-retry"))
	clave := out.Document.Clave
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	b.p.o.Submitter = &hookSubmitter{Submitter: b.sub, before: func() {
		d := b.stored(t, clave)
		d.LastError, d.NextAttemptAt = "settled by another replica", time.Time{}
		d.Place(tenant.StateError)
		if err := b.store.SaveDocument(context.Background(), &d); err != nil {
			t.Errorf("the other replica's save: %v", err)
		}
	}}
	b.round(t)
	d := b.stored(t, clave)
	if d.Estado != tenant.StateError || d.LastError != "settled by another replica" {
		t.Errorf("stored estado %s error %q: the stale result overwrote the newer one", d.Estado, d.LastError)
	}
}

// lateReceiptSubmitter refuses every submission with 400 and answers the
// status "unknown" until the first submission, then with the verdict: the
// tax authority took the document through an attempt whose answer was
// lost and refuses the resubmission as already received.
type lateReceiptSubmitter struct {
	Submitter // the real client, for the verdict
	submitted atomic.Bool
	clave     string
	verdict   recepcion.Status
}

func (s *lateReceiptSubmitter) Submit(context.Context, recepcion.Credentials, recepcion.Submission) (recepcion.Receipt, error) {
	s.submitted.Store(true)
	return recepcion.Receipt{}, apiErr(recepcion.OpSubmit, 400)
}

func (s *lateReceiptSubmitter) Status(ctx context.Context, cr recepcion.Credentials, key string) (recepcion.Status, error) {
	if !s.submitted.Load() {
		return (&stubSubmitter{}).Status(ctx, cr, key)
	}
	return s.verdict, nil
}

// TestWorkerRefusalAlreadyReceived: a resubmission refused with 400 while
// the tax authority holds the document must not end it in 03.
func TestWorkerRefusalAlreadyReceived(t *testing.T) {
	b := setup(t, setupOptions{})
	// The tax authority takes the document, but its answer is lost on the
	// way back as a refused connection would be: it is stored 05, to be
	// submitted again, and nothing asks about it first.
	b.p.o.Submitter = &lostAnswerSubmitter{Submitter: b.sub}
	out := b.mustSend(t, request("01", "late-receipt"))
	clave := out.Document.Clave
	if out.Estado != tenant.StateNotSentYet {
		t.Fatalf("send answered %s, want 05", describe(out))
	}
	// Its verdict as the tax authority has it.
	cr, err := b.p.credentials(context.Background(), b.company.ID)
	if err != nil {
		t.Fatal(err)
	}
	var verdict recepcion.Status
	for i := 0; ; i++ {
		if verdict, err = b.client.Status(context.Background(), cr, clave); err == nil && verdict.Estado.Final() {
			break
		}
		if i == 100 {
			t.Fatalf("no verdict from the tax authority: %+v %v", verdict, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.p.o.Submitter = &lateReceiptSubmitter{Submitter: b.sub, clave: clave, verdict: verdict}
	b.round(t)
	got := b.stored(t, clave)
	if got.Estado != tenant.StateAccepted || got.CodigoMensaje != "1" {
		t.Errorf("after a refused resubmission of a received document: estado %s codigo %q error %q", got.Estado, got.CodigoMensaje, got.LastError)
	}
}

// lostAnswerSubmitter hands the submission to the tax authority and then
// fails as a refused connection does: the tax authority has the document,
// the service believes it never left.
type lostAnswerSubmitter struct{ Submitter }

func (s *lostAnswerSubmitter) Submit(ctx context.Context, cr recepcion.Credentials, sub recepcion.Submission) (recepcion.Receipt, error) {
	if _, err := s.Submitter.Submit(ctx, cr, sub); err != nil {
		return recepcion.Receipt{}, err
	}
	return recepcion.Receipt{}, &recepcion.TransportError{Op: recepcion.OpSubmit, Kind: recepcion.KindRefused, Retryable: true}
}

// forgedStatusSubmitter answers the status with the real answer, then
// changes its clave or its MensajeHacienda's.
type forgedStatusSubmitter struct {
	Submitter
	change func(st *recepcion.Status)
}

func (f *forgedStatusSubmitter) Status(ctx context.Context, cr recepcion.Credentials, key string) (recepcion.Status, error) {
	st, err := f.Submitter.Status(ctx, cr, key)
	if err == nil {
		f.change(&st)
	}
	return st, err
}

// TestCheckAnswerOfAnotherDocument: a status answer whose clave, or whose
// MensajeHacienda's clave, is not the document's is unreadable: the check
// answers 05 and stores nothing.
func TestCheckAnswerOfAnotherDocument(t *testing.T) {
	other := strings.Repeat("5", 50)
	tests := []struct {
		name   string
		change func(st *recepcion.Status)
	}{
		{"error/status clave", func(st *recepcion.Status) { st.Clave = other }},
		// The answer's own bytes name another document (the status's
		// reading of them is what it read; the check reads the bytes).
		{"error/MensajeHacienda clave", func(st *recepcion.Status) {
			if st.Mensaje != nil {
				st.ResponseXML = bytes.Replace(st.ResponseXML, []byte("<Clave>"+st.Mensaje.Clave+"</Clave>"), []byte("<Clave>"+other+"</Clave>"), 1)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, setupOptions{})
			out := b.mustSend(t, request("01", "forged"))
			clave := out.Document.Clave
			before := b.stored(t, clave)
			b.p.o.Submitter = &forgedStatusSubmitter{Submitter: b.sub, change: tt.change}
			ck, err := b.p.Check(context.Background(), b.branch, clave)
			if err != nil {
				t.Fatal(err)
			}
			// The stored estado is the answer, with its own status: a 04
			// is a 200, never the failed check's 05.
			if ck.Failed || ck.Estado != before.Estado || !strings.Contains(ck.Message, "unreadable") {
				t.Fatalf("check: %s", describe(ck))
			}
			if d := b.stored(t, clave); d.Estado != before.Estado || !d.UpdatedAt.Equal(before.UpdatedAt) {
				t.Errorf("stored estado %s (was %s), updated %v (was %v)", d.Estado, before.Estado, d.UpdatedAt, before.UpdatedAt)
			}
		})
	}
}

// TestLanesPerCompany: one company's branches together are bounded, so
// that another company still gets in while the first is at its bound.
func TestLanesPerCompany(t *testing.T) {
	ctx := context.Background()
	ls := newLanes(4, 4, 100, 3)
	var releases []func()
	for _, branch := range []int64{10, 11, 12} {
		r, err := ls.acquire(ctx, 1, branch)
		if err != nil {
			t.Fatalf("company 1 branch %d: %v", branch, err)
		}
		releases = append(releases, r)
	}
	if _, err := ls.acquire(ctx, 1, 13); !errors.Is(err, errCompanyFull) {
		t.Fatalf("company 1 past its bound: %v, want errCompanyFull", err)
	}
	r, err := ls.acquire(ctx, 2, 20)
	if err != nil {
		t.Fatalf("company 2 while company 1 is at its bound: %v", err)
	}
	r()
	releases[0]()
	r, err = ls.acquire(ctx, 1, 13)
	if err != nil {
		t.Fatalf("company 1 after a release: %v", err)
	}
	r()
	for _, r := range releases[1:] {
		r()
	}
	if n, admitted := ls.stats(); n != 0 || admitted != 0 || len(ls.companies) != 0 {
		t.Errorf("after every release: %d lanes, %d admitted, %d companies", n, admitted, len(ls.companies))
	}
}

func TestSendCompanyFull(t *testing.T) {
	b := setup(t, setupOptions{pipeline: func(o *Options) { o.MaxInFlightPerCompany = 1 }})
	gate := &gateSubmitter{Submitter: b.sub, entered: make(chan struct{}, 1), release: make(chan struct{})}
	b.p.o.Submitter = gate
	done := make(chan error, 1)
	go func() {
		_, err := b.send(t, request("01", "company-full-1"))
		done <- err
	}()
	<-gate.entered
	_, err := b.send(t, request("01", "company-full-2"))
	var oe *OverloadError
	if !errors.As(err, &oe) || !strings.Contains(oe.Reason.String(), "company") {
		t.Errorf("second send of the company: %v, want an overload error", err)
	}
	close(gate.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// blockFirstStatus holds the first status call until release is closed.
type blockFirstStatus struct {
	Submitter
	once    sync.Once
	blocked chan struct{} // closed when the first status call is held
	release chan struct{}
}

func (b *blockFirstStatus) Status(ctx context.Context, cr recepcion.Credentials, key string) (recepcion.Status, error) {
	first := false
	b.once.Do(func() { first = true })
	if first {
		close(b.blocked)
		select {
		case <-b.release:
		case <-ctx.Done():
			return recepcion.Status{}, ctx.Err()
		}
	}
	return b.Submitter.Status(ctx, cr, key)
}

// TestRetrierSlowDocumentHoldsOneWorker checks that a document whose
// status call hangs keeps only its own worker: the background worker goes
// on settling the others meanwhile.
func TestRetrierSlowDocumentHoldsOneWorker(t *testing.T) {
	blocker := &blockFirstStatus{blocked: make(chan struct{}), release: make(chan struct{})}
	defer close(blocker.release)
	b := setup(t, setupOptions{pipeline: func(o *Options) {
		o.DisableRetrier = false
		o.RetryWorkers, o.RetryInterval = 2, 5*time.Millisecond
		blocker.Submitter = o.Submitter
		o.Submitter = blocker
	}})
	b.mustSend(t, request("01", "slow-a"))
	select {
	case <-blocker.blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("the background worker never asked about the first document")
	}
	var claves []string
	for _, id := range []string{"b", "c", "d", "e"} {
		claves = append(claves, b.mustSend(t, request("01", "slow-"+id)).Document.Clave)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, c := range claves {
		for b.stored(t, c).Estado != tenant.StateAccepted {
			if time.Now().After(deadline) {
				t.Fatalf("%s is %s while another document's status call hangs: the slow one held more than its worker",
					c, b.stored(t, c).Estado)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// The saturation gauges: capacity is MaxInFlight, in_flight the send calls
// admitted now; at in_flight == capacity the next send is refused.
func TestSaturationGauges(t *testing.T) {
	b := setup(t, setupOptions{pipeline: func(o *Options) { o.MaxInFlight, o.MaxInFlightPerCompany = 1, 1 }})
	gauge := func(name string) float64 {
		t.Helper()
		mfs, err := b.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == name {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatalf("%s is not exported", name)
		return 0
	}
	if c, n := gauge("facturad_pipeline_capacity"), gauge("facturad_pipeline_in_flight"); c != 1 || n != 0 {
		t.Fatalf("idle: capacity %v, in flight %v; want 1, 0", c, n)
	}
	gate := &gateSubmitter{Submitter: b.sub, entered: make(chan struct{}, 1), release: make(chan struct{})}
	b.p.o.Submitter = gate
	done := make(chan error, 1)
	go func() {
		_, err := b.send(t, request("01", "saturated-1"))
		done <- err
	}()
	<-gate.entered
	if n := gauge("facturad_pipeline_in_flight"); n != 1 {
		t.Errorf("one send held: in flight %v, want 1", n)
	}
	var oe *OverloadError
	if _, err := b.send(t, request("01", "saturated-2")); !errors.As(err, &oe) {
		t.Errorf("send at capacity: %v, want an overload error", err)
	}
	close(gate.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := gauge("facturad_pipeline_in_flight"); n != 0 {
		t.Errorf("after the send: in flight %v, want 0", n)
	}
}
