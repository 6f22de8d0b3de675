package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/hacienda/xmlcheck"
	"facturad/signer"
	"facturad/tenant"
)

// The background worker settles receivers' messages as it settles
// documents: the tests below leave a message where an unreachable tax
// authority, a lost answer or a killed call leaves it, and see it reach the
// tax authority's verdict with no client call.

// messageFaults applies faults to the sandbox around the submission of a
// receiver's message only, so that the supplier's document is asked about
// normally: before turns the faults on just before the message is
// submitted; after, when set, replaces them once the submission returned
// (before the pipeline may ask the status).
type messageFaults struct {
	Submitter
	sb            *sandbox.TestServer
	before, after *sandbox.Faults
	// revoke revokes the tokens handed out, so that the submission needs
	// a new one.
	revoke bool
	on     atomic.Bool
}

func (m *messageFaults) Submit(ctx context.Context, cr recepcion.Credentials, s recepcion.Submission) (recepcion.Receipt, error) {
	if s.ConsecutivoReceptor == "" || !m.on.Load() {
		return m.Submitter.Submit(ctx, cr, s)
	}
	if err := m.sb.SetFaults(*m.before); err != nil {
		return recepcion.Receipt{}, err
	}
	if m.revoke {
		m.sb.RevokeTokens()
	}
	rc, err := m.Submitter.Submit(ctx, cr, s)
	if m.after != nil {
		if ferr := m.sb.SetFaults(*m.after); ferr != nil {
			return rc, ferr
		}
	}
	return rc, err
}

// describeReceived is a received outcome in a few words.
func describeReceived(o ReceivedOutcome) string {
	r := o.Received
	return fmt.Sprintf("estado %s failed %v key %q message %q (stored %s, numero %d, next %v, last error %q)",
		o.Estado, o.Failed, o.Key, o.Message, r.Estado, r.Numero, r.NextAttemptAt, r.LastError)
}

// receivedRow reads a received document back from the store.
func (b *bundle) receivedRow(t testing.TB, companyID int64, clave string) tenant.ReceivedDocument {
	t.Helper()
	r, err := b.p.o.Received.ReceivedByClave(context.Background(), companyID, clave)
	if err != nil {
		t.Fatalf("received %s: %v", clave, err)
	}
	return r
}

// acceptedMessage checks a message the worker settled: 01 with the tax
// authority's signed answer, no next attempt, its XML schema-valid and
// signed, received by the tax authority once under its key.
func (b *bundle) acceptedMessage(t *testing.T, r tenant.ReceivedDocument) {
	t.Helper()
	if r.Estado != tenant.StateAccepted || r.CodigoMensaje != "1" || len(r.ResponseXML) == 0 || !r.NextAttemptAt.IsZero() {
		t.Errorf("settled: estado %s codigo %q answer %d next %v (%s)", r.Estado, r.CodigoMensaje, len(r.ResponseXML), r.NextAttemptAt, r.LastError)
	}
	if err := xmlcheck.XSD(t, "MensajeReceptor", r.SignedXML); err != nil {
		t.Errorf("XSD: %v", err)
	}
	if _, err := signer.Verify(r.SignedXML); err != nil {
		t.Errorf("verify: %v", err)
	}
	if _, ok := b.sb.Document(r.Clave + "-" + r.Consecutivo); !ok {
		t.Errorf("the tax authority never received the message %s-%s", r.Clave, r.Consecutivo)
	}
}

func TestReceivedMessagesSettleInTheBackground(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) { testReceivedMessagesSettle(t, sk.open) })
	}
}

// timeless is the sandbox of these tests: the worker's rounds move the
// pipeline's clock hours ahead, so documents issued later carry dates the
// tax authority would find in the future; the bounds are off.
var timeless = sandbox.Options{FechaAhead: -1, FechaBehind: -1}

