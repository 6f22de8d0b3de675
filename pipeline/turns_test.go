package pipeline

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// waiters is how many documents wait for a turn.
func (t *turns) waiters() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, q := range t.waiting {
		n += len(q)
	}
	return n
}

// queueTurn starts a document of branch waiting for a turn and waits until
// it is queued; got receives name once it has the turn.
func queueTurn(t *testing.T, ts *turns, ctx context.Context, branch int64, name string, got chan<- string, errs chan<- error) {
	t.Helper()
	before := ts.waiters()
	go func() {
		// The test gives the turn back itself (turns.release), in the
		// order it checks.
		if _, err := ts.acquire(ctx, branch); err != nil {
			errs <- err
			return
		}
		got <- name
	}()
	deadline := time.Now().Add(10 * time.Second)
	for ts.waiters() == before {
		if time.Now().After(deadline) {
			t.Fatalf("%s never queued", name)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestTurnsTakeBranchesInTurn checks that a turn goes to the next waiting
// branch, not to the branch with the most documents waiting.
func TestTurnsTakeBranchesInTurn(t *testing.T) {
	ts := newTurns(1)
	hold, err := ts.acquire(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	got, errs := make(chan string, 8), make(chan error, 8)
	ctx := context.Background()
	for _, w := range []struct {
		branch int64
		name   string
	}{{1, "a2"}, {1, "a3"}, {1, "a4"}, {2, "b1"}, {3, "c1"}} {
		queueTurn(t, ts, ctx, w.branch, w.name, got, errs)
	}
	var order []string
	hold()
	for range 5 {
		select {
		case n := <-got:
			order = append(order, n)
			ts.release() // the turn of the document that just got it
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(10 * time.Second):
			t.Fatalf("turns stopped after %v", order)
		}
	}
	if want := []string{"a2", "b1", "c1", "a3", "a4"}; !slices.Equal(order, want) {
		t.Errorf("turns went %v, want %v: a busy branch kept the others waiting", order, want)
	}
	if ts.free != 1 || len(ts.ring) != 0 || len(ts.waiting) != 0 {
		t.Errorf("after all: free %d, ring %v, waiting %v", ts.free, ts.ring, ts.waiting)
	}
}

// TestTurnsCallerGone checks that a waiter whose context ends leaves the
// queue (the turn goes to the next) and that at most n hold turns at once.
func TestTurnsCallerGone(t *testing.T) {
	ts := newTurns(2)
	var releases []func()
	for range 2 {
		r, err := ts.acquire(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	got, errs := make(chan string, 4), make(chan error, 4)
	ctx, cancel := context.WithCancel(context.Background())
	queueTurn(t, ts, ctx, 2, "gone", got, errs)
	queueTurn(t, ts, context.Background(), 3, "next", got, errs)
	select {
	case n := <-got:
		t.Fatalf("%s got a turn while two were held", n)
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("gone waiter: %v, want context.Canceled", err)
	}
	releases[0]()
	releases[0]() // a second call gives nothing back twice
	if n := <-got; n != "next" {
		t.Fatalf("turn went to %s", n)
	}
	releases[1]()
	ts.release() // next's
	ts.mu.Lock()
	free := ts.free
	ts.mu.Unlock()
	if free != 2 {
		t.Errorf("free turns at the end: %d, want 2", free)
	}
}
