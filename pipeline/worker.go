package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/tenant"
)

// runRetrier is the background worker, until Stop: it keeps up to
// RetryWorkers documents in work. Whenever workers are free it claims as
// many due documents as are free (at most RetryBatch at once) and starts
// each at once; it claims again as soon as a claim came back full, or
// every RetryInterval otherwise. A slow document holds only its own worker,
// never the next claim.
func (p *Pipeline) runRetrier() {
	defer close(p.retrierDone)
	var wg sync.WaitGroup
	defer wg.Wait()
	free := make(chan struct{}, p.o.RetryWorkers) // a token per free worker
	for range p.o.RetryWorkers {
		free <- struct{}{}
	}
	t := time.NewTicker(p.o.RetryInterval)
	defer t.Stop()
	for {
		// Wait for one free worker, then take every other free one.
		select {
		case <-p.retrierStop:
			return
		case <-free:
		}
		n := 1
		for n < p.o.RetryBatch && len(free) > 0 {
			<-free
			n++
		}
		select {
		case <-p.retrierStop: // Stop comes before another claim
			return
		default:
		}
		claimed, err := p.startDue(p.runCtx, n, free, &wg)
		for range n - claimed {
			free <- struct{}{}
		}
		wait := t.C
		switch {
		case err != nil && p.runCtx.Err() == nil:
			// The store is failing: look again in a second, not at every
			// tick, and warn as often.
			p.log.Warn("background worker: claim due documents", "err", err)
			wait = time.After(claimRetry)
		case claimed == n && err == nil:
			continue // a full claim: there may be more due right now
		}
		select {
		case <-p.retrierStop:
			return
		case <-wait:
		}
	}
}

// claimRetry is how long the background worker waits after a claim the
// store refused.
const claimRetry = time.Second

// startDue claims up to n due rows, documents and receivers' messages
// alike, and starts each on a worker of its own, which gives its token
// back to free when done. The kind claimed first alternates from one claim
// to the next, the other taking what is left of n, so that neither kind
// waits while the other keeps every worker busy.
func (p *Pipeline) startDue(ctx context.Context, n int, free chan<- struct{}, wg *sync.WaitGroup) (int, error) {
	p.probeCredentials(ctx, false)
	now := p.o.Clock()
	lease := now.Add(p.o.Lease)
	start := func(w row) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { free <- struct{}{} }()
			p.retry(ctx, w)
		}()
	}
	claimDocuments := func(n int) (int, error) {
		docs, err := p.o.Store.ClaimDueDocuments(ctx, now, lease, n)
		if err != nil {
			return 0, fmt.Errorf("claim due documents: %w", err)
		}
		for i := range docs {
			start(docRow(&docs[i]))
		}
		return len(docs), nil
	}
	claimReceived := func(n int) (int, error) {
		if p.o.Received == nil || n < 1 {
			return 0, nil
		}
		rs, err := p.o.Received.ClaimDueReceived(ctx, now, lease, n)
		if err != nil {
			return 0, fmt.Errorf("claim due messages: %w", err)
		}
		for i := range rs {
			start(recRow(&rs[i]))
		}
		return len(rs), nil
	}
	first, second := claimDocuments, claimReceived
	if p.receivedFirst.Add(1)%2 == 0 {
		first, second = claimReceived, claimDocuments
	}
	got, err := first(n)
	if n-got < 1 {
		return got, err
	}
	more, err2 := second(n - got)
	return got + more, errors.Join(err, err2)
}

// claimLimit is how many documents RunDue claims: no more than the
// background worker works on at once (RetryWorkers), so that every claimed
// document starts at once and is done (2×SubmitTimeout + StoreTimeout at
// most, which Lease exceeds) before its lease ends and another replica may
// claim it.
func (p *Pipeline) claimLimit() int { return min(p.o.RetryBatch, p.o.RetryWorkers) }

// RunDue claims up to claimLimit rows that are due, documents and
// receivers' messages alike (00 to finish, 05 to resubmit, 04 to settle),
// works on all of them at once and returns how many it claimed, once they
// are done. The store's claim leases them
// (Options.Lease) so that several replicas claiming at once never work on
// the same document; should a lease run out all the same, the store
// refuses the stale result (see retry). Tests call it directly; the
// background worker claims the same way, a worker at a time.
func (p *Pipeline) RunDue(ctx context.Context) (int, error) {
	p.probeCredentials(ctx, true)
	var wg sync.WaitGroup
	n, err := p.startDue(ctx, p.claimLimit(), make(chan struct{}, p.claimLimit()), &wg)
	wg.Wait()
	return n, err
}