func testReceivedMessagesSettle(t *testing.T, open func(testing.TB) fullStore) {
	// The client runs on the test's clock, so that the refused logins it
	// remembers are forgotten as the rounds move the clock.
	b := setup(t, setupOptions{store: open, sandbox: timeless, clientClock: true})
	buyerCo, buyer := b.newCompany(t, buyerID)
	mf := &messageFaults{Submitter: b.sub, sb: b.sb}
	b.p.o.Submitter = mf
	accept := map[string]any{"condicionImpuesto": "01", "montoTotalImpuestoAcreditar": "3250.13"}

	t.Run("ok/a message left 05 by an unreachable tax authority settles to 01 with no client call", func(t *testing.T) {
		xml := b.issueTo(t, buyerID, "fe-outage")
		mf.before, mf.after = &sandbox.Faults{Outage: true}, nil
		mf.on.Store(true)
		out, err := b.receive(buyer, receiveJSON(xml, "1", "rcv-outage", accept))
		mf.on.Store(false)
		if err != nil {
			t.Fatal(err)
		}
		r := out.Received
		if !out.Failed || out.Key != KeySendingDocumentError || r.Estado != tenant.StateNotSentYet || len(r.SignedXML) == 0 || r.NextAttemptAt.IsZero() {
			t.Fatalf("receive during the outage: %s", describeReceived(out))
		}
		if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
			t.Fatal(err)
		}
		submits, checks := b.sub.submits.Load(), b.sub.statuses.Load()
		// The worker asks the status (unknown), submits (04), then polls
		// (01): no receive or check call in between.
		b.runDueUntil(t, 6, func() bool { return b.receivedRow(t, buyerCo.ID, r.Clave).Estado == tenant.StateAccepted })
		got := b.receivedRow(t, buyerCo.ID, r.Clave)
		b.acceptedMessage(t, got)
		if got.Consecutivo != r.Consecutivo || got.Numero != r.Numero {
			t.Errorf("settled as %s (%d), stored as %s (%d)", got.Consecutivo, got.Numero, r.Consecutivo, r.Numero)
		}
		if n := b.sub.submits.Load() - submits; n != 1 {
			t.Errorf("%d submissions by the worker, want 1", n)
		}
		if b.sub.statuses.Load()-checks < 2 {
			t.Error("the worker did not ask the status before submitting and after")
		}
		if st := b.sb.Stats(); st.Duplicates != 0 {
			t.Errorf("%d duplicate submissions", st.Duplicates)
		}
	})

	t.Run("ok/a message left 04 settles by polling", func(t *testing.T) {
		xml := b.issueTo(t, buyerID, "fe-poll")
		out, err := b.receive(buyer, receiveJSON(xml, "2", "rcv-poll", map[string]any{
			"detalleMensaje": "Solo parte del servicio fue prestado", "condicionImpuesto": "02", "montoTotalImpuestoAcreditar": 1000}))
		if err != nil {
			t.Fatal(err)
		}
		if out.Failed || out.Received.Estado != tenant.StateSent {
			t.Fatalf("receive: %s", describeReceived(out))
		}
		submits := b.sub.submits.Load()
		b.round(t)
		got := b.receivedRow(t, buyerCo.ID, out.Received.Clave)
		b.acceptedMessage(t, got)
		if got.IndEstado != "aceptado" || got.Attempts != 1 {
			t.Errorf("polled: ind-estado %q attempts %d", got.IndEstado, got.Attempts)
		}
		if n := b.sub.submits.Load() - submits; n != 0 {
			t.Errorf("%d submissions while polling a 04", n)
		}
	})

	t.Run("ok/a 05 the tax authority holds is not submitted again", func(t *testing.T) {
		// The message arrives but its answer is lost, and the status cannot
		// be asked: stored 05, though the tax authority holds it.
		xml := b.issueTo(t, buyerID, "fe-lost")
		mf.before, mf.after = &sandbox.Faults{DropRate: 1}, &sandbox.Faults{Outage: true}
		mf.on.Store(true)
		out, err := b.receive(buyer, receiveJSON(xml, "3", "rcv-lost", map[string]any{"detalleMensaje": "El servicio no fue contratado"}))
		mf.on.Store(false)
		if err != nil {
			t.Fatal(err)
		}
		r := out.Received
		if r.Estado != tenant.StateNotSentYet {
			t.Fatalf("receive with the answer lost: %s", describeReceived(out))
		}
		if _, ok := b.sb.Document(r.Clave + "-" + r.Consecutivo); !ok {
			t.Fatal("the tax authority did not record the message")
		}
		if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
			t.Fatal(err)
		}
		submits := b.sub.submits.Load()
		b.runDueUntil(t, 4, func() bool { return b.receivedRow(t, buyerCo.ID, r.Clave).Estado == tenant.StateAccepted })
		b.acceptedMessage(t, b.receivedRow(t, buyerCo.ID, r.Clave))
		if n := b.sub.submits.Load() - submits; n != 0 {
			t.Errorf("%d submissions of a message the tax authority held", n)
		}
		if st := b.sb.Stats(); st.Duplicates != 0 {
			t.Errorf("%d duplicate submissions", st.Duplicates)
		}
	})

	t.Run("ok/a repeat makes a message stopped on refused credentials due again", func(t *testing.T) {
		xml := b.issueTo(t, buyerID, "fe-creds")
		raw := receiveJSON(xml, "1", "rcv-creds", accept)
		mf.before, mf.after, mf.revoke = &sandbox.Faults{TokenRefusal: 401}, nil, true
		mf.on.Store(true)
		out, err := b.receive(buyer, raw)
		mf.on.Store(false)
		mf.revoke = false
		if err != nil {
			t.Fatal(err)
		}
		r := out.Received
		if !out.Failed || r.Estado != tenant.StateNotSentYet || !r.NextAttemptAt.IsZero() || r.LastError != credentialsMessage {
			t.Fatalf("receive with refused credentials: %s", describeReceived(out))
		}
		// The company's stop paces the worker: at most one login per
		// probe, the probes an hour apart here, as for documents.
		grants := tokenCalls(b.sb.Stats())
		const rounds = 2
		for range rounds {
			b.round(t)
		}
		if got := tokenCalls(b.sb.Stats()) - grants; got < 1 || got > rounds {
			t.Errorf("the worker logged in %d times with refused credentials in %d probes an hour apart, want 1..%d", got, rounds, rounds)
		}
		// Corrected: the same request again makes it due, and the worker
		// sends it, status first.
		if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
			t.Fatal(err)
		}
		again, err := b.receive(buyer, raw)
		if err != nil || again.Received.ID != r.ID || again.Received.Estado != tenant.StateNotSentYet || again.Received.NextAttemptAt.IsZero() {
			t.Fatalf("repeat: %s %v", describeReceived(again), err)
		}
		b.runDueUntil(t, 5, func() bool { return b.receivedRow(t, buyerCo.ID, r.Clave).Estado == tenant.StateAccepted })
		b.acceptedMessage(t, b.receivedRow(t, buyerCo.ID, r.Clave))
		if st := b.sb.Stats(); st.Duplicates != 0 {
			t.Errorf("%d duplicate submissions", st.Duplicates)
		}
	})

	t.Run("ok/a message left 00 by a killed receive is finished with its number and date", func(t *testing.T) {
		xml := b.issueTo(t, buyerID, "fe-killed")
		raw := receiveJSON(xml, "1", "rcv-killed", accept)
		r := b.interruptedReceive(t, buyer, raw, true)

		// While the dead call's hold lasts, a repeat is told to come back.
		_, err := b.receive(buyer, raw)
		var oe *OverloadError
		if !errors.As(err, &oe) {
			t.Fatalf("repeat during the hold: %v, want an *OverloadError", err)
		}
		b.runDueUntil(t, 6, func() bool { return b.receivedRow(t, buyerCo.ID, r.Clave).Estado == tenant.StateAccepted })
		got := b.receivedRow(t, buyerCo.ID, r.Clave)
		b.acceptedMessage(t, got)
		if got.Numero != r.Numero || !got.FechaMensaje.Equal(r.FechaMensaje) || !strings.HasSuffix(got.Consecutivo, fmt.Sprintf("05%010d", r.Numero)) {
			t.Errorf("finished as numero %d consecutivo %s fecha %v; reserved numero %d fecha %v",
				got.Numero, got.Consecutivo, got.FechaMensaje, r.Numero, r.FechaMensaje)
		}
		m, err := hacienda.ParseMensajeReceptor(got.SignedXML)
		if err != nil || m.NumeroConsecutivoReceptor != got.Consecutivo || !m.FechaEmisionDoc.Equal(r.FechaMensaje) ||
			m.Mensaje != 1 || m.CondicionImpuesto != "01" || m.MontoTotalImpuestoAcreditar.String() != "3250.13" {
			t.Errorf("the finished message: %+v %v", m, err)
		}
		// The caller's repeat now gets the settled message.
		again, err := b.receive(buyer, raw)
		if err != nil || again.Failed || again.Received.ID != r.ID || again.Received.Estado != tenant.StateAccepted {
			t.Errorf("repeat after finishing: %s %v", describeReceived(again), err)
		}
	})

	t.Run("ok/a repeat after the hold finishes a message left 00", func(t *testing.T) {
		xml := b.issueTo(t, buyerID, "fe-repeat")
		raw := receiveJSON(xml, "1", "rcv-repeat", accept)
		r := b.interruptedReceive(t, buyer, raw, true)
		b.clock.advance(b.p.o.InFlightGrace + time.Second)
		out, err := b.receive(buyer, raw)
		if err != nil || out.Failed || out.Received.ID != r.ID || out.Received.Numero != r.Numero ||
			(out.Received.Estado != tenant.StateSent && out.Received.Estado != tenant.StateAccepted) {
			t.Fatalf("repeat: %s %v", describeReceived(out), err)
		}
		b.runDueUntil(t, 4, func() bool { return b.receivedRow(t, buyerCo.ID, r.Clave).Estado == tenant.StateAccepted })
		b.acceptedMessage(t, b.receivedRow(t, buyerCo.ID, r.Clave))
	})

	t.Run("ok/a message left 00 without its answer stops with a reason", func(t *testing.T) {
		xml := b.issueTo(t, buyerID, "fe-old")
		r := b.interruptedReceive(t, buyer, receiveJSON(xml, "1", "rcv-old", accept), false)
		b.round(t)
		got := b.receivedRow(t, buyerCo.ID, r.Clave)
		if got.Estado != tenant.StatePending || got.LastError == "" || !got.NextAttemptAt.IsZero() || len(got.SignedXML) != 0 {
			t.Fatalf("stored %s, next %v, reason %q: want 00 with a reason and no next attempt", got.Estado, got.NextAttemptAt, got.LastError)
		}
		b.round(t)
		if again := b.receivedRow(t, buyerCo.ID, r.Clave); !again.UpdatedAt.Equal(got.UpdatedAt) {
			t.Error("a stopped message was worked on again")
		}
	})
}

