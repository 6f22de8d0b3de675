package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/tenant"
)

// Document returns a stored document the principal may see, without asking
// the tax authority. A clave that is malformed, unknown or another tenant's
// is tenant.ErrNotFound.
func (p *Pipeline) Document(ctx context.Context, pr tenant.Principal, clave string) (tenant.Document, error) {
	clave = strings.TrimSpace(clave)
	if _, err := hacienda.ParseClave(clave); err != nil {
		// Not a clave at all: no document has it.
		return tenant.Document{}, fmt.Errorf("document %q: %w", clave, tenant.ErrNotFound)
	}
	d, err := p.o.Store.DocumentByClave(ctx, clave)
	if err != nil {
		return tenant.Document{}, fmt.Errorf("document %s: %w", clave, err)
	}
	if err := p.o.Issuers.AuthorizeDocument(ctx, pr, d.CompanyID); err != nil {
		if errors.Is(err, tenant.ErrNotFound) {
			return tenant.Document{}, fmt.Errorf("document %s: %w", clave, tenant.ErrNotFound)
		}
		return tenant.Document{}, fmt.Errorf("document %s: authorize: %w", clave, err)
	}
	if !mayOwe(d) {
		// No balance to show: no read of the claims (the check route,
		// which clients poll, reads the document this way).
		return d, nil
	}
	docs := []tenant.Document{d}
	p.withBalances(ctx, docs)
	return docs[0], nil
}

// Check runs the check call (A.5): it asks the tax authority about the
// document, stores the answer (state, Mensaje code, message, detail lines,
// answer XML, when it was asked) and returns it; see check.
func (p *Pipeline) Check(ctx context.Context, pr tenant.Principal, clave string) (Outcome, error) {
	if err := p.running(); err != nil {
		return Outcome{}, err
	}
	d, err := p.Document(ctx, pr, clave)
	if err != nil {
		return Outcome{}, err
	}
	res, err := p.check(ctx, opCheck, docRow(&d))
	if err != nil {
		return Outcome{}, err
	}
	res.Estado = d.Estado
	return Outcome{Document: d, Answer: res}, nil
}

// CheckReceived runs the check call of a received document (A.11): check
// for the company's message about it.
func (p *Pipeline) CheckReceived(ctx context.Context, pr tenant.Principal, clave string) (ReceivedOutcome, error) {
	if err := p.running(); err != nil {
		return ReceivedOutcome{}, err
	}
	r, err := p.Received(ctx, pr, clave)
	if err != nil {
		return ReceivedOutcome{}, err
	}
	res, err := p.check(ctx, opCheck, recRow(&r))
	if err != nil {
		return ReceivedOutcome{}, err
	}
	res.Estado = r.Estado
	return ReceivedOutcome{Received: r, Answer: res}, nil
}

// check asks the tax authority about w and stores its answer: the check
// call's work once the caller may see w, and a callback's; op names which
// in the outcome metric. It always logs in afresh when the company's
// credentials were refused (a caller is asking); a login that works
// resumes the company's rows stopped on them. A row numbered but never
// signed (00) has nothing to ask about and is answered as stored.
//
// When the tax authority's answer cannot be had or read, the row is left
// as it was and answered with its stored estado: failed (500) when that is
// 05, as the contract pairs them; 200 with the stored 00 or 04 and a
// message saying the tax authority could not be asked; and a stored
// verdict with a message saying it is the one given before. A row the tax
// authority does not know is submitted again by the background worker
// (made due now) when it took it once (04) or when it was stopped on the
// company's credentials, which just worked.
func (p *Pipeline) check(ctx context.Context, op string, w row) (Answer, error) {
	ctx, cancel := p.workCtx(ctx)
	defer cancel()
	log := w.logger(p.log)
	if w.Estado == tenant.StatePending {
		// Numbered, never submitted: nothing to ask about.
		p.metrics.outcomes.WithLabelValues(op, string(w.Estado)).Inc()
		return Answer{Message: w.LastError}, nil
	}

	sctx, scancel := context.WithTimeout(ctx, p.o.SubmitTimeout)
	st, known, err := p.statusOf(sctx, w.subject(), op == opCheck)
	scancel()
	if err == nil {
		// The company's credentials work: its rows stopped on them go on
		// at once.
		p.resumeCompany(ctx, w.companyID(), op)
	}
	var res Answer
	switch {
	case err != nil && w.Phase.Final():
		// Its verdict is stored already: answer it, not 05 (a caller
		// reading 05 may send the document again), and say that the tax
		// authority could not be asked this time.
		log.WarnContext(ctx, "check: the tax authority's answer could not be had; answering the stored verdict", "err", err)
		res.Message = "The tax authority could not be asked this time (" + unreadableReason(err) + "); this is the verdict it gave before."
	case err != nil:
		// The stored estado is the answer, with the status the contract
		// gives it: 05 is the failed check's 500, a 00 or 04 stays a 200.
		log.WarnContext(ctx, "check: the tax authority's answer could not be had", "err", err)
		res.Failed = w.Estado == tenant.StateNotSentYet
		res.Message = "The tax authority's answer could not be read (" + unreadableReason(err) + "); the " + w.what() + "'s stored state is unchanged. Check again later."
		if recepcion.Judge(err).Kind == recepcion.BadCredentials {
			res.Message = credentialsMessage
		}
	case known:
		// A settled row's verdict stands (applyStatus leaves it alone), so
		// there is nothing to store: a save would only write back what was
		// read, and for an archived row read from the archive (A.15) that
		// is the parts the store dropped.
		if !w.Phase.Final() {
			if err := p.record(ctx, w, true, func() { p.applyStatus(ctx, w, st) }); err != nil {
				return Answer{}, fmt.Errorf("store the tax authority's answer: %w", err)
			}
		}
		if st.Estado == recepcion.EstadoError {
			res.Message = w.LastError
		}
	default:
		if err := p.unknown(ctx, w); err != nil {
			return Answer{}, err
		}
		res.Message = w.LastError
		if res.Message == "" {
			res.Message = "The tax authority has not received this " + w.what() + " yet."
		}
	}
	p.metrics.outcomes.WithLabelValues(op, string(w.Estado)).Inc()
	return res, nil
}

// unknown records that the tax authority does not know w, as a check
// found: a row it took once (its sandbox is wiped now and then) is made
// due to be submitted again, and so is one stopped on its company's
// credentials (the login just worked). Anything else is left as it is: a
// call or the background worker may be working on it right now. A lost
// race leaves w as stored now.
func (p *Pipeline) unknown(ctx context.Context, w row) error {
	now := p.o.Clock()
	var err error
	switch {
	case w.Phase == submitted:
		err = move(w.Submission, tUnknown, retrying, "The tax authority does not know this "+w.what()+"; it will be sent again.", now)
	case w.StoppedOnCredentials() && len(w.SignedXML) > 0:
		err = move(w.Submission, tRescheduled, credentials, "The tax authority does not know this "+w.what()+"; it will be sent again shortly.", now)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	err = p.store(ctx, w, false)
	if errors.Is(err, errLost) {
		return p.fresh(ctx, w, true)
	}
	if err != nil {
		return fmt.Errorf("store the tax authority's answer: %w", err)
	}
	return nil
}

// unreadableReason says in a few words why the tax authority's answer
// could not be had, without secrets.
func unreadableReason(err error) string {
	return recepcion.Judge(err).Reason
}
