package pipeline

import (
	"context"
	"math/rand/v2"
	"time"

	"facturad/hacienda/recepcion"
	"facturad/tenant"
)

// verdict is what a failed submission means for its document and for the
// send call's answer.
type verdict struct {
	// Estado is 05 (not taken: retried) or 03 (refused as sent: not
	// retried). The send call's mensaje_api_key is always
	// KeySendingDocumentError.
	Estado tenant.State
	// Retry says the background worker tries again.
	Retry bool
	// Ask says the tax authority's word on the clave decides before the
	// verdict is stored: it may hold the document despite the failure (a
	// cut answer), or a refusal may be "already received".
	Ask bool
	// Message is the mensaje_api.
	Message string
	// RetryAfter and InFlight bound the next attempt (nextAfterSubmit).
	RetryAfter time.Duration
	InFlight   bool
}

// credentialsMessage is the stored and answered message of a document
// stopped because the company's tax-authority credentials are missing,
// refused, or not allowed to act for the company.
const credentialsMessage = "The tax authority refused the company's tax-authority user or password, or the company has none, or the user may not act for this company; correct them (UsuarioHacienda, ContrasenaHacienda). The document is kept and sent as soon as they work: at once when the company's credentials are updated or the document is checked, otherwise when the service next tries them (within an hour)."

// classifySubmit turns a failure of a submission (its token, the limiter
// or the submission itself), as recepcion.Judge classifies it, into what
// it means for the document. A refusal of the document itself is final
// (03). Missing or refused credentials keep the document in 05 with no next
// attempt: the company's stop paces the retries (credstop.go).
// Everything else (the tax authority unreachable, slow, overloaded, or the
// way to it misconfigured) keeps the document in 05 and retries it.
func classifySubmit(err error) verdict {
	j := recepcion.Judge(err)
	v := verdict{
		Estado:     tenant.StateNotSentYet,
		Retry:      true,
		Ask:        j.MaybeReceived && !j.InFlight,
		RetryAfter: j.RetryAfter,
		InFlight:   j.InFlight,
	}
	switch {
	case j.Kind == recepcion.Refused:
		v.Estado, v.Retry, v.Ask = tenant.StateError, false, true
		v.Message = "The tax authority refused the document"
		if j.Reason != "" {
			v.Message += ": " + j.Reason
		}
	case j.Kind == recepcion.BadCredentials:
		v.Retry, v.Ask = false, false
		v.Message = credentialsMessage
	case j.SlowDown:
		v.Message = "The tax authority asked to slow down; the document is kept and will be sent again."
	case j.TimedOut:
		// Canceled: the call was given up on our side (shutdown, the
		// caller's timeout).
		v.Message = "The tax authority did not answer in time; the document is kept and will be sent again."
	case j.Kind == recepcion.Broken:
		v.Message = "The tax authority could not be reached (" + j.Reason + "); the document is kept and will be sent again."
	case j.Answered:
		v.Message = "The tax authority answered with an error (" + j.Reason + "); the document is kept and will be sent again."
	default:
		v.Message = "The tax authority could not be reached; the document is kept and will be sent again."
	}
	return v
}

// nextAfterSubmit is when to try again after a failed submission, the
// n-th attempt's backoff (never sooner than a Retry-After the tax authority
// asked for); a submission that may still be in flight is not followed by
// anything, not even a status query, before its deadline plus
// InFlightMargin, when the tax authority has either received it or never
// will.
func (p *Pipeline) nextAfterSubmit(v verdict, n int, deadline time.Time) time.Time {
	next := p.o.Clock().Add(backoff(p.o.BackoffBase, p.o.BackoffMax, n, v.RetryAfter))
	if v.InFlight && !deadline.IsZero() {
		if settle := deadline.Add(p.o.InFlightMargin); settle.After(next) {
			next = settle
		}
	}
	return next
}

// afterSubmit is the one step after every submission, of the send call and
// of the background worker alike: it records in d what the submission's
// result err means. Taken: 04. Failed: when the tax authority may hold the
// document, or refused it (perhaps as already received), its status is
// asked once and its word is recorded; otherwise, or when it does not know
// the clave, the verdict v is recorded: 05 retried after the backoff (never
// while the submission may still be in flight), 05 stopped on the
// company's credentials, or 03 refused. heard says d holds the tax
// authority's word (it took the document, or answered the status asked).
// The caller stores d.
func (p *Pipeline) afterSubmit(ctx context.Context, d *tenant.Document, err error, deadline time.Time) (v verdict, heard bool, merr error) {
	if err == nil {
		return verdict{}, true, p.markSubmitted(d)
	}
	v = classifySubmit(err)
	if v.Ask {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(p.o.SubmitTimeout, 5*time.Second))
		known, serr := p.askStatus(sctx, d)
		cancel()
		if serr == nil && known {
			return v, true, nil
		}
	}
	var next time.Time
	if v.Retry {
		next = p.nextAfterSubmit(v, max(d.Attempts-1, 0), deadline)
	} else if v.Estado == tenant.StateNotSentYet {
		p.stopOnCredentials(ctx, d.CompanyID)
	}
	return v, false, move(d, tNotTaken, v.Estado, v.Message, next)
}

// heldRetryAfter is the Retry-After of a repeat that finds its document
// held by whoever works on it (a send call, or the background worker that
// claimed it). A live holder usually finishes within a second or two, and a
// dead one keeps the document until its lease ends: the wait grows with how
// long the document has been held (what it has been held so far, at least
// OverloadRetryAfter), never past the end of the hold. A repeat right
// after the first call is told to come back in a second, and repeats of a
// document whose holder died back off geometrically until the lease ends.
func (p *Pipeline) heldRetryAfter(d tenant.Document) time.Duration {
	now := p.o.Clock()
	left := d.NextAttemptAt.Sub(now)
	if d.NextAttemptAt.IsZero() || left < p.o.OverloadRetryAfter {
		return p.o.OverloadRetryAfter
	}
	left = min(left.Round(time.Second)+time.Second, p.o.Lease+p.o.InFlightGrace)
	held := now.Sub(d.UpdatedAt).Round(time.Second)
	return min(max(held, p.o.OverloadRetryAfter), left)
}

// stateOf maps the tax authority's ind-estado to a document state.
func stateOf(e recepcion.Estado) tenant.State {
	switch e {
	case recepcion.EstadoAceptado:
		return tenant.StateAccepted
	case recepcion.EstadoRechazado:
		return tenant.StateRejected
	case recepcion.EstadoError:
		// Not a verdict: applyStatus keeps such a document 04 for a
		// while (see processingError).
		return tenant.StateError
	}
	// recibido, procesando, and anything the API may add: not final yet.
	return tenant.StateSent
}

// settled reports whether the tax authority will say nothing more of a
// document in state s.
func settled(s tenant.State) bool {
	return s == tenant.StateAccepted || s == tenant.StateRejected || s == tenant.StateError
}

// backoff is the wait before attempt number n+1 (n ≥ 0): base·2ⁿ capped at
// max, less a random jitter of up to half of it, and never less than floor
// (a Retry-After the tax authority asked for).
func backoff(base, max time.Duration, n int, floor time.Duration) time.Duration {
	d := base
	for i := 0; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	if half := int64(d / 2); half > 0 {
		d -= time.Duration(rand.Int64N(half + 1))
	}
	if d < floor {
		d = floor
	}
	return d
}