// interruptedReceive stores what a receive call leaves behind when its
// process dies right after numbering: a 00 row with its number, its date,
// the supplier's document, its tax breakdown and (when keepAnswer) the
// answer it is made from, held by the dead call, without consecutivo or
// XML. It builds the
// row with the receive call's own steps.
func (b *bundle) interruptedReceive(t *testing.T, pr tenant.Principal, raw []byte, keepAnswer bool) tenant.ReceivedDocument {
	t.Helper()
	ctx := context.Background()
	req, err := hacienda.DecodeReceiveRequest(raw)
	if err != nil {
		t.Fatal(err)
	}
	is, err := b.svc.Issuer(ctx, pr.CompanyID, pr.BranchID)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := b.p.supplierDocument(req, is.Company)
	if err != nil {
		t.Fatal(err)
	}
	doc, m := sp.doc, sp.msg
	canon, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canon)
	now := b.clock.now()
	r := tenant.ReceivedDocument{
		CompanyID:        pr.CompanyID,
		BranchID:         pr.BranchID,
		IDExterno:        req.IDExterno,
		RequestHash:      sum[:],
		Clave:            doc.Clave,
		TipoDocumento:    string(doc.Type),
		EmisorTipo:       doc.Emisor.Identificacion.Tipo,
		EmisorNumero:     doc.Emisor.Identificacion.Numero,
		EmisorNombre:     doc.Emisor.Nombre,
		ReceptorTipo:     doc.Receptor.Identificacion.Tipo,
		ReceptorNumero:   doc.Receptor.Identificacion.Numero,
		FechaEmision:     doc.FechaEmision,
		TotalImpuesto:    m.MontoTotalImpuesto.String(),
		TotalComprobante: m.TotalFactura.String(),
		SupplierXML:      req.XML,
		Mensaje:          req.Answer.Mensaje,
		Tipo:             hacienda.ReceptorMessageType(m.Mensaje),
		Terminal:         ReceivedTerminal,
		FechaMensaje:     now.In(hacienda.CostaRica).Truncate(time.Second),
		Submission:       tenant.Submission{Phase: tenant.PhaseFor(tenant.StatePending), Estado: tenant.StatePending, NextAttemptAt: now.Add(b.p.o.InFlightGrace)},
		IVABreakdown:     storedBreakdown(ctx, tenant.ReceivedBreakdown(doc, m), quiet),
	}
	if keepAnswer {
		if r.Request, err = answerRequest(req); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.p.o.Received.ReserveReceived(ctx, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReplicasSettleEachMessageOnce: two pipelines on one store (two
// replicas) work on the same due messages at once, left 05 by an outage or
// 00 by killed calls; the tax authority receives each message exactly
// once, and every one is accepted.
func TestReplicasSettleEachMessageOnce(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) { testReplicasSettleEachMessageOnce(t, sk.open) })
	}
}

