package recepcion

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// Kind is what a failed call means for whoever made it.
type Kind string

// The kinds of failure, and NotFound. Callers decide on these and never on an HTTP
// status: the table from statuses and transport failures to kinds is
// Judge's, and only Judge's.
const (
	// Refused: the tax authority judged the request as sent (a submission
	// answered 400 with X-Error-Cause, 409, 413 or 422). The same bytes
	// would be refused again.
	Refused Kind = "refused"
	// BadCredentials: the company's tax-authority user or password is
	// missing or refused, or the user may not act for this issuer (403).
	// Every attempt with them counts against the taxpayer's account;
	// nothing succeeds until they change.
	BadCredentials Kind = "bad_credentials"
	// Broken: the way to the tax authority is misconfigured (a wrong base
	// URL answered 404, a TLS or DNS-name failure, 501, 505, 511…). The
	// same call fails until an operator fixes the configuration; a
	// document is kept and tried again later like a transient failure.
	Broken Kind = "broken"
	// NotFound: the tax authority does not know the clave (a status query
	// answered 404): it never received the document, or its sandbox was
	// wiped. Not a failure of the exchange; submitting is the next step.
	NotFound Kind = "not_found"
	// Transient: the tax authority was unreachable, slow, overloaded or
	// answered with a server error; the same call may succeed later.
	Transient Kind = "transient"
)

// Verdict is the one classification of a failed call of a Client.
type Verdict struct {
	Kind Kind
	// MaybeReceived says the tax authority may hold the request despite
	// the failure: ask Status before submitting the same clave again.
	MaybeReceived bool
	// InFlight says the request may still be on its way (the call was given
	// up on by its deadline or a cancellation after the request was
	// written): the tax authority may receive it after the failure is
	// known, so asking Status at once proves nothing.
	InFlight bool
	// RetryAfter is the wait the tax authority asked for (clamped to
	// [0, MaxRetryAfter]), zero when it did not say.
	RetryAfter time.Duration
	// Answered says the tax authority answered (with a status that is not
	// a success), as opposed to not answering in a readable way.
	Answered bool
	// SlowDown says the tax authority asked to slow down (429).
	SlowDown bool
	// TimedOut says no answer came in time: the call's deadline passed, or
	// it was given up on (canceled) on the caller's side.
	TimedOut bool
	// Reason says in a few words, without secrets, what happened: the tax
	// authority's cause of a refusal (X-Error-Cause, possibly empty), the
	// answer's status and cause, or how the exchange failed.
	Reason string
}

// Judge classifies an error returned by a Client. An error of another
// origin (the caller's own context, a failure to read the credentials) is
// Transient and was never received.
func Judge(err error) Verdict {
	var (
		ae *APIError
		te *TransportError
	)
	switch {
	case err == nil:
		return Verdict{}
	case errors.As(err, &ae) && ae.Outage != "":
		// Refused like wrong credentials, but taken for the token
		// service failing: retried like any other outage.
		return Verdict{Kind: Transient, Answered: true, RetryAfter: ae.RetryAfter,
			Reason: "the token service is failing (" + ae.reason() + "; " + ae.Outage + ")"}
	case errors.Is(err, ErrCredentials), errors.Is(err, ErrMissingCredentials):
		return Verdict{Kind: BadCredentials, Reason: "credentials refused or missing"}
	case errors.Is(err, ErrNotFound):
		return Verdict{Kind: NotFound, Reason: "clave unknown to the tax authority"}
	case errors.As(err, &ae):
		v := Verdict{Kind: Transient, Answered: true, MaybeReceived: ae.MaybeReceived, RetryAfter: ae.RetryAfter,
			SlowDown: ae.Status == http.StatusTooManyRequests, Reason: ae.reason()}
		switch {
		case ae.Op == OpSubmit && refusedStatus(ae.Status):
			v.Kind, v.MaybeReceived, v.Reason = Refused, false, ae.Cause
		case ae.Status == http.StatusForbidden:
			v.Kind = BadCredentials
		case !ae.Retryable && ae.Status != http.StatusUnauthorized:
			// 401 after a fresh token is the token service's and the
			// reception API's disagreement, not the company's fault: it is
			// tried again later.
			v.Kind = Broken
		}
		return v
	case errors.As(err, &te):
		v := Verdict{Kind: Transient, MaybeReceived: te.MaybeReceived, Reason: string(te.Kind),
			TimedOut: te.Kind == KindTimeout || te.Kind == KindCanceled}
		if !te.Retryable && te.Kind != KindCanceled {
			v.Kind = Broken
		}
		v.InFlight = te.MaybeReceived && v.TimedOut
		return v
	case errors.Is(err, context.DeadlineExceeded):
		return Verdict{Kind: Transient, TimedOut: true, Reason: string(KindTimeout)}
	case errors.Is(err, context.Canceled):
		return Verdict{Kind: Transient, TimedOut: true, Reason: string(KindCanceled)}
	}
	return Verdict{Kind: Transient, Reason: "the tax authority could not be reached"}
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

// reason is the status and the tax authority's cause, for messages.
func (e *APIError) reason() string {
	s := http.StatusText(e.Status)
	if s == "" {
		s = "status " + strconv.Itoa(e.Status)
	}
	if e.Cause != "" {
		s += ": " + e.Cause
	}
	return s
}
