package pipeline

import (
	"errors"
	"strings"
	"testing"
	"time"

	"facturad/tenant"
)

// TestTransitionTable pins the lifecycle: for every transition, every
// starting state and every target state, move succeeds exactly where the
// table (the one in docs/design/pipeline.md) says, sets the state, reason
// and next attempt when it does, and leaves the document untouched when it
// does not.
func TestTransitionTable(t *testing.T) {
	const (
		s00, s01, s02, s03, s04, s05 = tenant.StatePending, tenant.StateAccepted, tenant.StateRejected,
			tenant.StateError, tenant.StateSent, tenant.StateNotSentYet
	)
	all := []tenant.State{s00, s01, s02, s03, s04, s05}
	table := []struct {
		t        transition
		from, to []tenant.State
	}{
		{tHeld, []tenant.State{s00}, []tenant.State{s05}},
		{tStopped, []tenant.State{s00}, []tenant.State{s00}},
		{tRetryLater, []tenant.State{s00}, []tenant.State{s00}},
		{tSubmitted, []tenant.State{s05}, []tenant.State{s04}},
		{tNotTaken, []tenant.State{s05}, []tenant.State{s05, s03}},
		{tRescheduled, []tenant.State{s05}, []tenant.State{s05}},
		{tUnknown, []tenant.State{s04}, []tenant.State{s05}},
		{tAskFailed, []tenant.State{s04, s05}, []tenant.State{s04, s05}},
		{tJudged, all, []tenant.State{s01, s02, s03, s04}},
	}
	in := func(s tenant.State, list []tenant.State) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	next := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, row := range table {
		for _, from := range all {
			for _, to := range all {
				d := tenant.Document{ID: 7, Estado: from, LastError: "before", NextAttemptAt: next.Add(-time.Hour)}
				err := move(&d, row.t, to, "after", next)
				want := in(from, row.from) && in(to, row.to)
				switch {
				case want && err != nil:
					t.Errorf("%s %s→%s: refused: %v", row.t.name, from, to, err)
				case want && (d.Estado != to || d.LastError != "after" || !d.NextAttemptAt.Equal(next)):
					t.Errorf("%s %s→%s: stored %+v", row.t.name, from, to, d)
				case !want && !errors.Is(err, errTransition):
					t.Errorf("%s %s→%s: allowed, want refused", row.t.name, from, to)
				case !want && (d.Estado != from || d.LastError != "before"):
					t.Errorf("%s %s→%s: a refused transition changed the document: %+v", row.t.name, from, to, d)
				case !want && !strings.Contains(err.Error(), row.t.name):
					t.Errorf("%s: the refusal does not name the transition: %v", row.t.name, err)
				}
			}
		}
	}
	// Final states leave only through the tax authority's own word.
	for _, row := range table {
		for _, final := range []tenant.State{s01, s02} {
			if in(final, row.t.from) && row.t.name != tJudged.name {
				t.Errorf("%s starts from the final state %s", row.t.name, final)
			}
		}
	}
}
