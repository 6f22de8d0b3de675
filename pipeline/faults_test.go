package pipeline

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/tenant"
)

func TestExpiredCertificate(t *testing.T) {
	b := setup(t, setupOptions{})
	b.clock.advance(3 * 365 * 24 * time.Hour) // past the certificate's two years
	out := b.mustSend(t, request("01", "expired-1"))
	if !out.Failed || out.Key != KeyExpiredClientCertificate || out.Estado != tenant.StatePending || out.Message == "" {
		t.Fatalf("send: %s", describe(out))
	}
	if out.Document.Clave == "" || out.Document.Consecutivo == "" {
		t.Fatal("the pending document was not numbered")
	}
	d := b.stored(t, out.Document.Clave)
	if d.Estado != tenant.StatePending || len(d.SignedXML) != 0 || !d.NextAttemptAt.IsZero() {
		t.Errorf("stored: estado %s xml %d next %v", d.Estado, len(d.SignedXML), d.NextAttemptAt)
	}
	if n := b.sub.submits.Load(); n != 0 || len(b.sb.Received()) != 0 || b.sb.Stats().Submissions != 0 {
		t.Fatalf("submitted with an expired certificate: client %d, sandbox %d", n, len(b.sb.Received()))
	}

	// A repeat gives the same answer and keeps the number.
	again := b.mustSend(t, request("01", "expired-1"))
	if again.Key != KeyExpiredClientCertificate || again.Document.Clave != d.Clave {
		t.Fatalf("repeat: %s clave %s", describe(again), again.Document.Clave)
	}
	// A check asks the tax authority, which does not know it: the stored
	// state and its reason are the answer.
	ck, err := b.p.Check(context.Background(), b.branch, d.Clave)
	if err != nil || ck.Failed || ck.Estado != tenant.StatePending || ck.Message == "" {
		t.Fatalf("check: %v %s", err, describe(ck))
	}
	// The background worker leaves 00 alone.
	if n, _ := b.p.RunDue(context.Background()); n != 0 {
		t.Errorf("the background worker claimed %d pending documents", n)
	}

	// Once the company can sign again (here: the clock is back within the
	// certificate's validity), the same request issues the document with
	// the number it was given.
	b.clock.advance(-3 * 365 * 24 * time.Hour)
	resumed := b.mustSend(t, request("01", "expired-1"))
	if resumed.Failed || resumed.Estado != tenant.StateSent || resumed.Document.Clave != d.Clave {
		t.Fatalf("resume: %s clave %s, want %s", describe(resumed), resumed.Document.Clave, d.Clave)
	}
	if _, ok := b.sb.Document(d.Clave); !ok {
		t.Fatal("the resumed document did not reach the sandbox")
	}
}

func TestOutageThenRetry(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			b := setup(t, setupOptions{store: k.open, sandbox: sandbox.Options{Faults: sandbox.Faults{Outage: true}}})
			start := time.Now()
			out := b.mustSend(t, request("01", "outage-1"))
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("the send took %s during the outage", took)
			}
			if !out.Failed || out.Key != KeySendingDocumentError || out.Estado != tenant.StateNotSentYet || out.Message == "" {
				t.Fatalf("send: %s", describe(out))
			}
			clave := out.Document.Clave
			d := b.stored(t, clave)
			if d.Estado != tenant.StateNotSentYet || len(d.SignedXML) == 0 || d.NextAttemptAt.IsZero() || d.LastError == "" {
				t.Fatalf("stored: estado %s xml %d next %v error %q", d.Estado, len(d.SignedXML), d.NextAttemptAt, d.LastError)
			}

			// While the outage lasts the worker keeps it in 05 and backs
			// off.
			b.round(t)
			if d2 := b.stored(t, clave); d2.Estado != tenant.StateNotSentYet || d2.Attempts < 1 {
				t.Fatalf("during the outage: estado %s attempts %d", d2.Estado, d2.Attempts)
			}

			if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
				t.Fatal(err)
			}
			// The next round finds the clave unknown and submits it: 04.
			b.round(t)
			if d := b.stored(t, clave); d.Estado != tenant.StateSent || d.SubmittedAt.IsZero() {
				t.Fatalf("after the outage: estado %s submitted %v (%s)", d.Estado, d.SubmittedAt, d.LastError)
			}
			// The one after asks for the verdict: 01.
			b.round(t)
			if d := b.stored(t, clave); d.Estado != tenant.StateAccepted {
				t.Fatalf("second round: estado %s", d.Estado)
			}
			d = b.stored(t, clave)
			if d.CodigoMensaje != "1" || len(d.ResponseXML) == 0 || !d.NextAttemptAt.IsZero() {
				t.Errorf("settled: codigo %q answer %d next %v", d.CodigoMensaje, len(d.ResponseXML), d.NextAttemptAt)
			}
			if st := b.sb.Stats(); st.Submissions != 1 || st.Duplicates != 0 {
				t.Errorf("the sandbox received %d submissions, %d duplicates", st.Submissions, st.Duplicates)
			}
		})
	}
}

