package pipeline

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"facturad/hacienda/recepcion"
	"facturad/tenant"
)

// verdict is what a failed submission means for its document and for the
// send call's answer.
type verdict struct {
	// Estado is 05 (not taken: retried) or 03 (refused as sent: not
	// retried).
	Estado tenant.State
	// Key is the send call's mensaje_api_key.
	Key string
	// Retry says the background worker tries again.
	Retry bool
	// MaybeReceived says the tax authority may hold the document despite
	// the failure: ask its status before submitting it again.
	MaybeReceived bool
	// Message is the mensaje_api.
	Message string
}

// refusedStatus lists the answers to a submission that judge the document
// as sent: submitting the same bytes again would be refused again.
func refusedStatus(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// credentialsMessage is the stored and answered message of a document
// stopped because the company's tax-authority credentials are missing or
// refused.
const credentialsMessage = "The tax authority refused the company's tax-authority user or password, or the company has none; correct them (UsuarioHacienda, ContrasenaHacienda). The document is kept but not sent again automatically: after correcting them, send the same request again (same id_externo) to have it sent."

// credentialsFailure reports whether err is the company's tax-authority
// credentials missing or refused: no attempt succeeds until they change,
// and each attempt with refused ones counts against the taxpayer's account.
func credentialsFailure(err error) bool {
	return errors.Is(err, recepcion.ErrCredentials) || errors.Is(err, recepcion.ErrMissingCredentials)
}

// classifySubmit turns a failure of a submission (its token, the limiter
// or the submission itself) into a verdict. A refusal of the document
// itself is final (03). Missing or refused credentials keep the document
// in 05 but stop the retries until the company corrects them and the
// request is sent again. Everything else (the tax authority unreachable,
// slow, overloaded) keeps the document in 05 and retries it.
func classifySubmit(err error) verdict {
	v := verdict{
		Estado:        tenant.StateNotSentYet,
		Key:           KeySendingDocumentError,
		Retry:         true,
		MaybeReceived: recepcion.MaybeReceived(err),
	}
	var ae *recepcion.APIError
	var te *recepcion.TransportError
	switch {
	case errors.As(err, &ae) && ae.Op == recepcion.OpSubmit && refusedStatus(ae.Status):
		v.Estado, v.Retry, v.MaybeReceived = tenant.StateError, false, false
		v.Message = "The tax authority refused the document"
		if ae.Cause != "" {
			v.Message += ": " + ae.Cause
		}
	case credentialsFailure(err):
		v.Retry, v.MaybeReceived = false, false
		v.Message = credentialsMessage
	case errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests:
		v.Message = "The tax authority asked to slow down; the document is kept and will be sent again."
	case errors.As(err, &ae):
		v.Message = "The tax authority answered with an error (" + http.StatusText(ae.Status) + "); the document is kept and will be sent again."
	case errors.As(err, &te) && te.Kind == recepcion.KindCanceled,
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The call was given up on our side (shutdown, the caller's
		// timeout); the client says whether the request was written.
		v.Message = "The tax authority did not answer in time; the document is kept and will be sent again."
	case errors.As(err, &te) && te.Kind == recepcion.KindTimeout:
		v.Message = "The tax authority did not answer in time; the document is kept and will be sent again."
	default:
		v.Message = "The tax authority could not be reached; the document is kept and will be sent again."
	}
	return v
}

// mayBeInFlight reports whether a failed submission may still be on its
// way: the call was given up on (its deadline passed, or it was canceled)
// after the request may have been written. The tax authority may then
// receive it after the failure is known here, so asking its status at once
// would find nothing and invite a second submission.
func mayBeInFlight(err error) bool {
	if !recepcion.MaybeReceived(err) {
		return false
	}
	var te *recepcion.TransportError
	if errors.As(err, &te) {
		return te.Kind == recepcion.KindTimeout || te.Kind == recepcion.KindCanceled
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// nextAfterSubmit is when to try again after a failed submission, the
// n-th attempt's backoff (never sooner than a Retry-After the tax authority
// asked for); a submission that may still be in flight is not followed by
// anything, not even a status query, before its deadline plus
// InFlightMargin, when the tax authority has either received it or never
// will.
func (p *Pipeline) nextAfterSubmit(err error, n int, deadline time.Time) time.Time {
	next := p.o.Clock().Add(backoff(p.o.BackoffBase, p.o.BackoffMax, n, recepcion.RetryAfterOf(err)))
	if mayBeInFlight(err) && !deadline.IsZero() {
		if settle := deadline.Add(p.o.InFlightMargin); settle.After(next) {
			next = settle
		}
	}
	return next
}

// leaseLeft is how long a document stays held by whoever works on it (a
// send call, or the background worker that claimed it): the Retry-After of
// a repeat that finds it held. At least OverloadRetryAfter.
func (p *Pipeline) leaseLeft(d tenant.Document) time.Duration {
	left := d.NextAttemptAt.Sub(p.o.Clock())
	if d.NextAttemptAt.IsZero() || left < p.o.OverloadRetryAfter {
		return p.o.OverloadRetryAfter
	}
	return min(left.Round(time.Second)+time.Second, p.o.Lease+p.o.InFlightGrace)
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