// retry works on one claimed row: a 00 is finished (finish,
// finishReceived), a 04 or 05 settled (settle) and its result stored.
func (p *Pipeline) retry(ctx context.Context, w row) {
	log := w.logger(p.log)
	ctx, cancel := context.WithTimeout(ctx, 2*p.o.SubmitTimeout)
	defer cancel()
	if w.Estado == tenant.StatePending {
		// Numbered, but its call died before the signed XML was stored:
		// finish it (it stores itself).
		if w.doc != nil {
			p.finish(ctx, w.doc, log.With("id_externo", w.doc.IDExterno, "numero", w.doc.Numero))
			return
		}
		out, err := p.finishReceived(ctx, w.rec, log.With("id_externo", w.rec.IDExterno, "numero", w.rec.Numero))
		switch {
		case err != nil:
			log.Warn("background worker: finish an interrupted message", "err", err)
		default:
			p.metrics.outcomes.WithLabelValues(opRetry, string(out.Received.Estado)).Inc()
			log.Info("background worker: interrupted message finished", "estado", string(out.Received.Estado))
		}
		return
	}
	p.settle(ctx, w, log)
	err := p.store(ctx, w, false)
	if errors.Is(err, errLost) {
		// Someone else (a check call, another replica after the lease ran
		// out) moved the row meanwhile: their result stands and this one
		// is dropped. Nothing is lost: a 05 is asked about before it is
		// submitted again, so the next attempt learns what this one did.
		log.Info("background worker: the "+w.what()+" changed meanwhile; result dropped", "estado", string(w.Estado))
		return
	}
	if err != nil {
		log.Error("background worker: store a "+w.what(), "err", err)
		return
	}
	p.metrics.outcomes.WithLabelValues(opRetry, string(w.Estado)).Inc()
}

// settle is the background worker's attempt on a submitted or not yet
// submitted row (04 or 05), recorded in w for the caller to store. The
// rule that keeps a row from being sent twice: a 05 row is submitted only
// after the tax authority said it does not know its key. A stored 05
// cannot tell whether an earlier attempt reached the tax authority (an
// answer cut after sending, a crash between storing and submitting), so
// the status comes first every time.
func (p *Pipeline) settle(ctx context.Context, w row, log *slog.Logger) {
	if len(w.SignedXML) == 0 {
		// Nothing to submit (the claim's rule should not have picked it).
		p.workerMove(w, tAskFailed, waitingPhase(w.Phase), w.LastError, time.Time{})
		return
	}
	w.Attempts++
	probe := w.Phase == credentials
	known, err := p.askStatus(ctx, w)
	if err != nil && recepcion.Judge(err).Kind == recepcion.BadCredentials {
		// Every login with refused credentials counts against the
		// taxpayer's account: stop, and let the company's stop pace the
		// next try (credstop.go).
		to := credentials
		if w.Phase == submitted {
			to = submitted
		}
		p.workerMove(w, tAskFailed, to, credentialsMessage, time.Time{})
		p.stopOnCredentials(ctx, w.companyID())
		log.Warn("background worker: tax-authority credentials missing or refused; tried again later", "err", err)
		return
	}
	if err == nil && probe {
		// A row stopped on its company's credentials got an answer: they
		// work again, and so may the company's other stopped ones.
		p.resumeCompany(ctx, w.companyID(), "background worker")
	}
	if err != nil {
		p.attemptFailed(w, err, "the tax authority could not be asked for the "+w.what()+"'s state")
		log.Info("background worker: status failed", "err", err, "attempts", w.Attempts)
		return
	}
	if known {
		switch {
		case w.Phase != submitted:
			log.Info("background worker: "+w.what()+" settled", "estado", string(w.Estado))
		case !w.SubmittedAt.IsZero() && p.o.Clock().Sub(w.SubmittedAt) > p.o.PollFor:
			p.workerMove(w, tAskFailed, submitted, "The tax authority has given no verdict since "+
				w.SubmittedAt.In(hacienda.CostaRica).Format("2006-01-02 15:04")+"; it is no longer asked automatically. Check the document to ask again.", time.Time{})
			log.Warn("background worker: no verdict; giving up polling", "submitted_at", w.SubmittedAt)
		}
		return
	}
	// The tax authority does not know the key: (re)submit it. A 04 it no
	// longer knows (a wiped sandbox) is 05 again first.
	if w.Phase == submitted && !p.workerMove(w, tUnknown, retrying, "The tax authority does not know this "+w.what()+"; it is sent again.", w.NextAttemptAt) {
		return
	}
	deadline, _ := ctx.Deadline()
	creds, serr := p.credentials(ctx, w.companyID())
	if serr == nil {
		serr = p.submit(ctx, creds, w)
	}
	v, heard, err := p.afterSubmit(ctx, w, serr, deadline)
	switch {
	case err != nil:
		log.Error("background worker: record a submission", "err", err)
	case serr == nil:
		log.Info("background worker: " + w.what() + " submitted")
	case heard:
		log.Info("background worker: the submission failed, but the tax authority holds the "+w.what(), "estado", string(w.Estado), "err", serr)
	case v.Phase == refused:
		log.Warn("background worker: the tax authority refused the "+w.what(), "err", serr)
	case !v.Retry:
		log.Warn("background worker: tax-authority credentials missing or refused; tried again later", "err", serr)
	default:
		log.Info("background worker: submission failed", "err", serr, "attempts", w.Attempts)
	}
}

