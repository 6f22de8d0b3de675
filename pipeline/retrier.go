package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"facturad/hacienda/recepcion"
	"facturad/tenant"
)

// runRetrier is the background worker: every RetryInterval it claims the
// documents that are due and works on them, until Stop.
func (p *Pipeline) runRetrier() {
	defer close(p.retrierDone)
	t := time.NewTicker(p.o.RetryInterval)
	defer t.Stop()
	for {
		n, err := p.RunDue(p.runCtx)
		if err != nil && p.runCtx.Err() == nil {
			p.log.Warn("background worker: claim due documents", "err", err)
		}
		if n == p.claimLimit() && err == nil {
			// A full batch: there may be more due right now.
			select {
			case <-p.retrierStop:
				return
			default:
				continue
			}
		}
		select {
		case <-p.retrierStop:
			return
		case <-t.C:
		}
	}
}

// claimLimit is how many documents one round claims: no more than it works
// on at once (RetryWorkers), so that every claimed document starts at once
// and is done (2×SubmitTimeout + StoreTimeout at most, which Lease exceeds)
// before its lease ends and another replica may claim it.
func (p *Pipeline) claimLimit() int { return min(p.o.RetryBatch, p.o.RetryWorkers) }

// RunDue claims up to claimLimit documents that are due (05 to resubmit, 04
// to settle) and works on all of them at once. It returns how many it
// claimed. The store's claim leases them (Options.Lease) so that several
// replicas running it at once never work on the same document; should a
// lease run out all the same, the store refuses the stale result (see
// retry). The background worker calls it; tests may call it directly.
func (p *Pipeline) RunDue(ctx context.Context) (int, error) {
	now := p.o.Clock()
	docs, err := p.o.Store.ClaimDueDocuments(ctx, now, now.Add(p.o.Lease), p.claimLimit())
	if err != nil {
		return 0, fmt.Errorf("claim due documents: %w", err)
	}
	var wg sync.WaitGroup
	for i := range docs {
		wg.Add(1)
		go func(d *tenant.Document) {
			defer wg.Done()
			p.retry(ctx, d)
		}(&docs[i])
	}
	wg.Wait()
	return len(docs), nil
}

// retry works on one claimed document. The rule that keeps a document from
// being sent twice: a 05 document is submitted only after the tax authority
// said it does not know its clave. A stored 05 cannot tell whether an
// earlier attempt reached the tax authority (an answer cut after sending, a
// crash between storing and submitting), so the status comes first every
// time.
func (p *Pipeline) retry(ctx context.Context, d *tenant.Document) {
	log := p.log.With("company", d.CompanyID, "branch", d.BranchID, "clave", d.Clave)
	ctx, cancel := context.WithTimeout(ctx, 2*p.o.SubmitTimeout)
	defer cancel()
	defer func() {
		err := p.save(ctx, d)
		if errors.Is(err, tenant.ErrConflict) {
			// Someone else (a check call, another replica after the lease
			// ran out) stored the document meanwhile: their result stands
			// and this one is dropped. Nothing is lost: a 05 is asked about
			// before it is submitted again, so the next attempt learns what
			// this one did.
			log.Info("background worker: the document changed meanwhile; result dropped", "estado", string(d.Estado))
			return
		}
		if err != nil {
			log.Error("background worker: store a document", "err", err)
			return
		}
		p.metrics.outcomes.WithLabelValues(opRetry, string(d.Estado)).Inc()
	}()

	if len(d.SignedXML) == 0 || d.Clave == "" {
		// Nothing to submit (the claim's rule should not have picked it).
		d.NextAttemptAt = time.Time{}
		return
	}
	d.Attempts++
	known, err := p.askStatus(ctx, d)
	if err != nil && credentialsFailure(err) {
		// Every login with refused credentials counts against the
		// taxpayer's account: stop until the company corrects them and the
		// request is sent again.
		d.NextAttemptAt, d.LastError = time.Time{}, credentialsMessage
		log.Warn("background worker: tax-authority credentials missing or refused; not retried", "err", err)
		return
	}
	if err != nil {
		p.attemptFailed(d, err, "the tax authority could not be asked for the document's state")
		log.Info("background worker: status failed", "err", err, "attempts", d.Attempts)
		return
	}
	if known {
		switch {
		case d.Estado != tenant.StateSent:
			log.Info("background worker: document settled", "estado", string(d.Estado))
		case !d.SubmittedAt.IsZero() && p.o.Clock().Sub(d.SubmittedAt) > p.o.PollFor:
			d.NextAttemptAt = time.Time{}
			d.LastError = "The tax authority has given no verdict since " +
				d.SubmittedAt.In(crTime).Format("2006-01-02 15:04") + "; it is no longer asked automatically. Check the document to ask again."
			log.Warn("background worker: no verdict; giving up polling", "submitted_at", d.SubmittedAt)
		}
		return
	}
	// The tax authority does not know the clave: (re)submit it.
	err = p.submit(ctx, d)
	if err == nil {
		p.markSubmitted(d)
		log.Info("background worker: document submitted")
		return
	}
	v := classifySubmit(err)
	if !v.Retry {
		// A refusal may be "already received" (an earlier attempt's answer
		// was lost after the status above): as the send call does, the tax
		// authority's word on the clave decides before 03 is set for good.
		if v.Estado != tenant.StateError {
			// Credentials missing or refused: asking would fail the same.
			d.Estado, d.LastError, d.NextAttemptAt = v.Estado, v.Message, time.Time{}
			log.Warn("background worker: tax-authority credentials missing or refused; not retried", "err", err)
			return
		}
		if known, serr := p.askStatus(ctx, d); serr == nil && known {
			log.Info("background worker: refused, but the tax authority holds the document", "estado", string(d.Estado), "err", err)
			return
		}
		d.Estado, d.LastError, d.NextAttemptAt = v.Estado, v.Message, time.Time{}
		log.Warn("background worker: the tax authority refused the document", "err", err)
		return
	}
	d.Estado = tenant.StateNotSentYet
	p.attemptFailed(d, err, v.Message)
	log.Info("background worker: submission failed", "err", err, "attempts", d.Attempts)
}

// attemptFailed schedules the next attempt with exponential backoff and
// jitter, never sooner than a Retry-After the tax authority asked for. A
// 04 document stays 04: only its answer could not be had.
func (p *Pipeline) attemptFailed(d *tenant.Document, err error, msg string) {
	if d.Estado == tenant.StateNotSentYet {
		d.LastError = msg
	}
	wait := backoff(p.o.BackoffBase, p.o.BackoffMax, d.Attempts-1, recepcion.RetryAfterOf(err))
	d.NextAttemptAt = p.o.Clock().Add(wait)
}
