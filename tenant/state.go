package tenant

import (
	"context"
	"time"
)

// State is a document's state in the contract (A.5): the `estado` code.
// A received document's message (MensajeReceptor) goes through the same
// states. A row's phase (Phase) says more; its estado follows from it.
type State string

// The document states of the contract.
const (
	StatePending    State = "00" // stored, not submitted (e.g. expired certificate)
	StateAccepted   State = "01" // the tax authority accepted it
	StateRejected   State = "02" // the tax authority rejected it
	StateError      State = "03" // the tax authority reported a processing error
	StateSent       State = "04" // received by the tax authority, answer not final
	StateNotSentYet State = "05" // the tax authority was unreachable; retried
)

// stateTable is the one list of the states, with every word the service
// says of them.
var stateTable = []struct {
	state State
	// humanized is the contract's estado_humanizado.
	humanized string
	// event names the state in event names (documento.aceptado).
	event string
	// final: the tax authority's verdict, which nothing changes.
	final bool
	// unsettled: the service still works on the row, or waits for its
	// company to; 01, 02 and 03 are where a row stays.
	unsettled bool
}{
	{StatePending, "Pending", "pendiente", false, true},
	{StateAccepted, "Accepted", "aceptado", true, false},
	{StateRejected, "Rejected", "rechazado", true, false},
	{StateError, "Error", "error", false, false},
	{StateSent, "Sent", "enviado", false, true},
	{StateNotSentYet, "NotSendYet", "no_enviado", false, true},
}

// States returns every state, in the order of their codes.
func States() []State {
	out := make([]State, len(stateTable))
	for i, r := range stateTable {
		out[i] = r.state
	}
	return out
}

// stateInfo returns s's row of stateTable, and whether it is a state.
func stateInfo(s State) (humanized, event string, final, unsettled, ok bool) {
	for _, r := range stateTable {
		if r.state == s {
			return r.humanized, r.event, r.final, r.unsettled, true
		}
	}
	return "", "", false, false, false
}

// Humanized returns the contract's `estado_humanizado` of s; "" for a
// code that is not a state.
func (s State) Humanized() string {
	h, _, _, _, _ := stateInfo(s)
	return h
}

// Final reports whether s is the tax authority's verdict (01, 02), which
// nothing changes.
func (s State) Final() bool {
	_, _, final, _, _ := stateInfo(s)
	return final
}

// EventState is the name of an estado in event names: documento.aceptado.
func EventState(s State) string {
	_, e, _, _, _ := stateInfo(s)
	return e
}

// UnsettledStates are the states of a row whose tax-authority answer is
// not settled yet: pending (00), sent (04) and not sent yet (05). The
// stores' SQL repeats them (the partial indexes' conditions), and a test
// of each store holds it to this list.
var UnsettledStates = func() []State {
	var out []State
	for _, r := range stateTable {
		if r.unsettled {
			out = append(out, r.state)
		}
	}
	return out
}()

// UnsettledKind says what an unsettled row is.
type UnsettledKind string

const (
	// UnsettledDocument: a document the company issued (documents).
	UnsettledDocument UnsettledKind = "document"
	// UnsettledReceived: the company's message on a document a supplier
	// issued to it (received_documents): until the tax authority accepts
	// it, the company cannot claim the document's IVA.
	UnsettledReceived UnsettledKind = "received"
)

// UnsettledKinds are both values of UnsettledKind.
var UnsettledKinds = []UnsettledKind{UnsettledDocument, UnsettledReceived}

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

// UnsettledAmbientes are the environments the state gauges count apart.
var UnsettledAmbientes = []string{AmbientePruebas, AmbienteProduccion}

// Unsettled is one group of the state gauges' counts: what the rows are
// (issued documents or received documents' messages), the environment they
// were numbered in, their state and who they wait for.
type Unsettled struct {
	Kind     UnsettledKind
	Ambiente string
	Estado   State
	Waiting  Waiting
}

// StoreState is the store-wide picture the operations gauges show: how many
// documents and received documents' messages wait for a settled answer,
// for whom and since when, and how many active companies need a new
// certificate soon.
type StoreState struct {
	// Unsettled counts the rows of each kind and environment in each of
	// UnsettledStates by who they wait for; every combination of
	// UnsettledKinds, UnsettledAmbientes, UnsettledStates and WaitingSides
	// has an entry, zero included (a row stored before environments
	// existed and not adopted yet counts under an empty Ambiente).
	Unsettled map[Unsettled]int64
	// OldestServiceWaiting is, per kind, when the oldest row the service
	// still works on (WaitingService) was created; zero or absent when
	// there is none. Rows waiting for their company are left out: they
	// may wait for days, and nothing the operator does settles them.
	OldestServiceWaiting map[UnsettledKind]time.Time
	// CertificatesWithin30d and CertificatesWithin7d count the active
	// companies whose certificate expires after now and within 30 or 7 days
	// of it (the first includes the second); CertificatesExpired those
	// whose certificate expired at or before now. Companies without a
	// certificate are in none.
	CertificatesWithin30d int64
	CertificatesWithin7d  int64
	CertificatesExpired   int64
}

// NewStoreState returns a StoreState with every count of Unsettled at zero
// and no oldest row.
func NewStoreState() StoreState {
	st := StoreState{Unsettled: map[Unsettled]int64{}, OldestServiceWaiting: map[UnsettledKind]time.Time{}}
	for _, k := range UnsettledKinds {
		for _, a := range UnsettledAmbientes {
			for _, e := range UnsettledStates {
				for _, w := range WaitingSides {
					st.Unsettled[Unsettled{k, a, e, w}] = 0
				}
			}
		}
	}
	return st
}

// AddUnsettled records one group of a store's counts: service rows of
// kind numbered in ambiente in estado that the service works on, caller
// that wait for their company, and when the oldest of the first was
// created (zero: none). Stores call it for each row of their unsettled
// query.
func (st *StoreState) AddUnsettled(kind UnsettledKind, ambiente string, estado State, service, caller int64, oldest time.Time) {
	st.Unsettled[Unsettled{kind, ambiente, estado, WaitingService}] = service
	st.Unsettled[Unsettled{kind, ambiente, estado, WaitingCaller}] = caller
	if oldest.IsZero() {
		return
	}
	if cur := st.OldestServiceWaiting[kind]; cur.IsZero() || oldest.Before(cur) {
		st.OldestServiceWaiting[kind] = oldest.UTC()
	}
}

// StateStore answers the state gauges' questions and keeps the leases that
// let one replica among several do a store-wide job. Both store adapters
// implement it, and tenant/storetest runs its conformance suite over both.
type StateStore interface {
	// StoreState reads the store-wide state as of now. It is meant to be
	// cheap enough to run every few seconds: the unsettled documents and
	// received documents' messages are read through partial indexes that
	// hold only them.
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
