package pipeline

import (
	"errors"
	"time"

	"facturad/hacienda/msg"
	"facturad/hacienda/registry"
	"facturad/tenant"
)

// The mensaje_api_key values of the send call's 500 answers (A.5).
const (
	// KeySendingDocumentError: the tax authority did not take the document
	// (estado 05, retried in the background) or refused it (estado 03).
	KeySendingDocumentError = "SendingDocumentError"
	// KeyExpiredClientCertificate: the company's certificate is expired or
	// missing (estado 00); a new one must be uploaded.
	KeyExpiredClientCertificate = "ExpiredClientCertificate"
)

// Answer is what a call says about its row, beside the row itself.
// Failed calls answer 500 with the row as the body (A.5), with
// mensaje_api_key Key and mensaje_api Message; the rest answer 200, with a
// Message when there is something to say.
type Answer struct {
	// Failed says the call answers 500 with the row as the body.
	Failed bool
	// Key is the mensaje_api_key ("" on success).
	Key string
	// Message is the mensaje_api.
	Message string
	// Estado is the estado the answer shows; it differs from the stored
	// one only when a check could not read the tax authority's answer.
	Estado tenant.State
}

// Outcome is the answer of a send or check call: the document as stored
// and what the call says about it.
type Outcome struct {
	Document tenant.Document
	Answer
	// Advertencias are what the registry checks found that did not
	// refuse the document (A.13); only on the send that issued it.
	Advertencias []registry.Finding
	// Quota is the company's monthly quota and what it has numbered this
	// month (A.14), on a send's answer: counting the document when the
	// send numbered it, as it stands now on a replay. Nil when the
	// company has no quota, and on a check's answer.
	Quota *tenant.QuotaUse
}

// ReceivedOutcome is the answer of a receive or check call of a received
// document: the received document as stored (its message's state) and
// what the call says about it.
type ReceivedOutcome struct {
	Received tenant.ReceivedDocument
	Answer
}

// Errors callers branch on.
var (
	// ErrStopping refuses work while the pipeline stops. It is an
	// *OverloadError, so the gateway answers 503 with Retry-After and the
	// caller tries another replica or later.
	ErrStopping error = &OverloadError{Reason: msg.Stopping.With(), After: 5 * time.Second}
	// ErrNotStarted refuses work before Start.
	ErrNotStarted = errors.New("pipeline: not started")
)

// OverloadError is a refusal because a branch's lane is full, or because a
// request with the same id_externo is still being worked on, or the
// pipeline stops: work the service chose not to take now (it is shed). The
// gateway answers 503 with Retry-After. With Dependency set it is instead
// a refusal because a service the call needs (the tax authority, the
// central bank) cannot be asked now: the same answer, but a failure.
type OverloadError struct {
	// Reason is what the caller is told, an answer of the catalogue.
	Reason msg.Message
	After  time.Duration
	// Dependency marks a refusal caused by a failing dependency, not by
	// load: it is not shed (Shed reports false).
	Dependency bool
}

func (e *OverloadError) Error() string { return e.Reason.String() }

// Describe is the refusal for the caller.
func (e *OverloadError) Describe() msg.Message { return e.Reason }

// Shed reports whether the refusal is load or a rollout (the caller's own
// excess, another call holding the same id_externo, the pipeline stopping)
// rather than a failure: the gateway counts such a 503 apart from server
// errors.
func (e *OverloadError) Shed() bool { return !e.Dependency }

// HTTPStatus is 503 (service unavailable): the caller should try again.
func (e *OverloadError) HTTPStatus() int { return 503 }

// RetryAfter is how long the caller should wait.
func (e *OverloadError) RetryAfter() time.Duration { return e.After }

// fieldError is a validation error on request fields; it exposes
// FieldErrors and FieldMessages like hacienda's and tenant's validation
// errors, so the gateway answers it with the 400 form.
type fieldError struct {
	fields map[string][]msg.Message
}

func invalidField(field string, m msg.Message) *fieldError {
	return &fieldError{fields: msg.One(field, m)}
}

func (e *fieldError) Error() string {
	for f, m := range e.fields {
		if len(m) > 0 {
			return "invalid " + f + ": " + m[0].String()
		}
	}
	return "invalid request"
}

// FieldErrors returns the offending fields and their messages, in
// English.
func (e *fieldError) FieldErrors() map[string][]string { return msg.Render(e.fields, msg.English) }

// FieldMessages returns the offending fields and their messages.
func (e *fieldError) FieldMessages() map[string][]msg.Message { return e.fields }

// describedError is a failure said with a message of the catalogue (what
// is wrong with a supplier's document, for instance), for a caller that
// reports it on a field.
type describedError struct{ m msg.Message }

func (e *describedError) Error() string         { return e.m.String() }
func (e *describedError) Describe() msg.Message { return e.m }