func testReplicasSettleEachMessageOnce(t *testing.T, open func(testing.TB) fullStore) {
	b := setup(t, setupOptions{store: open, sandbox: timeless})
	buyerCo, buyer := b.newCompany(t, buyerID)
	mf := &messageFaults{Submitter: b.sub, sb: b.sb, before: &sandbox.Faults{Outage: true}}
	b.p.o.Submitter = mf
	var claves []string
	for i := range 6 {
		xml := b.issueTo(t, buyerID, "fe-replica-"+string(rune('a'+i)))
		raw := receiveJSON(xml, "1", "rcv-replica-"+string(rune('a'+i)), nil)
		if i%3 == 2 {
			claves = append(claves, b.interruptedReceive(t, buyer, raw, true).Clave)
			continue
		}
		mf.on.Store(true)
		out, err := b.receive(buyer, raw)
		mf.on.Store(false)
		if err != nil || out.Received.Estado != tenant.StateNotSentYet {
			t.Fatalf("receive %d: %s %v", i, describeReceived(out), err)
		}
		if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
			t.Fatal(err)
		}
		claves = append(claves, out.Received.Clave)
	}
	before := b.sb.Stats().Submissions

	// A second pipeline on the same store plays another replica.
	p2, err := New(Options{
		Store: b.store, Issuers: b.svc, Signer: b.cache, Submitter: b.sub, Logger: quiet,
		Clock: b.clock.now, DisableRetrier: true, Capacity: Capacity{RetryBatch: 2},
		Timings: Timings{BackoffBase: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond, PollDelay: time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer p2.Stop(context.Background())
	settled := func() bool {
		for _, c := range claves {
			if b.receivedRow(t, buyerCo.ID, c).Estado != tenant.StateAccepted {
				return false
			}
		}
		return true
	}
	for round := 0; !settled(); round++ {
		if round == 8 {
			t.Fatal("not every message settled after 8 rounds of both replicas")
		}
		b.clock.advance(time.Hour)
		var wg sync.WaitGroup
		for _, p := range []*Pipeline{b.p, p2} {
			wg.Go(func() {
				for range 3 {
					if _, err := p.RunDue(context.Background()); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
	}
	for _, c := range claves {
		b.acceptedMessage(t, b.receivedRow(t, buyerCo.ID, c))
	}
	if st := b.sb.Stats(); st.Submissions-before != int64(len(claves)) || st.Duplicates != 0 {
		t.Errorf("the sandbox received %d messages and %d duplicates, for %d messages", st.Submissions-before, st.Duplicates, len(claves))
	}
}

// TestReceivedRetrierOnItsOwn: the running background worker (not RunDue)
// takes messages too, beside documents.
func TestReceivedRetrierOnItsOwn(t *testing.T) {
	b := setup(t, setupOptions{sandbox: timeless, pipeline: func(o *Options) {
		o.DisableRetrier = false
		o.RetryInterval = 5 * time.Millisecond
	}})
	buyerCo, buyer := b.newCompany(t, buyerID)
	mf := &messageFaults{Submitter: b.sub, sb: b.sb, before: &sandbox.Faults{Outage: true}}
	b.p.o.Submitter = mf
	xml := b.issueTo(t, buyerID, "fe-own")
	mf.on.Store(true)
	out, err := b.receive(buyer, receiveJSON(xml, "1", "rcv-own", nil))
	mf.on.Store(false)
	if err != nil || out.Received.Estado != tenant.StateNotSentYet {
		t.Fatalf("receive: %s %v", describeReceived(out), err)
	}
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	// The wait is a safety net, not a timing assertion; the clock moves
	// past each backoff.
	deadline := time.Now().Add(30 * time.Second)
	for b.receivedRow(t, buyerCo.ID, out.Received.Clave).Estado != tenant.StateAccepted {
		if time.Now().After(deadline) {
			t.Fatalf("not settled: %s", describeReceived(receivedOutcome(b.receivedRow(t, buyerCo.ID, out.Received.Clave))))
		}
		b.clock.advance(time.Minute)
		time.Sleep(5 * time.Millisecond)
	}
	b.acceptedMessage(t, b.receivedRow(t, buyerCo.ID, out.Received.Clave))
}

// TestReceivedPolledWithCallbacksOn: with callbacks on, a document waits
// for its callback (its first poll is the slow safety net), but a
// receiver's message, submitted without a callback URL, is polled on the
// usual schedule.
func TestReceivedPolledWithCallbacksOn(t *testing.T) {
	b := setup(t, setupOptions{pipeline: withCallbacks})
	buyerCo, buyer := b.newCompany(t, buyerID)
	xml := b.issueTo(t, buyerID, "fe-callbacks")
	out, err := b.receive(buyer, receiveJSON(xml, "1", "rcv-callbacks", map[string]any{"condicionImpuesto": "01", "montoTotalImpuestoAcreditar": "3250.13"}))
	if err != nil || out.Failed {
		t.Fatalf("receive: %v %s", err, describeReceived(out))
	}
	r := b.receivedRow(t, buyerCo.ID, out.Received.Clave)
	if r.Estado != tenant.StateSent {
		t.Fatalf("message stored %s, want 04", r.Estado)
	}
	if got := r.NextAttemptAt.Sub(r.SubmittedAt); got > b.p.o.PollDelay || got <= 0 {
		t.Errorf("the message's first poll %v after its submission, want the usual %v", got, b.p.o.PollDelay)
	}
	doc := b.mustSend(t, request("01", "doc-callbacks"))
	if d := b.stored(t, doc.Document.Clave); !callbackLate(b.p, d.NextAttemptAt.Sub(d.SubmittedAt)) {
		t.Errorf("the document's first poll %v after its submission, want two thirds to all of CallbackWait %v", d.NextAttemptAt.Sub(d.SubmittedAt), b.p.o.CallbackWait)
	}
}
