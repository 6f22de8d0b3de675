package pipeline

import (
	"context"
	"fmt"
	"sync"
)

// turns hands out the signature, the costliest step of a document (about
// as much CPU as everything else it needs), to at most n documents at once,
// taking the branches that wait in turn. Without it the Go scheduler shares
// the cores among goroutines, so a branch with eight documents in flight
// (its lane's workers) got eight times the CPU of a branch with one, and a
// branch sending as fast as it can raised every other branch's latency
// many times over. With it, a document of a quiet branch waits for at most
// one signature of each other waiting branch, however many documents those
// have in flight.
type turns struct {
	mu      sync.Mutex
	free    int
	waiting map[int64][]chan struct{} // per branch, first come first served
	ring    []int64                   // the branches with waiters, in turn order
}

func newTurns(n int) *turns {
	return &turns{free: max(1, n), waiting: map[int64][]chan struct{}{}}
}

// acquire waits for a turn for a document of branch and returns the
// function that gives it back. It fails only when ctx ends first.
func (t *turns) acquire(ctx context.Context, branch int64) (release func(), err error) {
	t.mu.Lock()
	if t.free > 0 && len(t.ring) == 0 {
		t.free--
		t.mu.Unlock()
		return t.releaseOnce(), nil
	}
	ch := make(chan struct{})
	if len(t.waiting[branch]) == 0 {
		t.ring = append(t.ring, branch)
	}
	t.waiting[branch] = append(t.waiting[branch], ch)
	t.mu.Unlock()

	select {
	case <-ch:
		return t.releaseOnce(), nil
	case <-ctx.Done():
	}
	t.mu.Lock()
	removed := t.remove(branch, ch)
	t.mu.Unlock()
	if !removed {
		// The turn came as ctx ended: pass it on.
		t.release()
	}
	return nil, fmt.Errorf("wait for a turn to sign: %w", context.Cause(ctx))
}

// releaseOnce is release, safe to call more than once.
func (t *turns) releaseOnce() func() {
	var once sync.Once
	return func() { once.Do(t.release) }
}

// release hands the turn to the first waiter of the next branch in the
// ring, which goes to the ring's end if it has more; with none waiting the
// turn is free.
func (t *turns) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.ring) == 0 {
		t.free++
		return
	}
	b := t.ring[0]
	t.ring = t.ring[1:]
	q := t.waiting[b]
	next := q[0]
	if q = q[1:]; len(q) == 0 {
		delete(t.waiting, b)
	} else {
		t.waiting[b] = q
		t.ring = append(t.ring, b)
	}
	close(next)
}

// remove takes ch out of branch's waiters; false means it was not waiting
// any more (its turn was handed to it).
func (t *turns) remove(branch int64, ch chan struct{}) bool {
	q := t.waiting[branch]
	for i, c := range q {
		if c != ch {
			continue
		}
		q = append(q[:i], q[i+1:]...)
		if len(q) > 0 {
			t.waiting[branch] = q
			return true
		}
		delete(t.waiting, branch)
		for j, b := range t.ring {
			if b == branch {
				t.ring = append(t.ring[:j], t.ring[j+1:]...)
				break
			}
		}
		return true
	}
	return false
}
