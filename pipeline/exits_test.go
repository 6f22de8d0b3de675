package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/tenant"
)

// Every state has an exit: the tests below leave a document where a crash,
// the tax authority or a failed query used to leave it for good, and see it
// leave without any client action.

// interrupted stores what a send leaves behind when its process dies right
// after numbering: a 00 row with a number, its request and its send's
// hold, but no clave, consecutivo or XML.
func (b *bundle) interrupted(t *testing.T, idExterno string, keepRequest bool) tenant.Document {
	t.Helper()
	return b.interruptedSend(t, request("01", idExterno), keepRequest)
}

// interruptedSend is interrupted with the request r, reserved without the
// tax breakdown a send's reservation carries (the request need not
// calculate: see interruptedReservation).
func (b *bundle) interruptedSend(t *testing.T, r map[string]any, keepRequest bool) tenant.Document {
	t.Helper()
	return b.interruptedReservation(t, r, keepRequest, false)
}

// interruptedReservation is interruptedSend, the reservation carrying the
// document's tax breakdown, calculated as the send calculates it, when
// withBreakdown (without, it is a document numbered by a build that kept
// none).
func (b *bundle) interruptedReservation(t *testing.T, r map[string]any, keepRequest, withBreakdown bool) tenant.Document {
	t.Helper()
	idExterno := r["id_externo"].(string)
	raw := body(t, r)
	req, err := hacienda.DecodeSendRequest(raw)
	if err != nil {
		t.Fatal(err)
	}
	canon, hash, err := canonicalRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	now := b.clock.now()
	d := tenant.Document{
		CompanyID:    b.branch.CompanyID,
		BranchID:     b.branch.BranchID,
		Ambiente:     b.company.Ambiente,
		IDExterno:    idExterno,
		RequestHash:  hash,
		Tipo:         "01",
		Terminal:     "00001",
		Situacion:    "1",
		FechaEmision: now.In(hacienda.CostaRica).Truncate(time.Second),
		Submission:   tenant.Submission{Phase: tenant.PhaseNumbered, Estado: tenant.StatePending, NextAttemptAt: now.Add(b.p.o.InFlightGrace)},
	}
	if keepRequest {
		d.Request = canon
	}
	if withBreakdown {
		// The send's own steps: the document calculated as the issuer's,
		// before it is numbered.
		is, err := b.svc.Issuer(context.Background(), d.CompanyID, d.BranchID)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := hacienda.NewDocument(req, issuerParty(is, b.p.o.ProveedorSistemas))
		if err != nil {
			t.Fatal(err)
		}
		d.IVABreakdown = storedBreakdown(context.Background(), tenant.BreakdownOf(doc), quiet)
	}
	if err := b.store.ReserveDocument(context.Background(), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestInterruptedSendIsFinishedByTheWorker(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			b := setup(t, setupOptions{store: sk.open})
			d := b.interrupted(t, "crash-1", true)

			// While the dead send's hold lasts, a repeat is told to come
			// back after about as long as the document has been held: a
			// second at first, longer as the hold goes on, never past its
			// end.
			retryAfter := func() time.Duration {
				t.Helper()
				_, err := b.send(t, request("01", "crash-1"))
				var oe *OverloadError
				if !errors.As(err, &oe) {
					t.Fatalf("repeat during the hold: %v, want an *OverloadError", err)
				}
				return oe.After
			}
			if got := retryAfter(); got != b.p.o.OverloadRetryAfter {
				t.Errorf("Retry-After right after the hold began: %v, want %v", got, b.p.o.OverloadRetryAfter)
			}
			third := b.p.o.InFlightGrace / 3
			b.clock.advance(third)
			if got := retryAfter(); got < third-2*time.Second || got > third+2*time.Second {
				t.Errorf("Retry-After a third into the hold: %v, want about %v", got, third)
			}
			b.clock.advance(third + third/2)
			left := b.p.o.InFlightGrace - 2*third - third/2
			if got := retryAfter(); got > left+2*time.Second {
				t.Errorf("Retry-After near the end of the hold: %v, past what is left (%v)", got, left)
			}

			// After the hold, the worker finishes it with its number and
			// issue time, and the tax authority receives it.
			b.runDueUntil(t, 5, func() bool {
				s, err := b.store.DocumentByExternalID(context.Background(), d.BranchID, d.IDExterno)
				return err == nil && s.Estado == tenant.StateAccepted
			})
			s, err := b.store.DocumentByExternalID(context.Background(), d.BranchID, d.IDExterno)
			if err != nil {
				t.Fatal(err)
			}
			if s.Numero != d.Numero || len(s.Clave) != 50 || !strings.HasSuffix(s.Consecutivo, "0000000001") ||
				len(s.SignedXML) == 0 || !s.FechaEmision.Equal(d.FechaEmision) {
				t.Errorf("finished document: numero %d clave %q consecutivo %q xml %d fecha %v (reserved %v)",
					s.Numero, s.Clave, s.Consecutivo, len(s.SignedXML), s.FechaEmision, d.FechaEmision)
			}
			if n := b.sub.submits.Load(); n != 1 {
				t.Errorf("%d submissions, want 1", n)
			}
			// The caller's repeat now gets the finished document.
			out, err := b.send(t, request("01", "crash-1"))
			if err != nil || out.Document.Clave != s.Clave || out.Failed {
				t.Errorf("repeat after finishing: %v %s clave %s", err, describe(out), out.Document.Clave)
			}
		})
	}
}