func TestDroppedAnswerIsNotSentTwice(t *testing.T) {
	t.Run("ok/send asks first", func(t *testing.T) {
		b := setup(t, setupOptions{sandbox: sandbox.Options{Faults: sandbox.Faults{DropRate: 1}}})
		out := b.mustSend(t, request("01", "drop-1"))
		// The answer was lost but the document arrived: the status says
		// so, and the send answers it as sent.
		if out.Failed || out.Estado == tenant.StateNotSentYet {
			t.Fatalf("send: %s", describe(out))
		}
		if n := b.sub.statuses.Load(); n < 1 {
			t.Error("the status was not asked after the lost answer")
		}
		if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
			t.Fatal(err)
		}
		b.runDueUntil(t, 5, func() bool { return b.stored(t, out.Document.Clave).Estado == tenant.StateAccepted })
		if st := b.sb.Stats(); st.Submissions != 1 || st.Duplicates != 0 || b.sub.submits.Load() != 1 {
			t.Errorf("submissions: sandbox %d (duplicates %d), client %d", st.Submissions, st.Duplicates, b.sub.submits.Load())
		}
	})
	t.Run("ok/worker asks first", func(t *testing.T) {
		b := setup(t, setupOptions{sandbox: sandbox.Options{Faults: sandbox.Faults{Outage: true}}})
		out := b.mustSend(t, request("01", "drop-2"))
		if out.Estado != tenant.StateNotSentYet {
			t.Fatalf("send: %s", describe(out))
		}
		clave := out.Document.Clave
		// The outage ends but every answer to a submission is lost.
		if err := b.sb.SetFaults(sandbox.Faults{DropRate: 1}); err != nil {
			t.Fatal(err)
		}
		b.round(t)
		if _, ok := b.sb.Document(clave); !ok {
			t.Fatal("the worker did not resubmit after the outage")
		}
		if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
			t.Fatal(err)
		}
		b.runDueUntil(t, 5, func() bool { return b.stored(t, clave).Estado == tenant.StateAccepted })
		if st := b.sb.Stats(); st.Submissions != 1 || st.Duplicates != 0 {
			t.Errorf("the sandbox received %d submissions, %d duplicates", st.Submissions, st.Duplicates)
		}
	})
}

func TestForcedRejection(t *testing.T) {
	lines := []string{"El monto TotalComprobante no coincide con el calculado.", "Segunda línea del detalle."}
	b := setup(t, setupOptions{sandbox: sandbox.Options{Faults: sandbox.Faults{RejectNext: 1, RejectDetail: lines}}})
	out := b.mustSend(t, request("01", "reject-1"))
	if out.Failed || out.Estado != tenant.StateSent {
		t.Fatalf("send: %s", describe(out))
	}
	ck, err := b.p.Check(context.Background(), b.branch, out.Document.Clave)
	if err != nil {
		t.Fatal(err)
	}
	d := ck.Document
	if ck.Failed || ck.Estado != tenant.StateRejected || d.CodigoMensaje != "3" || d.IndEstado != "rechazado" {
		t.Fatalf("check: %s codigo %q ind %q", describe(ck), d.CodigoMensaje, d.IndEstado)
	}
	for _, l := range lines {
		if !slices.Contains(d.DetalleMensaje, l) {
			t.Errorf("detail lines %q lack %q", d.DetalleMensaje, l)
		}
	}
	if s := b.stored(t, d.Clave); s.Estado != tenant.StateRejected || !slices.Equal(s.DetalleMensaje, d.DetalleMensaje) {
		t.Errorf("stored: estado %s detail %q", s.Estado, s.DetalleMensaje)
	}
}