// waitingPhase is the phase a row in phase ph waits in after a failed
// attempt: its own, but a held row, which no call holds any longer, is
// retried.
func waitingPhase(ph tenant.Phase) tenant.Phase {
	if ph == held {
		return retrying
	}
	return ph
}

// retryLater keeps a numbered row whose issuer could not be read now, to
// be finished after a backoff.
func (p *Pipeline) retryLater(ctx context.Context, w row, log *slog.Logger) {
	if !p.workerMove(w, tRetryLater, numbered, w.LastError, p.o.Clock().Add(backoff(p.o.BackoffBase, p.o.BackoffMax, w.Attempts, 0))) {
		return
	}
	w.Attempts++
	if err := p.store(ctx, w, false); err != nil && !errors.Is(err, errLost) {
		log.Error("background worker: store a "+w.what(), "err", err)
	}
}

// finish completes a document whose send call died after numbering it and
// before storing it signed (a crash, a kill): it is built again from the
// request stored with it, with its number and issue time, signed, stored
// and submitted, exactly as the send call would have. A document that
// cannot be finished stops in 00 with the reason, shown when it is read;
// sending the same request again (same id_externo) resumes it.
func (p *Pipeline) finish(ctx context.Context, d *tenant.Document, log *slog.Logger) {
	stop := func(reason string) {
		p.stop(ctx, docRow(d), reason)
		p.metrics.outcomes.WithLabelValues(opRetry, string(d.Estado)).Inc()
		log.Warn("background worker: an interrupted document could not be finished", "reason", reason)
	}
	if len(d.Request) == 0 || len(d.SignedXML) > 0 {
		// Stored without its request, or signed yet still 00 (the send
		// writes neither): nothing safe to build it from.
		stop("The sending of this document was interrupted and it cannot be finished from what was stored; send the same request again (same id_externo) to finish it.")
		return
	}
	req, err := hacienda.DecodeStoredSendRequest(d.Request)
	if err != nil {
		stop("The sending of this document was interrupted and its stored request could not be read again; send the same request again (same id_externo) to finish it.")
		return
	}
	is, err := p.o.Issuers.Issuer(ctx, d.CompanyID, d.BranchID)
	if err != nil {
		// The company or branch could not be read now: try again later.
		p.retryLater(ctx, docRow(d), log)
		log.Warn("background worker: read the issuer of an interrupted document", "err", err)
		return
	}
	j := &job{p: p, req: req, canon: d.Request, hash: d.RequestHash, is: is,
		pr:  tenant.Principal{Role: tenant.RoleBranch, CompanyID: d.CompanyID, BranchID: d.BranchID},
		log: log}
	if err := sendable(is.Company); err != nil {
		stop("The document was numbered but cannot be sent: " + err.Error())
		return
	}
	if req, err = j.withRate(ctx, req, true, d.FechaEmision); err != nil {
		// The exchange rate it was sent without cannot be had now: the
		// registry may answer later.
		p.retryLater(ctx, docRow(d), log)
		log.Warn("background worker: no exchange rate for an interrupted document", "err", err)
		return
	}
	doc, err := hacienda.NewDocument(req, issuerParty(is, p.o.ProveedorSistemas))
	if err != nil {
		stop("The document was numbered but no longer validates against its company's data (" + err.Error() + "); correct them and send the same request again.")
		return
	}
	nd, err := j.number(ctx, doc, d)
	if err != nil {
		stop("The document was numbered but its clave could not be built: " + err.Error())
		return
	}
	out, err := j.issue(ctx, doc, nd)
	switch {
	case err != nil:
		log.Warn("background worker: finish an interrupted document", "err", err)
	default:
		p.metrics.outcomes.WithLabelValues(opRetry, string(out.Document.Estado)).Inc()
		log.Info("background worker: interrupted document finished", "estado", string(out.Document.Estado))
	}
}
