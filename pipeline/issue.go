package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/msg"
	"facturad/signer"
	"facturad/tenant"
)

// Issuing, for both kinds: a numbered row with its XML built is signed
// with its company's certificate, stored before it is submitted (C.3),
// submitted, and what the submission means is stored. Send (a document)
// and Receive (a message), their repeats and the background worker
// finishing an interrupted one all go through signAndSubmit.

// signAndSubmit signs unsigned, the row's XML, with the company's
// certificate (unless it is known to be expired or missing: the row is
// then stopped), stores it held for InFlightGrace, submits it and stores
// what the submission means. fault names the steps a crash test may stop
// at (nil: none). It returns what the call answers with the row (the
// caller sets its Estado). An error is a failure the call answers as one (a row
// another call took up meanwhile is an *OverloadError).
func (p *Pipeline) signAndSubmit(ctx context.Context, is tenant.Issuer, w row, unsigned []byte, log *slog.Logger, fault func(string)) (Answer, error) {
	if fault == nil {
		fault = func(string) {}
	}
	if is.Company.CertificateExpired(p.o.Clock()) {
		return p.expired(ctx, w, is.Company.CertificateExpiry), nil
	}
	start := time.Now()
	release, err := p.turns.acquire(ctx, is.Branch.ID)
	p.metrics.observe(stageTurn, start)
	if err != nil {
		// The caller left or the pipeline is stopping: the row stays as
		// stored. A fresh one is held until its lease ends and the
		// background worker finishes it then; one resumed after being
		// stopped waits, as before, for its request to be sent again.
		return Answer{}, err
	}
	start = time.Now()
	signed, err := p.o.Signer.Sign(ctx, is.Company.ID, unsigned, signer.WithCanonicalInput())
	release()
	p.metrics.observe(stageSign, start)
	switch {
	case errors.Is(err, signer.ErrCertificateExpired):
		return p.expired(ctx, w, is.Company.CertificateExpiry), nil
	case errors.Is(err, tenant.ErrNotFound):
		return p.expired(ctx, w, time.Time{}), nil
	case err != nil:
		p.stop(ctx, w, "the "+w.what()+" could not be signed")
		return Answer{}, fmt.Errorf("sign the %s: %w", w.what(), err)
	}
	fault(FaultSigned)

	// Store before submitting (C.3), held for InFlightGrace: should this
	// process die, the background worker takes it up after that, status
	// first.
	w.SignedXML = signed
	if err := move(w.Submission, tHeld, held, "", p.o.Clock().Add(p.o.InFlightGrace)); err != nil {
		return Answer{}, err
	}
	start = time.Now()
	err = p.store(ctx, w, true)
	p.metrics.observe(stageStore, start)
	if errors.Is(err, errLost) {
		// Another call (a repeat, the background worker) took the row up
		// and stored it first: that one submits it, not this one.
		log.InfoContext(ctx, "the "+w.what()+" was taken up by another call; not submitted")
		return Answer{}, p.inProgress(w)
	}
	if err != nil {
		return Answer{}, fmt.Errorf("store the signed %s: %w", w.what(), err)
	}
	fault(FaultStored)

	// The company was read for this call: its credentials are opened from
	// it rather than read again.
	sctx, cancel := context.WithTimeout(ctx, p.o.SubmitTimeout)
	defer cancel()
	deadline := p.o.Clock().Add(p.o.SubmitTimeout)
	creds, err := p.credentialsOf(is.Company)
	if err == nil {
		err = p.submit(sctx, creds, w)
	}
	if err == nil {
		fault(FaultSubmitted)
	} else {
		log.WarnContext(ctx, "submission failed", "err", err)
	}
	return p.recordSubmission(ctx, w, err, deadline, log)
}

// recordSubmission settles what a submission's result serr means
// (afterSubmit) and stores it. When the tax authority has the row (this
// submission, or its answer to the status asked), its word is the answer
// even should the store refuse it: the background worker, which asks the
// status before anything else, learns of it. When it has not and someone
// else moved the row meanwhile, the stored state is the answer.
func (p *Pipeline) recordSubmission(ctx context.Context, w row, serr error, deadline time.Time, log *slog.Logger) (Answer, error) {
	v, heard, err := p.afterSubmit(ctx, w, serr, deadline)
	if err != nil {
		return Answer{}, err
	}
	err = p.store(ctx, w, false)
	switch {
	case err == nil:
	case heard:
		level := slog.LevelError
		if errors.Is(err, errLost) {
			level = slog.LevelInfo
		}
		log.Log(ctx, level, "could not store the tax authority's word; the background worker settles it", "err", err)
	case errors.Is(err, errLost):
		log.InfoContext(ctx, "the "+w.what()+" changed meanwhile; answering its stored state")
		if err := p.fresh(ctx, w, true); err != nil {
			return Answer{}, err
		}
		return Answer{}, nil
	default:
		return Answer{}, fmt.Errorf("store a %s after its submission: %w", w.what(), err)
	}
	if heard {
		return Answer{}, nil
	}
	return Answer{Failed: true, Key: KeySendingDocumentError, Message: v.Message}, nil
}

// stop keeps a numbered row that cannot go on stopped (00) with the
// reason and no next attempt, so that its number is kept and a repeat of
// its request resumes it.
func (p *Pipeline) stop(ctx context.Context, w row, reason string) {
	log := w.logger(p.log)
	if err := move(w.Submission, tStopped, stopped, reason, time.Time{}); err != nil {
		log.ErrorContext(ctx, "could not stop a "+w.what(), "err", err)
		return
	}
	err := p.store(ctx, w, false)
	switch {
	case errors.Is(err, errLost):
		// Another call resumed the row meanwhile: its state stands.
		log.InfoContext(ctx, "a stopped "+w.what()+" changed meanwhile; not stored again", "reason", reason)
	case err != nil:
		log.ErrorContext(ctx, "could not store a stopped "+w.what(), "err", err)
	}
}

// expired stops a row that cannot be signed because the company's
// certificate is expired (at expiry) or missing (zero expiry): numbered,
// nothing submitted; the call answers ExpiredClientCertificate.
func (p *Pipeline) expired(ctx context.Context, w row, expiry time.Time) Answer {
	then := "send the document again."
	if w.rec != nil {
		then = "The message keeps its number but was not sent."
	}
	msg := "The company has no signing certificate; upload one (Certificado) and " + then
	if w.rec != nil {
		msg = "The company has no signing certificate; upload one (Certificado). " + then
	}
	if !expiry.IsZero() {
		msg = fmt.Sprintf("The company's signing certificate expired on %s; upload a new one (Certificado) and %s",
			expiry.In(hacienda.CostaRica).Format(time.DateOnly), then)
		if w.rec != nil {
			msg = fmt.Sprintf("The company's signing certificate expired on %s; upload a new one (Certificado). %s",
				expiry.In(hacienda.CostaRica).Format(time.DateOnly), then)
		}
	}
	p.stop(ctx, w, msg)
	w.logger(p.log).InfoContext(ctx, w.what()+" stopped: certificate expired or missing")
	return Answer{Failed: true, Key: KeyExpiredClientCertificate, Message: msg}
}

// inProgress is the answer to a call whose row another call is working
// on.
func (p *Pipeline) inProgress(w row) error {
	p.metrics.refused.WithLabelValues("in_progress").Inc()
	return &OverloadError{
		Reason: msg.InProgress.With(w.whatPart()),
		After:  p.o.OverloadRetryAfter,
	}
}