func TestCheckUnreadable(t *testing.T) {
	b := setup(t, setupOptions{})
	out := b.mustSend(t, request("01", "check-1"))
	if err := b.sb.SetFaults(sandbox.Faults{Outage: true}); err != nil {
		t.Fatal(err)
	}
	ck, err := b.p.Check(context.Background(), b.branch, out.Document.Clave)
	if err != nil {
		t.Fatal(err)
	}
	// 04 is stored: the answer is 04 with a 200 and a message, not the
	// failed check's 500 with 05.
	if ck.Failed || ck.Estado != tenant.StateSent || ck.Message == "" {
		t.Fatalf("check: %s", describe(ck))
	}
	if s := b.stored(t, out.Document.Clave); s.Estado != tenant.StateSent {
		t.Errorf("the stored state changed to %s", s.Estado)
	}
}

// TestCheckUnreadableOfANotSentDocument: a failed check of a stored 05 is
// the contract's 500 with estado 05.
func TestCheckUnreadableOfANotSentDocument(t *testing.T) {
	b := setup(t, setupOptions{})
	if err := b.sb.SetFaults(sandbox.Faults{Outage: true}); err != nil {
		t.Fatal(err)
	}
	out := b.mustSend(t, request("01", "check-05"))
	if out.Estado != tenant.StateNotSentYet {
		t.Fatalf("send during an outage: %s", describe(out))
	}
	ck, err := b.p.Check(context.Background(), b.branch, out.Document.Clave)
	if err != nil {
		t.Fatal(err)
	}
	if !ck.Failed || ck.Estado != tenant.StateNotSentYet || ck.Message == "" {
		t.Fatalf("check: %s", describe(ck))
	}
}

func TestDocumentAuthorization(t *testing.T) {
	b := setup(t, setupOptions{})
	out := b.mustSend(t, request("01", "auth-1"))
	clave := out.Document.Clave
	ctx := context.Background()
	_, stranger := b.newCompany(t, "3101654321")
	reseller := tenant.Principal{UserID: 999, Role: tenant.RoleReseller}
	otherBranch := b.branch
	otherBranch.BranchID += 1000
	for _, tc := range []struct {
		name string
		p    tenant.Principal
		ok   bool
	}{
		{"ok/own branch", b.branch, true},
		{"ok/admin", b.admin, true},
		{"error/another company", stranger, false},
		{"ok/a user of another branch of the company", otherBranch, true},
		{"error/reseller not owning it", reseller, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.p.Document(ctx, tc.p, clave)
			if tc.ok && err != nil {
				t.Fatalf("read: %v", err)
			}
			if !tc.ok && !errors.Is(err, tenant.ErrNotFound) {
				t.Fatalf("read: %v, want not found", err)
			}
			_, err = b.p.Check(ctx, tc.p, clave)
			if !tc.ok && !errors.Is(err, tenant.ErrNotFound) {
				t.Fatalf("check: %v, want not found", err)
			}
		})
	}
	// A reseller sees the documents of the companies it owns.
	owner := tenant.Principal{UserID: 77, Role: tenant.RoleReseller}
	saved := b.admin
	b.admin = owner
	_, resold := b.newCompany(t, "3101777777")
	b.admin = saved
	theirs := b.mustSendAs(t, resold, request("01", "resold-1"))
	if _, err := b.p.Document(ctx, owner, theirs.Document.Clave); err != nil {
		t.Errorf("the owning reseller: %v", err)
	}
	if _, err := b.p.Document(ctx, owner, clave); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("the reseller reads another's company's document: %v", err)
	}
	if _, err := b.p.Document(ctx, b.branch, theirs.Document.Clave); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("a branch user reads the reseller's company's document: %v", err)
	}

	if _, err := b.p.Document(ctx, b.branch, "123"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("malformed clave: %v", err)
	}
}

