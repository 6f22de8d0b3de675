package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"facturad/tenant"
)

// claimBase is the "now" of the claim tests.
var claimBase = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

// claiming is a store's claim of the rows the background worker works on
// (ClaimDueDocuments, ClaimDueReceived), with the checks both claims share.
type claiming[T listed] struct {
	name  string // the claim, in messages
	noun  string // what a row is, in messages
	claim func(ctx context.Context, now, leaseUntil time.Time, limit int) ([]T, error)
	// row returns a claimed row's id_externo and NextAttemptAt.
	row func(T) (idExterno string, next time.Time)
	// whole checks that a claimed row comes whole.
	whole func(t *testing.T, r T)
}

// names claims and returns the id_externo of what was claimed, checking
// that each row carries the lease and comes whole.
func (c claiming[T]) names(t *testing.T, now, lease time.Time, limit int) []string {
	t.Helper()
	rows, err := c.claim(context.Background(), now, lease, limit)
	mustNot(t, c.name, err)
	names := []string{}
	for _, r := range rows {
		name, next := c.row(r)
		names = append(names, name)
		if !next.Equal(lease) {
			t.Errorf("claimed %s has NextAttemptAt %v, want the lease end %v", name, next, lease)
		}
		c.whole(t, r)
	}
	return names
}

// dueRow is a row of the claim fixtures: its branch (0 or 1 of a
// docFixture), id_externo, state, and when it is due (zero: never).
type dueRow struct {
	branch int
	name   string
	estado tenant.State
	next   time.Time
}

// claimOrderRows are the rows the order checks claim: due ones in the
// three states the worker claims, before, at and after claimBase, and
// others that are never due, for their state or their unset time.
var claimOrderRows = []dueRow{
	{0, "c-05-1m", tenant.StateNotSentYet, claimBase.Add(-time.Minute)},
	{1, "b-04-2m", tenant.StateSent, claimBase.Add(-2 * time.Minute)},
	{0, "e-04-now", tenant.StateSent, claimBase},
	{0, "a-05-3m", tenant.StateNotSentYet, claimBase.Add(-3 * time.Minute)},
	{1, "d-05-1m", tenant.StateNotSentYet, claimBase.Add(-time.Minute)}, // same time as c, later id
	{0, "later-05", tenant.StateNotSentYet, claimBase.Add(time.Microsecond)},
	{0, "later-04", tenant.StateSent, claimBase.Add(time.Hour)},
	{0, "d2-00-30s", tenant.StatePending, claimBase.Add(-30 * time.Second)},
	{0, "never-00-unset", tenant.StatePending, time.Time{}},
	{0, "never-01", tenant.StateAccepted, claimBase.Add(-time.Hour)},
	{0, "never-02", tenant.StateRejected, claimBase.Add(-time.Hour)},
	{0, "never-03", tenant.StateError, claimBase.Add(-time.Hour)},
	{0, "never-04-unset", tenant.StateSent, time.Time{}},
	{0, "never-05-unset", tenant.StateNotSentYet, time.Time{}},
}

// checkOrder claims the stored claimOrderRows, leased until lease: the
// most overdue first (then by id), up to the limit, those due at now
// included, then those due a microsecond later.
func (c claiming[T]) checkOrder(t *testing.T, lease time.Time) {
	t.Helper()
	now := claimBase
	tests := []struct {
		name  string
		now   time.Time
		limit int
		want  []string
	}{
		{"ok/oldest first up to the limit", now, 3, []string{"a-05-3m", "b-04-2m", "c-05-1m"}},
		{"ok/then the rest, due at now included", now, 10, []string{"d-05-1m", "d2-00-30s", "e-04-now"}},
		{"ok/nothing more is due", now, 10, []string{}},
		{"ok/a microsecond later", now.Add(time.Microsecond), 10, []string{"later-05"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.names(t, tt.now, lease, tt.limit)
			if !slices.Equal(got, tt.want) {
				t.Errorf("claimed %v, want %v", got, tt.want)
			}
		})
	}
}

// checkNeverClaimed claims claimOrderRows a day later: every due one comes
// again, and those not 00, 04 or 05, or without a time, never do.
func (c claiming[T]) checkNeverClaimed(t *testing.T) {
	t.Helper()
	now := claimBase
	got := c.names(t, now.Add(24*time.Hour), now.Add(25*time.Hour), 100)
	want := []string{"a-05-3m", "b-04-2m", "c-05-1m", "d-05-1m", "d2-00-30s", "e-04-now", "later-05", "later-04"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("a day later claimed %v, want %v", got, want)
	}
}