func TestInterruptedSendWithoutRequestStopsWithAReason(t *testing.T) {
	b := setup(t, setupOptions{})
	d := b.interrupted(t, "old-1", false)
	b.round(t)
	s, err := b.store.DocumentByExternalID(context.Background(), d.BranchID, d.IDExterno)
	if err != nil {
		t.Fatal(err)
	}
	if s.Estado != tenant.StatePending || s.LastError == "" || !s.NextAttemptAt.IsZero() {
		t.Fatalf("stored %s, next %v, reason %q: want 00 with a reason and no next attempt", s.Estado, s.NextAttemptAt, s.LastError)
	}
	// The reason is what a read shows, and the same request resumes it
	// with its number.
	out, err := b.send(t, request("01", "old-1"))
	if err != nil || out.Failed || out.Document.Numero != d.Numero || out.Document.Estado != tenant.StateSent {
		t.Fatalf("resumed: %v %s numero %d (reserved %d)", err, describe(out), out.Document.Numero, d.Numero)
	}
}

// errorStatus answers ind-estado error for the first n status queries.
type errorStatus struct {
	Submitter
	n atomic.Int64
}

func (e *errorStatus) Status(ctx context.Context, cr recepcion.Credentials, key string) (recepcion.Status, error) {
	st, err := e.Submitter.Status(ctx, cr, key)
	if err == nil && e.n.Add(-1) >= 0 {
		st.Estado, st.Mensaje, st.ResponseXML = recepcion.EstadoError, nil, nil
	}
	return st, err
}

func TestProcessingErrorIsAskedAgain(t *testing.T) {
	// A window longer than the rounds below (an hour each), so that the
	// test is about what happens inside it.
	b := setup(t, setupOptions{pipeline: func(o *Options) { o.ErrorFor = 24 * time.Hour }})
	es := &errorStatus{Submitter: b.client}
	es.n.Store(3)
	b.p.o.Submitter = es
	out := b.mustSend(t, request("01", "err-1"))

	b.round(t)
	s := b.stored(t, out.Document.Clave)
	if s.Estado != tenant.StateSent || s.IndEstado != "error" || s.NextAttemptAt.IsZero() || s.LastError == "" {
		t.Fatalf("after one error answer: estado %s ind %q next %v msg %q; want 04, asked again", s.Estado, s.IndEstado, s.NextAttemptAt, s.LastError)
	}
	// A check answers it as received, saying why.
	ck, err := b.p.Check(context.Background(), b.branch, out.Document.Clave)
	if err != nil || ck.Failed || ck.Estado != tenant.StateSent || !strings.Contains(ck.Message, "processing error") {
		t.Fatalf("check: %v %s", err, describe(ck))
	}
	// Once the tax authority answers, the verdict stands.
	b.runDueUntil(t, 10, func() bool { return b.stored(t, out.Document.Clave).Estado == tenant.StateAccepted })
}

func TestPersistentProcessingErrorEnds(t *testing.T) {
	b := setup(t, setupOptions{pipeline: func(o *Options) { o.ErrorFor = 3 * time.Hour }})
	es := &errorStatus{Submitter: b.client}
	es.n.Store(1 << 30)
	b.p.o.Submitter = es
	out := b.mustSend(t, request("01", "err-2"))
	b.runDueUntil(t, 10, func() bool { return b.stored(t, out.Document.Clave).Estado == tenant.StateError })
	s := b.stored(t, out.Document.Clave)
	if !s.NextAttemptAt.IsZero() || !strings.Contains(s.LastError, "processing error") {
		t.Errorf("ended: next %v msg %q", s.NextAttemptAt, s.LastError)
	}
	if s.Attempts < 2 {
		t.Errorf("ended after %d attempts; want it asked again first", s.Attempts)
	}
}

func TestCheckOfAFinalDocumentWhenUnreachable(t *testing.T) {
	b := setup(t, setupOptions{})
	out := b.mustSend(t, request("01", "final-1"))
	b.runDueUntil(t, 10, func() bool { return b.stored(t, out.Document.Clave).Estado == tenant.StateAccepted })
	if err := b.sb.SetFaults(sandbox.Faults{Outage: true}); err != nil {
		t.Fatal(err)
	}
	ck, err := b.p.Check(context.Background(), b.branch, out.Document.Clave)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Failed || ck.Estado != tenant.StateAccepted || ck.Document.Estado != tenant.StateAccepted ||
		!strings.Contains(ck.Message, "could not be asked") {
		t.Fatalf("check of an accepted document during an outage: %s", describe(ck))
	}
	if s := b.stored(t, out.Document.Clave); s.Estado != tenant.StateAccepted {
		t.Errorf("stored state changed to %s", s.Estado)
	}
}

// TestCheckOfAFinalDocumentStoresNothing: the tax authority's answer about
// a settled document changes nothing, so the check writes nothing (a
// write would bring back the parts of an archived document read from the
// archive, A.15).
func TestCheckOfAFinalDocumentStoresNothing(t *testing.T) {
	b := setup(t, setupOptions{})
	out := b.mustSend(t, request("01", "final-2"))
	b.runDueUntil(t, 10, func() bool { return b.stored(t, out.Document.Clave).Estado == tenant.StateAccepted })
	before := b.stored(t, out.Document.Clave)
	ck, err := b.p.Check(context.Background(), b.branch, out.Document.Clave)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Failed || ck.Estado != tenant.StateAccepted {
		t.Fatalf("check of an accepted document: %s", describe(ck))
	}
	if after := b.stored(t, out.Document.Clave); !after.UpdatedAt.Equal(before.UpdatedAt) || after.Estado != tenant.StateAccepted {
		t.Errorf("the check saved the settled document: updated %v, was %v; estado %s", after.UpdatedAt, before.UpdatedAt, after.Estado)
	}
}