func TestLaneFull(t *testing.T) {
	b := setup(t, setupOptions{
		sandbox:  sandbox.Options{Faults: sandbox.Faults{Latency: sandbox.Duration(300 * time.Millisecond)}},
		pipeline: func(o *Options) { o.Workers, o.QueueSize = 1, 1 },
	})
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = b.send(t, request("01", "burst-"+string(rune('a'+i))))
		}()
	}
	wg.Wait()
	var ok, refused int
	for _, err := range errs {
		var oe *OverloadError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &oe):
			refused++
			if oe.HTTPStatus() != 503 || oe.RetryAfter() <= 0 {
				t.Errorf("refusal %d %s", oe.HTTPStatus(), oe.RetryAfter())
			}
		default:
			t.Errorf("send: %v", err)
		}
	}
	if ok < 2 || refused < 1 || ok+refused != n {
		t.Errorf("%d sent, %d refused; want at least 2 and 1", ok, refused)
	}
}

func TestLanesBounded(t *testing.T) {
	ls := newLanes(2, 1, 0, 0)
	ctx := context.Background()
	var rel []func()
	for i := 0; i < 2; i++ {
		r, err := ls.acquire(ctx, 1, 7)
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, r)
	}
	// The third waits (queue slot); the fourth is refused.
	got := make(chan error, 1)
	go func() {
		r, err := ls.acquire(ctx, 1, 7)
		if err == nil {
			r()
		}
		got <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, n := ls.stats(); n == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := ls.acquire(ctx, 1, 7); !errors.Is(err, errLaneFull) {
		t.Fatalf("fourth: %v, want lane full", err)
	}
	// Another branch has its own lane.
	r, err := ls.acquire(ctx, 1, 8)
	if err != nil {
		t.Fatalf("other branch: %v", err)
	}
	r()
	rel[0]()
	if err := <-got; err != nil {
		t.Fatalf("queued: %v", err)
	}
	rel[1]()
	if lanes, n := ls.stats(); lanes != 0 || n != 0 {
		t.Errorf("idle lanes not retired: %d lanes, %d admitted", lanes, n)
	}
	// A caller that gives up while queued leaves no trace.
	r1, _ := ls.acquire(ctx, 1, 9)
	r2, _ := ls.acquire(ctx, 1, 9)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := ls.acquire(cctx, 1, 9); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("queued past its deadline: %v", err)
	}
	r1()
	r2()
	if lanes, n := ls.stats(); lanes != 0 || n != 0 {
		t.Errorf("after a give-up: %d lanes, %d admitted", lanes, n)
	}
	// The total bound holds over every branch.
	all := newLanes(5, 5, 2, 0)
	ra, _ := all.acquire(ctx, 1, 1)
	rb, _ := all.acquire(ctx, 1, 2)
	if _, err := all.acquire(ctx, 1, 3); !errors.Is(err, errAllFull) {
		t.Errorf("past the total: %v", err)
	}
	ra()
	rb()

	// Closing refuses new work and reports when the lanes drained.
	r3, _ := ls.acquire(ctx, 1, 10)
	drained := ls.close()
	if _, err := ls.acquire(ctx, 1, 10); !errors.Is(err, ErrStopping) {
		t.Errorf("after close: %v", err)
	}
	select {
	case <-drained:
		t.Fatal("drained with work in flight")
	default:
	}
	r3()
	<-drained
}

func TestStop(t *testing.T) {
	b := setup(t, setupOptions{})
	ctx := context.Background()
	if err := b.p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := b.send(t, request("01", "after-stop"))
	var oe *OverloadError
	if !errors.Is(err, ErrStopping) || !errors.As(err, &oe) {
		t.Fatalf("send after stop: %v", err)
	}
}

func TestReplicasClaimOnce(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testReplicasClaimOnce(t, k.open) })
	}
}

