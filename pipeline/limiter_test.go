package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestTokenBucket(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tb := NewTokenBucket(10, 3) // 10 per second, bursts of 3
	tb.now = func() time.Time { return now }

	// The burst passes at once; then each call waits its tenth of a
	// second, in turn.
	for i := range 3 {
		if d := reserveNow(tb, "a"); d != 0 {
			t.Fatalf("call %d of the burst waits %s", i, d)
		}
	}
	for i, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond} {
		if d := reserveNow(tb, "a"); d != want {
			t.Fatalf("call %d after the burst waits %s, want %s", i, d, want)
		}
	}
	// Keys are independent.
	if d := reserveNow(tb, "b"); d != 0 {
		t.Errorf("another key waits %s", d)
	}
	// Time refills the bucket, never beyond the burst.
	now = now.Add(time.Hour)
	for i := range 3 {
		if d := reserveNow(tb, "a"); d != 0 {
			t.Fatalf("after a quiet hour, call %d waits %s", i, d)
		}
	}
	if d := reserveNow(tb, "a"); d == 0 {
		t.Error("the bucket refilled beyond its burst")
	}
}

// reserveNow takes a token with no deadline.
func reserveNow(tb *TokenBucket, key string) time.Duration {
	d, _ := tb.reserve(key, time.Time{})
	return d
}

// A turn that would come after the caller's deadline fails at once and
// takes nothing: the callers after it keep their turns.
func TestTokenBucketDeadline(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tb := NewTokenBucket(1, 1)
	tb.now = func() time.Time { return now }
	if d, ok := tb.reserve("a", now.Add(time.Second)); !ok || d != 0 {
		t.Fatalf("the burst: %s %v", d, ok)
	}
	for range 5 {
		if _, ok := tb.reserve("a", now.Add(500*time.Millisecond)); ok {
			t.Fatal("a turn a second away was given to a caller with half a second")
		}
	}
	if d, ok := tb.reserve("a", now.Add(2*time.Second)); !ok || d != time.Second {
		t.Errorf("the next caller waits %s (%v), want 1s: the refused ones took tokens", d, ok)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	tb.now = time.Now
	if err := tb.Wait(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := tb.Wait(ctx, "b"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait past the deadline: %v", err)
	}
}

func TestTokenBucketWait(t *testing.T) {
	tb := NewTokenBucket(1, 1)
	ctx := context.Background()
	if err := tb.Wait(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	// The next token is a second away: a caller whose context ends first
	// gets its error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := tb.Wait(cctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait past the context: %v", err)
	}
	// No limit at all.
	free := NewTokenBucket(0, 0)
	for range 1000 {
		if err := free.Wait(cctx, "k"); err != nil {
			t.Fatal(err)
		}
	}
}
