package tenant

import (
	"context"
	"time"
)

// UnsettledStates are the states of a document whose tax-authority answer
// is not settled yet and that the service still works on: pending (00),
// sent (04) and not sent yet (05). Accepted, rejected and error (01, 02,
// 03) are where a document stays.
var UnsettledStates = []State{StatePending, StateSent, StateNotSentYet}

// StoreState is the store-wide picture the operations gauges show: how many
// documents wait for a settled answer and since when, and how many active
// companies need a new certificate soon.
type StoreState struct {
	// Unsettled counts the documents in each of UnsettledStates; every one
	// of them has an entry, zero included.
	Unsettled map[State]int64
	// OldestUnsettled is when the oldest document counted in Unsettled was
	// created; zero when there is none.
	OldestUnsettled time.Time
	// CertificatesWithin30d and CertificatesWithin7d count the active
	// companies whose certificate expires after now and within 30 or 7 days
	// of it (the first includes the second); CertificatesExpired those
	// whose certificate expired at or before now. Companies without a
	// certificate are in none.
	CertificatesWithin30d int64
	CertificatesWithin7d  int64
	CertificatesExpired   int64
}

// StateStore answers the state gauges' questions and keeps the leases that
// let one replica among several do a store-wide job. Both store adapters
// implement it, and tenant/storetest runs its conformance suite over both.
type StateStore interface {
	// StoreState reads the store-wide state as of now. It is meant to be
	// cheap enough to run every few seconds: the unsettled documents are
	// read through a partial index that holds only them.
	StoreState(ctx context.Context, now time.Time) (StoreState, error)
	// TakeLease gives the lease called name to holder until the time until,
	// and reports whether holder has it: when nobody holds it, when holder
	// already does (a renewal), or when the other holder's lease ended at or
	// before now. It is one conditional write, so that of several replicas
	// asking at once exactly one gets a free lease.
	TakeLease(ctx context.Context, name, holder string, now, until time.Time) (bool, error)
	// ReleaseLease gives up holder's lease called name, so that another
	// replica can take it at once; it does nothing when holder does not
	// hold it.
	ReleaseLease(ctx context.Context, name, holder string) error
}