func testReplicasClaimOnce(t *testing.T, open func(testing.TB) fullStore) {
	b := setup(t, setupOptions{store: open, sandbox: sandbox.Options{Faults: sandbox.Faults{Outage: true}}})
	var claves []string
	for i := range 6 {
		out := b.mustSend(t, request("01", "replica-"+string(rune('a'+i))))
		claves = append(claves, out.Document.Clave)
	}
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	// A second pipeline on the same store plays another replica.
	p2, err := New(Options{
		Store: b.store, Issuers: b.svc, Signer: b.cache, Submitter: b.sub, Logger: quiet,
		Clock: b.clock.now, DisableRetrier: true, Capacity: Capacity{RetryBatch: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer p2.Stop(context.Background())
	b.clock.advance(time.Hour)
	var wg sync.WaitGroup
	for _, p := range []*Pipeline{b.p, p2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 6 {
				if _, err := p.RunDue(context.Background()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for _, c := range claves {
		if _, ok := b.sb.Document(c); !ok {
			t.Errorf("%s was never resubmitted", c)
		}
	}
	if st := b.sb.Stats(); st.Submissions != int64(len(claves)) || st.Duplicates != 0 {
		t.Errorf("the sandbox received %d submissions, %d duplicates, for %d documents", st.Submissions, st.Duplicates, len(claves))
	}
}

func TestBackgroundWorkerOnItsOwn(t *testing.T) {
	b := setup(t, setupOptions{
		sandbox: sandbox.Options{Faults: sandbox.Faults{Outage: true}},
		pipeline: func(o *Options) {
			o.DisableRetrier = false
			o.RetryInterval = 5 * time.Millisecond
		},
	})
	out := b.mustSend(t, request("01", "own-1"))
	if out.Estado != tenant.StateNotSentYet {
		t.Fatalf("send: %s", describe(out))
	}
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	// The worker resubmits and settles it without help. The wait is a
	// safety net, not a timing assertion.
	deadline := time.Now().Add(20 * time.Second)
	for b.stored(t, out.Document.Clave).Estado != tenant.StateAccepted {
		if time.Now().After(deadline) {
			t.Fatalf("not settled: %+v", b.stored(t, out.Document.Clave).Estado)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := b.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := b.sb.Stats(); st.Submissions != 1 {
		t.Errorf("%d submissions", st.Submissions)
	}
}

func TestWorkerRefusedResubmission(t *testing.T) {
	b := setup(t, setupOptions{sandbox: sandbox.Options{Faults: sandbox.Faults{Outage: true}}})
	out := b.mustSend(t, request("01", "refused-1"))
	// The tax authority comes back refusing the document at reception.
	stub := &stubSubmitter{err: apiErr(recepcion.OpSubmit, 400)}
	b.p.o.Submitter = stub
	b.round(t)
	d := b.stored(t, out.Document.Clave)
	if d.Estado != tenant.StateError || !d.NextAttemptAt.IsZero() || d.LastError == "" {
		t.Fatalf("after a refusal: estado %s next %v error %q", d.Estado, d.NextAttemptAt, d.LastError)
	}
	if stub.statuses.Load() != 2 || stub.submits.Load() != 1 {
		t.Errorf("status %d, submits %d: want the status, one submission, the status again", stub.statuses.Load(), stub.submits.Load())
	}
	// A repeat of the send answers the refusal as it was.
	again := b.mustSend(t, request("01", "refused-1"))
	if !again.Failed || again.Key != KeySendingDocumentError || again.Estado != tenant.StateError {
		t.Errorf("repeat: %s", describe(again))
	}
}

func TestMetrics(t *testing.T) {
	b := setup(t, setupOptions{})
	b.mustSend(t, request("01", "metrics-1"))
	mfs, err := b.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	stages := map[string]bool{}
	var sent float64
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetName() {
			case "facturad_pipeline_stage_duration_seconds":
				stages[labels["stage"]] = m.GetHistogram().GetSampleCount() > 0
			case "facturad_pipeline_documents_total":
				if labels["op"] == opSend && labels["estado"] == "04" {
					sent = m.GetCounter().GetValue()
				}
			}
		}
	}
	for _, s := range []string{stageValidate, stageNumber, stageBuild, stageSign, stageStore, stageLimit, stageSubmit, stageQueue} {
		if !stages[s] {
			t.Errorf("stage %s not timed", s)
		}
	}
	if sent != 1 {
		t.Errorf("documents_total{op=send,estado=04} = %v", sent)
	}
}

func TestHangingTaxAuthority(t *testing.T) {
	// The tax authority takes a minute to answer anything; the send gives
	// up after SubmitTimeout and answers 05, the document stored.
	b := setup(t, setupOptions{
		sandbox:  sandbox.Options{Faults: sandbox.Faults{Latency: sandbox.Duration(time.Minute)}},
		pipeline: func(o *Options) { o.SubmitTimeout = 300 * time.Millisecond },
	})
	start := time.Now()
	out := b.mustSend(t, request("01", "hang-1"))
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the send took %s with a 300ms submit timeout", took)
	}
	if !out.Failed || out.Key != KeySendingDocumentError || out.Estado != tenant.StateNotSentYet {
		t.Fatalf("send: %s", describe(out))
	}
	if d := b.stored(t, out.Document.Clave); d.Estado != tenant.StateNotSentYet || len(d.SignedXML) == 0 {
		t.Errorf("stored: estado %s xml %d", d.Estado, len(d.SignedXML))
	}
}

// hangingSubmitter holds every submission until its context ends.
type hangingSubmitter struct {
	Submitter
	entered chan struct{}
}

func (h *hangingSubmitter) Submit(ctx context.Context, _ recepcion.Credentials, _ recepcion.Submission) (recepcion.Receipt, error) {
	h.entered <- struct{}{}
	<-ctx.Done()
	return recepcion.Receipt{}, recepcion.ClassifyTransport(recepcion.OpSubmit, context.Cause(ctx), true)
}

func TestStopAndCancelKeepsTheDocument(t *testing.T) {
	b := setup(t, setupOptions{pipeline: func(o *Options) { o.SubmitTimeout = time.Minute }})
	h := &hangingSubmitter{Submitter: b.client, entered: make(chan struct{}, 1)}
	b.p.o.Submitter = h
	done := make(chan Outcome, 1)
	go func() {
		out, err := b.send(t, request("01", "cut-1"))
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	<-h.entered
	// A soft stop waits for the submission...
	sctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.p.Stop(sctx); err == nil {
		t.Fatal("a soft stop returned while a submission was in flight")
	}
	// ...a hard one cuts it; the document stays stored as 05.
	if err := b.p.StopAndCancel(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if !out.Failed || out.Estado != tenant.StateNotSentYet || out.Key != KeySendingDocumentError {
		t.Fatalf("cut send: %s", describe(out))
	}
	if d := b.stored(t, out.Document.Clave); d.Estado != tenant.StateNotSentYet || len(d.SignedXML) == 0 || d.NextAttemptAt.IsZero() {
		t.Errorf("stored: estado %s xml %d next %v", d.Estado, len(d.SignedXML), d.NextAttemptAt)
	}
}

func TestNoVerdictStopsPolling(t *testing.T) {
	b := setup(t, setupOptions{
		sandbox:  sandbox.Options{Faults: sandbox.Faults{StuckRate: 1}},
		pipeline: func(o *Options) { o.PollFor = 90 * time.Minute },
	})
	out := b.mustSend(t, request("01", "stuck-1"))
	clave := out.Document.Clave
	b.round(t) // an hour later: procesando, asked again later
	if d := b.stored(t, clave); d.Estado != tenant.StateSent || d.NextAttemptAt.IsZero() || d.IndEstado != "procesando" {
		t.Fatalf("first poll: estado %s ind %q next %v", d.Estado, d.IndEstado, d.NextAttemptAt)
	}
	b.round(t) // two hours: past PollFor
	d := b.stored(t, clave)
	if d.Estado != tenant.StateSent || !d.NextAttemptAt.IsZero() || d.LastError == "" {
		t.Fatalf("after PollFor: estado %s next %v note %q", d.Estado, d.NextAttemptAt, d.LastError)
	}
	if n, _ := b.p.RunDue(context.Background()); n != 0 {
		t.Errorf("still claimed: %d", n)
	}
}
