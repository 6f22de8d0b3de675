package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"facturad/tenant"
)

// The lifecycle of a stored document, as named transitions. Every change
// of a document's Estado, LastError and NextAttemptAt in this package goes
// through move with one of them, and move refuses a transition from a
// state it does not start from: the table in docs/design/pipeline.md
// ("States and every way out of them") is this list, and
// TestTransitionTable checks every (state, transition) pair of it.

// transition is a named change of a document's state.
type transition struct {
	name string
	// from are the states it may start from.
	from []tenant.State
	// to are the states it may end in.
	to []tenant.State
	// announce makes an event even when the estado does not change
	// (documento.pendiente for a document stopped in 00).
	announce bool
}

var (
	allStates = []tenant.State{tenant.StatePending, tenant.StateAccepted, tenant.StateRejected,
		tenant.StateError, tenant.StateSent, tenant.StateNotSentYet}
	pending    = tenant.StatePending
	notSentYet = tenant.StateNotSentYet
	sent       = tenant.StateSent
)

// The transitions.
var (
	// tHeld: a numbered document built and signed is stored 05 and held by
	// the call that submits it until NextAttemptAt.
	tHeld = transition{"held", []tenant.State{pending}, []tenant.State{notSentYet}, false}
	// tStopped: a numbered document that cannot go on (certificate
	// expired or missing, XML or signature failed, an interrupted send that
	// cannot be rebuilt) stays 00 with the reason and no next attempt; a
	// repeat of its request resumes it.
	tStopped = transition{"stopped", []tenant.State{pending}, []tenant.State{pending}, true}
	// tRetryLater: the worker could not work on a numbered document now
	// (its issuer could not be read): 00, asked again after NextAttemptAt.
	tRetryLater = transition{"retry later", []tenant.State{pending}, []tenant.State{pending}, false}
	// tSubmitted: the tax authority took the document (04).
	tSubmitted = transition{"submitted", []tenant.State{notSentYet}, []tenant.State{sent}, false}
	// tNotTaken: a submission failed: 05 retried after NextAttemptAt (or
	// not retried when the company's credentials are refused), or 03 when
	// the document was refused as sent.
	tNotTaken = transition{"not taken", []tenant.State{notSentYet}, []tenant.State{notSentYet, tenant.StateError}, false}
	// tRescheduled: a 05 stopped on its company's credentials is made due
	// again by a repeat of its request.
	tRescheduled = transition{"rescheduled", []tenant.State{notSentYet}, []tenant.State{notSentYet}, false}
	// tUnknown: the tax authority no longer knows a document it took: 05,
	// to be submitted again.
	tUnknown = transition{"unknown to the tax authority", []tenant.State{sent}, []tenant.State{notSentYet}, false}
	// tAskFailed: the worker could not ask or submit (04 or 05 kept),
	// tried again after NextAttemptAt, or not at all (credentials refused,
	// nothing to submit, no verdict for PollFor).
	tAskFailed = transition{"attempt failed", []tenant.State{sent, notSentYet}, []tenant.State{sent, notSentYet}, false}
	// tJudged: the tax authority's answer about the clave: its verdict, or
	// recibido/procesando (04), or its processing error (04, then 03).
	// It may come for a document in any state: the tax authority's word
	// is the newest.
	tJudged = transition{"judged", allStates, []tenant.State{tenant.StateAccepted, tenant.StateRejected, tenant.StateError, sent}, false}
)

// errTransition is a transition from a state it does not start from, or to
// one it does not end in: a bug, refused instead of stored.
var errTransition = errors.New("pipeline: transition not allowed")

// move applies t to d: its new state, the reason shown with it (mensaje_api
// and the operators' LastError; "" clears it) and when to work on it again
// (zero: not automatically). It marks d with the estado it had before, so
// that the save that persists the change writes its event to the outbox.
func move(d *tenant.Document, t transition, to tenant.State, reason string, next time.Time) error {
	if !slices.Contains(t.from, d.Estado) || !slices.Contains(t.to, to) {
		return fmt.Errorf("%w: %s from %s to %s (document %d)", errTransition, t.name, d.Estado, to, d.ID)
	}
	if d.Event == nil {
		// The first move since the document was read or saved: the save
		// compares the estado it stores with this one (see outbox.go).
		d.Event = &tenant.Event{From: d.Estado}
	}
	d.Event.Announce = d.Event.Announce || t.announce
	d.Estado, d.LastError, d.NextAttemptAt = to, reason, next
	return nil
}
