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
		if d := tb.reserve("a"); d != 0 {
			t.Fatalf("call %d of the burst waits %s", i, d)
		}
	}
	for i, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond} {
		if d := tb.reserve("a"); d != want {
			t.Fatalf("call %d after the burst waits %s, want %s", i, d, want)
		}
	}
	// Keys are independent.
	if d := tb.reserve("b"); d != 0 {
		t.Errorf("another key waits %s", d)
	}
	// Time refills the bucket, never beyond the burst.
	now = now.Add(time.Hour)
	for i := range 3 {
		if d := tb.reserve("a"); d != 0 {
			t.Fatalf("after a quiet hour, call %d waits %s", i, d)
		}
	}
	if d := tb.reserve("a"); d == 0 {
		t.Error("the bucket refilled beyond its burst")
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
