package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"facturad/tenant"
)

// The lifecycle of everything the service submits to the tax authority: a
// document a company issues and its message on a document it received
// (a row) move through the same phases (tenant.Phase) by the same named
// transitions. Every change of a row's phase, LastError and NextAttemptAt
// in this package goes through move with one of them, and move refuses a
// transition from a phase it does not start from; the store then applies
// the change only while the row is still in the phase it was read in
// (tenant.Submission.From). No transition starts from 01 or 02: a verdict
// is final. The table in docs/design/pipeline.md ("Phases and every way
// out of them") is generated from this list (TestDesignTable).

// transition is a named change of a row's phase.
type transition struct {
	name string
	// from are the phases it may start from.
	from []tenant.Phase
	// to are the phases it may end in.
	to []tenant.Phase
	// keepEstado says it never changes the estado (a failed attempt).
	keepEstado bool
	// announce makes an event even when the estado does not change
	// (documento.pendiente for a document stopped in 00).
	announce bool
	// doc says what the transition is, for the design doc.
	doc string
}

// Phases, short.
const (
	numbered    = tenant.PhaseNumbered
	stopped     = tenant.PhaseStopped
	held        = tenant.PhaseHeld
	retrying    = tenant.PhaseRetrying
	credentials = tenant.PhaseCredentials
	submitted   = tenant.PhaseSubmitted
	accepted    = tenant.PhaseAccepted
	rejected    = tenant.PhaseRejected
	refused     = tenant.PhaseRefused
	failed      = tenant.PhaseFailed
)

// notTaken are the phases of a signed row the tax authority has not taken
// (05).
var notTaken = []tenant.Phase{held, retrying, credentials}

// The transitions.
var (
	tHeld = transition{name: "held", from: []tenant.Phase{numbered, stopped}, to: []tenant.Phase{held},
		doc: "built and signed; stored and held by the call that submits it until NextAttemptAt"}
	tStopped = transition{name: "stopped", from: []tenant.Phase{numbered, stopped}, to: []tenant.Phase{stopped}, announce: true,
		doc: "cannot go on (certificate expired or missing, XML or signature failed, not rebuildable); a repeat of its request resumes it"}
	tRetryLater = transition{name: "retry later", from: []tenant.Phase{numbered, stopped}, to: []tenant.Phase{numbered},
		doc: "the background worker could not finish it now (its issuer could not be read); finished after NextAttemptAt"}
	tSubmitted = transition{name: "submitted", from: notTaken, to: []tenant.Phase{submitted},
		doc: "the tax authority took it; asked about after PollDelay (with callbacks, CallbackWait)"}
	tNotTaken = transition{name: "not taken", from: notTaken, to: []tenant.Phase{retrying, credentials, refused},
		doc: "a submission failed: retried with backoff, stopped on the company's credentials, or refused as sent"}
	tRescheduled = transition{name: "rescheduled", from: []tenant.Phase{credentials}, to: []tenant.Phase{credentials},
		doc: "stopped on credentials, made due again (a repeat of its request, a check the tax authority does not know it for)"}
	tUnknown = transition{name: "unknown to the tax authority", from: []tenant.Phase{submitted}, to: []tenant.Phase{retrying},
		doc: "the tax authority no longer knows a row it took: submitted again"}
	tAskFailed = transition{name: "attempt failed", from: append([]tenant.Phase{submitted}, notTaken...),
		to: []tenant.Phase{submitted, retrying, credentials}, keepEstado: true,
		doc: "the background worker could not ask or submit: tried again after NextAttemptAt, or stopped (credentials refused, no verdict within PollFor)"}
	tJudged = transition{name: "judged", from: []tenant.Phase{numbered, stopped, held, retrying, credentials, submitted, refused, failed},
		to:  []tenant.Phase{accepted, rejected, failed, submitted},
		doc: "the tax authority's word on the key: its verdict (final), recibido/procesando, or its processing error (03 after ErrorFor)"}
)

// transitions is every transition, for the tests and the design doc.
var transitions = []transition{tHeld, tStopped, tRetryLater, tSubmitted, tNotTaken, tRescheduled, tUnknown, tAskFailed, tJudged}

// errTransition is a transition from a phase it does not start from, or to
// one it does not end in: refused instead of stored.
var errTransition = errors.New("pipeline: transition not allowed")

// move applies t to s: its new phase (and with it its estado), the reason
// shown with it (mensaje_api and the operators' LastError; "" clears it)
// and when to work on it again (zero: not automatically). It marks s as
// changed, so that the save that persists the change writes its event to
// the outbox when the estado stored is not the one read (outbox.go).
func move(s *tenant.Submission, t transition, to tenant.Phase, reason string, next time.Time) error {
	if !t.allows(s.Phase, to) {
		return fmt.Errorf("%w: %s from %s to %s", errTransition, t.name, s.Phase, to)
	}
	if s.Event == nil {
		s.Event = &tenant.Event{}
	}
	s.Event.Announce = s.Event.Announce || t.announce
	s.Phase, s.Estado, s.LastError, s.NextAttemptAt = to, to.Estado(), reason, next
	return nil
}

// allows reports whether t may move a row from one phase to another.
func (t transition) allows(from, to tenant.Phase) bool {
	return slices.Contains(t.from, from) && slices.Contains(t.to, to) &&
		(!t.keepEstado || from.Estado() == to.Estado())
}
