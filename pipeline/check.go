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
	if err := p.o.Issuers.AuthorizeDocument(ctx, pr, d.CompanyID, d.BranchID); err != nil {
		if errors.Is(err, tenant.ErrNotFound) {
			return tenant.Document{}, fmt.Errorf("document %s: %w", clave, tenant.ErrNotFound)
		}
		return tenant.Document{}, fmt.Errorf("document %s: authorize: %w", clave, err)
	}
	return d, nil
}

// Check runs the check call (A.5): it asks the tax authority about the
// document, stores the answer (state, Mensaje code, message, detail lines,
// answer XML, when it was asked) and returns it. It always logs in afresh
// when the company's credentials were refused (a caller is asking); a login
// that works resumes the company's documents stopped on them. When the tax
// authority's answer cannot be had or read, the stored document is left as
// it was and answered with its stored estado: Failed (500) when that is 05,
// as the contract pairs them; 200 with the stored 00 or 04 and a message
// saying the tax authority could not be asked.
func (p *Pipeline) Check(ctx context.Context, pr tenant.Principal, clave string) (Outcome, error) {
	if err := p.running(); err != nil {
		return Outcome{}, err
	}
	d, err := p.Document(ctx, pr, clave)
	if err != nil {
		return Outcome{}, err
	}
	return p.check(ctx, opCheck, d)
}

// check asks the tax authority about d and stores its answer: the check
// call's work once the caller may see d, and a callback's; op names which
// in the outcome metric.
func (p *Pipeline) check(ctx context.Context, op string, d tenant.Document) (Outcome, error) {
	ctx, cancel := p.workCtx(ctx)
	defer cancel()
	log := p.log.With("company", d.CompanyID, "branch", d.BranchID, "clave", d.Clave)

	sctx, scancel := context.WithTimeout(ctx, p.o.SubmitTimeout)
	st, known, err := p.statusAs(sctx, &d, op == opCheck)
	scancel()
	if err == nil {
		// The company's credentials work: its documents stopped on them
		// go on at once.
		p.resumeCompany(ctx, d.CompanyID, op)
	}
	if err != nil && d.Estado.Final() {
		// Its verdict is stored already: answer it, not 05 (a caller
		// reading 05 may send the document again), and say that the tax
		// authority could not be asked this time.
		log.WarnContext(ctx, "check: the tax authority's answer could not be had; answering the stored verdict", "err", err)
		p.metrics.outcomes.WithLabelValues(op, string(d.Estado)).Inc()
		return Outcome{
			Document: d,
			Estado:   d.Estado,
			Message:  "The tax authority could not be asked this time (" + unreadableReason(err) + "); this is the verdict it gave before.",
		}, nil
	}
	if err != nil {
		// The stored estado is the answer, with the status the contract
		// gives it: 05 is the failed check's 500, a 00 or 04 stays a 200.
		log.WarnContext(ctx, "check: the tax authority's answer could not be had", "err", err)
		p.metrics.outcomes.WithLabelValues(op, string(d.Estado)).Inc()
		msg := "The tax authority's answer could not be read (" + unreadableReason(err) + "); the document's stored state is unchanged. Check again later."
		if recepcion.Judge(err).Kind == recepcion.BadCredentials {
			msg = credentialsMessage
		}
		return Outcome{
			Document: d,
			Failed:   d.Estado == tenant.StateNotSentYet,
			Estado:   d.Estado,
			Message:  msg,
		}, nil
	}
	if known {
		p.applyStatus(ctx, &d, st)
	}
	out := Outcome{Document: d, Estado: d.Estado}
	if known && st.Estado == recepcion.EstadoError {
		out.Message = d.LastError
	}
	changed := known
	if !known {
		msg := d.LastError
		switch d.Estado {
		case tenant.StateSent:
			// It took the document once and no longer knows it (its
			// sandbox is wiped now and then): submit it again.
			if err := move(&d, tUnknown, tenant.StateNotSentYet, "The tax authority does not know this document; it will be sent again.", p.o.Clock()); err != nil {
				return Outcome{}, err
			}
			msg, changed = d.LastError, true
		case tenant.StatePending:
		case tenant.StateNotSentYet:
			msg = d.LastError
			if d.NextAttemptAt.IsZero() && len(d.SignedXML) > 0 {
				// Stopped (its company's credentials were refused): the
				// login just worked and the tax authority does not have
				// it, so it is sent now, by the background worker.
				if err := move(&d, tRescheduled, tenant.StateNotSentYet, "The tax authority does not know this document; it will be sent again shortly.", p.o.Clock()); err != nil {
					return Outcome{}, err
				}
				msg, changed = d.LastError, true
			}
			if msg == "" {
				msg = "The tax authority has not received this document yet."
			}
		default:
			// Nothing new to store: a send or the background worker may
			// be working on it right now.
			if msg == "" {
				msg = "The tax authority has not received this document yet."
			}
		}
		out = Outcome{Document: d, Estado: d.Estado, Message: msg}
	}
	if changed {
		err := p.save(ctx, &d)
		if errors.Is(err, tenant.ErrConflict) {
			// A send or the background worker stored the document while
			// the tax authority was asked: read it again. The tax
			// authority's answer is the newest word and is recorded on the
			// fresh copy; without one, the fresh copy is the answer.
			log.InfoContext(ctx, "check: the document changed meanwhile; read again")
			d, err = p.reload(ctx, d)
			if err == nil && known {
				p.applyStatus(ctx, &d, st)
				err = p.save(ctx, &d)
			}
			if err == nil && !known {
				out = Outcome{Document: d, Estado: d.Estado, Message: d.LastError}
			}
		}
		if err != nil {
			return Outcome{}, fmt.Errorf("store the tax authority's answer: %w", err)
		}
		out.Document, out.Estado = d, d.Estado
	}
	p.metrics.outcomes.WithLabelValues(op, string(d.Estado)).Inc()
	return out, nil
}

// reload reads d again from the store.
func (p *Pipeline) reload(ctx context.Context, d tenant.Document) (tenant.Document, error) {
	dctx, cancel := p.detached(ctx)
	defer cancel()
	cur, err := p.o.Store.DocumentByClave(dctx, d.Clave)
	if err != nil {
		return d, fmt.Errorf("read the document again: %w", err)
	}
	return cur, nil
}

// unreadableReason says in a few words why the tax authority's answer
// could not be had, without secrets.
func unreadableReason(err error) string {
	return recepcion.Judge(err).Reason
}
