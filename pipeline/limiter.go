package pipeline

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The default pace of one company's calls to the tax authority. The tax
// authority publishes no limit; these keep one busy company from flooding
// it while leaving room for bursts of a point of sale.
const (
	DefaultRate  = 50.0 // calls per second, sustained
	DefaultBurst = 100  // calls at once after a quiet spell
)

// TokenBucket is an in-process Limiter: one bucket per key, refilled at
// rate tokens per second up to burst. Waiters take tokens in turn (a wait
// reserves its token, so the order is first come, first served). It is safe
// for concurrent use. With several replicas each paces only itself; a
// shared limiter (Redis) is the way to one pace across them.
type TokenBucket struct {
	rate  float64
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	calls   int
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewTokenBucket returns a limiter allowing rate calls per second per key
// with bursts of burst. A rate of zero or less means no limit.
func NewTokenBucket(rate float64, burst int) *TokenBucket {
	if burst < 1 {
		burst = 1
	}
	return &TokenBucket{rate: rate, burst: float64(burst), now: time.Now, buckets: map[string]*bucket{}}
}

// Wait blocks until key may make a call.
func (tb *TokenBucket) Wait(ctx context.Context, key string) error {
	if tb.rate <= 0 {
		return nil
	}
	var latest time.Time
	if dl, ok := ctx.Deadline(); ok {
		latest = dl
	}
	d, ok := tb.reserve(key, latest)
	if !ok {
		// The turn would come after the caller's deadline: waiting could
		// not help, and no token is taken.
		return fmt.Errorf("rate limit %s: the next turn is after the deadline: %w", key, context.DeadlineExceeded)
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		// The reserved token is not given back: the next waiter's turn
		// comes a little later, which errs on the side of the tax
		// authority.
		return fmt.Errorf("rate limit %s: %w", key, context.Cause(ctx))
	}
}

// reserve takes a token (possibly going into debt) and returns how long
// the caller must wait for it; when that is past latest (not zero), it
// takes nothing and returns false.
func (tb *TokenBucket) reserve(key string, latest time.Time) (time.Duration, bool) {
	now := tb.now()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	b, ok := tb.buckets[key]
	if !ok {
		b = &bucket{tokens: tb.burst, at: now}
		tb.buckets[key] = b
	}
	if el := now.Sub(b.at).Seconds(); el > 0 {
		b.tokens = min(tb.burst, b.tokens+el*tb.rate)
		b.at = now
	}
	if b.tokens < 1 && !latest.IsZero() {
		if wait := time.Duration((1 - b.tokens) / tb.rate * float64(time.Second)); now.Add(wait).After(latest) {
			return 0, false
		}
	}
	b.tokens--
	tb.calls++
	if tb.calls%1024 == 0 {
		tb.sweep(now)
	}
	if b.tokens >= 0 {
		return 0, true
	}
	return time.Duration(-b.tokens / tb.rate * float64(time.Second)), true
}

// sweep forgets the buckets that have been full for a while, so that the
// map does not grow with every company ever seen.
func (tb *TokenBucket) sweep(now time.Time) {
	full := time.Duration(tb.burst/tb.rate*float64(time.Second)) + time.Minute
	for k, b := range tb.buckets {
		if now.Sub(b.at) > full {
			delete(tb.buckets, k)
		}
	}
}
