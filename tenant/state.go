package tenant

import (
	"context"
	"time"
)

// UnsettledStates are the states of a document whose tax-authority answer
// is not settled yet: pending (00), sent (04) and not sent yet (05).
// Accepted, rejected and error (01, 02, 03) are where a document stays.
var UnsettledStates = []State{StatePending, StateSent, StateNotSentYet}

// Waiting says who an unsettled document waits for.
type Waiting string

const (
	// WaitingService: the document has a next attempt (NextAttemptAt
	// set): the service still works on it and settles it on its own.
	WaitingService Waiting = "service"
	// WaitingCaller: the document has no next attempt (NextAttemptAt
	// zero): the service has stopped on it (certificate expired or
	// missing, credentials refused, no verdict after polling) and only its
	// company can move it on, by sending the same request again.
	WaitingCaller Waiting = "caller"
)

// WaitingSides are both values of Waiting.
var WaitingSides = []Waiting{WaitingService, WaitingCaller}

// Unsettled is one group of the state gauges' counts: a state and who its
// documents wait for.
type Unsettled struct {
	Estado  State
	Waiting Waiting
}

// StoreState is the store-wide picture the operations gauges show: how many
// documents wait for a settled answer, for whom and since when, and how many
// active companies need a new certificate soon.
type StoreState struct {
	// Unsettled counts the documents in each of UnsettledStates by who they
	// wait for; every pair of UnsettledStates and WaitingSides has an
	// entry, zero included.
	Unsettled map[Unsettled]int64
	// OldestServiceWaiting is when the oldest document the service still
	// works on (WaitingService) was created; zero when there is none.
	// Documents waiting for their company are left out: they may wait
	// for days, and nothing the operator does settles them.
	OldestServiceWaiting time.Time
	// CertificatesWithin30d and CertificatesWithin7d count the active
	// companies whose certificate expires after now and within 30 or 7 days
	// of it (the first includes the second); CertificatesExpired those
	// whose certificate expired at or before now. Companies without a
	// certificate are in none.
	CertificatesWithin30d int64
	CertificatesWithin7d  int64
	CertificatesExpired   int64
}

// NewStoreState returns a StoreState with every count of Unsettled at zero.
func NewStoreState() StoreState {
	st := StoreState{Unsettled: map[Unsettled]int64{}}
	for _, e := range UnsettledStates {
		for _, w := range WaitingSides {
			st.Unsettled[Unsettled{e, w}] = 0
		}
	}
	return st
}

// StateStore answers the state gauges' questions and keeps the leases that
// let one replica among several do a store-wide job. Both store adapters
// implement it, and tenant/storetest runs its conformance suite over both.
type StateStore interface {
	// StoreState reads the store-wide state as of now. It is meant to be
	// cheap enough to run every few seconds: the unsettled documents are
	// read through a partial index that holds only them.
	StoreState(ctx context.Context, now time.Time) (StoreState, error)
	// TakeLease gives the lease called name to holder for ttl from now,
	// and reports whether holder has it: when nobody holds it, when holder
	// already does (a renewal), or when the other holder's lease has ended.
	// "Now" is the store's clock, not the caller's: PostgreSQL's now(), so
	// that replicas whose clocks disagree still agree on when a lease ends;
	// SQLite's one process's clock (its Options.Now). It is one conditional
	// write, so that of several replicas asking at once exactly one gets a
	// free lease.
	TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// ReleaseLease gives up holder's lease called name, so that another
	// replica can take it at once; it does nothing when holder does not
	// hold it.
	ReleaseLease(ctx context.Context, name, holder string) error
}