// checkLease claims the one stored row, "arrendado", due before now: it is
// claimed, then not again until the lease ends. save stores the worker's
// outcome for it: a new NextAttemptAt is honoured, a final state never
// claimed again.
func (c claiming[T]) checkLease(t *testing.T, now, lease time.Time, save func(st tenant.State, next time.Time, attempts int)) {
	t.Helper()
	steps := []struct {
		name string
		now  time.Time
		want []string
	}{
		{"ok/claimed", now, []string{"arrendado"}},
		{"ok/not again at once", now, []string{}},
		{"ok/not before the lease ends", lease.Add(-time.Microsecond), []string{}},
		{"ok/again when the lease ends", lease, []string{"arrendado"}},
	}
	for _, st := range steps {
		// Each claim leases for 30 seconds from its now; the first one's
		// lease ends at lease.
		got := c.names(t, st.now, st.now.Add(30*time.Second), 10)
		if !slices.Equal(got, st.want) {
			t.Errorf("%s: claimed %v, want %v", st.name, got, st.want)
		}
	}
	save(tenant.StateSent, lease.Add(time.Minute), 1)
	if got := c.names(t, lease.Add(59*time.Second), lease.Add(2*time.Hour), 10); len(got) != 0 {
		t.Errorf("claimed %v before the saved NextAttemptAt", got)
	}
	if got := c.names(t, lease.Add(time.Minute), lease.Add(2*time.Hour), 10); !slices.Equal(got, []string{"arrendado"}) {
		t.Errorf("claimed %v at the saved NextAttemptAt, want [arrendado]", got)
	}
	save(tenant.StateAccepted, lease.Add(time.Minute), 1)
	if got := c.names(t, lease.Add(24*time.Hour), lease.Add(25*time.Hour), 10); len(got) != 0 {
		t.Errorf("claimed an accepted %s: %v", c.noun, got)
	}
}

// checkArgs claims the one stored row, "pendiente", due at now, with
// limits below 1 (nothing is claimed) and leases not after now (an
// error), and then for real: none of that claimed it.
func (c claiming[T]) checkArgs(t *testing.T, now time.Time) {
	t.Helper()
	ctx := context.Background()
	for _, limit := range []int{0, -1} {
		rs, err := c.claim(ctx, now, now.Add(time.Minute), limit)
		mustNot(t, fmt.Sprintf("%s limit %d", c.name, limit), err)
		if len(rs) != 0 {
			t.Errorf("limit %d claimed %d %ss", limit, len(rs), c.noun)
		}
	}
	for _, lease := range []time.Time{now, now.Add(-time.Minute)} {
		if _, err := c.claim(ctx, now, lease, 10); err == nil {
			t.Errorf("a lease ending at %v, not after now %v, was accepted", lease, now)
		}
	}
	if got := c.names(t, now, now.Add(time.Minute), 10); !slices.Equal(got, []string{"pendiente"}) {
		t.Errorf("claimed %v, want [pendiente]", got)
	}
}

// claimEachOnce has several goroutines per claim (one claim a store) take
// the rows due at claimBase in small batches at once, then claims what
// they left through the first: every row of due must be claimed exactly
// once, and nothing else.
func claimEachOnce[T listed](t *testing.T, claims []claiming[T], due map[int64]bool) {
	t.Helper()
	ctx := context.Background()
	now := claimBase
	noun := claims[0].noun
	const workers, batch = 8, 4
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		claimed = map[int64]int{}
	)
	errs := make(chan error, len(claims)*workers)
	for si, c := range claims {
		for w := range workers {
			wg.Go(func() {
				for empty := 0; empty < 3; {
					rs, err := c.claim(ctx, now, now.Add(time.Hour), batch)
					if err != nil {
						errs <- fmt.Errorf("store %d worker %d: %w", si, w, err)
						return
					}
					if len(rs) == 0 {
						// Rows other claimers hold are skipped: an empty
						// answer may come before the work is all taken.
						empty++
						continue
					}
					empty = 0
					if len(rs) > batch {
						errs <- fmt.Errorf("store %d worker %d: %d %ss claimed with limit %d", si, w, len(rs), noun, batch)
						return
					}
					mu.Lock()
					for _, id := range ids(rs) {
						claimed[id]++
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Whatever the goroutines left (they stop after a few empty answers)
	// is claimed now, once more from one place.
	rest, err := claims[0].claim(ctx, now, now.Add(time.Hour), 2*len(due))
	mustNot(t, claims[0].name, err)
	for _, id := range ids(rest) {
		claimed[id]++
	}
	for id, n := range claimed {
		if !due[id] {
			t.Errorf("%s %d was claimed but is not due", noun, id)
		}
		if n != 1 {
			t.Errorf("%s %d claimed %d times", noun, id, n)
		}
	}
	for id := range due {
		if claimed[id] == 0 {
			t.Errorf("due %s %d never claimed", noun, id)
		}
	}
	if len(rest) > len(due)/2 {
		t.Logf("the concurrent claimers left %d of %d %ss", len(rest), len(due), noun)
	}
}
