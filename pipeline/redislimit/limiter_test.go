package redislimit_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"facturad/pipeline/redislimit"
	"facturad/tenant/storetest"
)

// slow is a rate no test outlives: after the burst, the next turn is an
// hour away, so whether a call was admitted never depends on timing.
const slow = 1.0 / 3600

// newClient connects to the test Redis the way the service does.
func newClient(t testing.TB) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(storetest.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	opt.ContextTimeoutEnabled = true
	client := redis.NewClient(opt)
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// uniquePrefix returns a key prefix of the test's own, whose keys are
// deleted when the test ends.
func uniquePrefix(t testing.TB, client *redis.Client) string {
	t.Helper()
	prefix := "facturad-test:" + storetest.UniqueName(t) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
	})
	return prefix
}

// redisTimeout bounds each Redis call of the tests' limiters unless a test
// sets its own. The tests against a live Redis are about what Redis
// decides; on a loaded machine a round trip can outlast the production
// default (DefaultTimeout), and the call would then be paced by the
// in-process fallback instead, which keeps neither the shared rate nor
// the burst. The tests that count admissions also check that the
// fallback decided nothing.
const redisTimeout = 10 * time.Second

// newLimiter returns a limiter on client whose Redis calls time out after
// redisTimeout unless o sets a Timeout.
func newLimiter(t testing.TB, client redis.UniversalClient, o redislimit.Options) *redislimit.Limiter {
	t.Helper()
	if o.Timeout == 0 {
		o.Timeout = redisTimeout
	}
	l, err := redislimit.New(client, o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// waitFor calls Wait under a context that ends after d.
func waitFor(l *redislimit.Limiter, key string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return l.Wait(ctx, key)
}

// TestSharedRate: two limiters on two connections sharing a prefix (two
// replicas) together admit no more than one key's burst plus its rate over
// the time elapsed, and about that many: each alone would admit as much.
func TestSharedRate(t *testing.T) {
	const (
		rate   = 40.0
		burst  = 5
		window = 1500 * time.Millisecond
	)
	c1, c2 := newClient(t), newClient(t)
	prefix := uniquePrefix(t, c1)
	regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}
	replicas := []*redislimit.Limiter{
		newLimiter(t, c1, redislimit.Options{Rate: rate, Burst: burst, Prefix: prefix, Registerer: regs[0]}),
		newLimiter(t, c2, redislimit.Options{Rate: rate, Burst: burst, Prefix: prefix, Registerer: regs[1]}),
	}
	ctx, cancel := context.WithTimeout(context.Background(), window)
	defer cancel()
	var admitted [2]atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i, l := range replicas {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for l.Wait(ctx, "company:1") == nil {
					admitted[i].Add(1)
				}
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	noFallback(t, regs...)
	total := admitted[0].Load() + admitted[1].Load()
	upper := int64(burst + rate*elapsed.Seconds() + 1)
	lower := int64(burst + rate*window.Seconds()/2)
	t.Logf("admitted %d (%d + %d) in %v; bounds [%d, %d]", total, admitted[0].Load(), admitted[1].Load(), elapsed, lower, upper)
	if total > upper {
		t.Errorf("admitted %d calls in %v, more than burst + rate × elapsed + 1 = %d", total, elapsed, upper)
	}
	if total < lower {
		t.Errorf("admitted %d calls in %v, fewer than %d: the limiter is far below its rate", total, elapsed, lower)
	}
	if admitted[0].Load() == 0 || admitted[1].Load() == 0 {
		t.Errorf("one replica was never admitted: %d, %d", admitted[0].Load(), admitted[1].Load())
	}
}

// TestBurst: a quiet key admits exactly burst calls at once, split across
// replicas, and the next call fails at once when its turn comes after the
// caller's deadline.
func TestBurst(t *testing.T) {
	c1, c2 := newClient(t), newClient(t)
	prefix := uniquePrefix(t, c1)
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	a := newLimiter(t, c1, redislimit.Options{Rate: slow, Burst: 10, Prefix: prefix, Registerer: regA})
	b := newLimiter(t, c2, redislimit.Options{Rate: slow, Burst: 10, Prefix: prefix, Registerer: regB})
	defer noFallback(t, regA, regB)
	for i := range 10 {
		l := a
		if i%2 == 1 {
			l = b
		}
		if err := waitFor(l, "k", 10*time.Second); err != nil {
			t.Fatalf("call %d of the burst: %v", i+1, err)
		}
	}
	start := time.Now()
	err := waitFor(a, "k", time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call after the burst: %v, want an error wrapping context.DeadlineExceeded", err)
	}
	// The turn is an hour away: the call must not sit out its minute.
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("call after the burst returned after %v, want at once", d)
	}
	t.Logf("call after the burst: %v", err)
}

// TestKeysIndependent: one key's exhausted burst does not touch another's.
func TestKeysIndependent(t *testing.T) {
	client := newClient(t)
	l := newLimiter(t, client, redislimit.Options{Rate: slow, Burst: 2, Prefix: uniquePrefix(t, client)})
	for _, key := range []string{"a", "b"} {
		for i := range 2 {
			if err := waitFor(l, key, 10*time.Second); err != nil {
				t.Fatalf("key %s call %d: %v", key, i+1, err)
			}
		}
		if err := waitFor(l, key, 10*time.Second); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("key %s third call: %v, want deadline exceeded", key, err)
		}
	}
}

// TestCancel: a waiter whose context is cancelled (no deadline: it sleeps
// toward a turn an hour away) returns promptly with the cause.
func TestCancel(t *testing.T) {
	client := newClient(t)
	l := newLimiter(t, client, redislimit.Options{Rate: slow, Burst: 1, Prefix: uniquePrefix(t, client)})
	if err := waitFor(l, "k", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	stopping := errors.New("stopping")
	done := make(chan error, 1)
	go func() { done <- l.Wait(ctx, "k") }()
	time.Sleep(50 * time.Millisecond)
	cancel(stopping)
	select {
	case err := <-done:
		if !errors.Is(err, stopping) {
			t.Fatalf("Wait after cancel: %v, want the cause", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return after its context was cancelled")
	}
}

// TestReservedTurn: with a rate that lets turns come within the test, a
// call past the burst is admitted (after sleeping toward its turn), both
// when it reserves its turn and when it asks again each time.
func TestReservedTurn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reserve time.Duration
	}{
		{"ok/reserve", time.Second},
		{"ok/ask-again", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(t)
			l := newLimiter(t, client, redislimit.Options{Rate: 20, Burst: 1, Prefix: uniquePrefix(t, client), Reserve: tc.reserve})
			for i := range 3 {
				if err := waitFor(l, "k", 10*time.Second); err != nil {
					t.Fatalf("call %d: %v", i+1, err)
				}
			}
		})
	}
}

// TestTTL: keys expire when their key is back to a full burst, so idle
// companies leave nothing in Redis.
func TestTTL(t *testing.T) {
	client := newClient(t)
	prefix := uniquePrefix(t, client)
	// 1 call per second, burst 5: after 3 calls the key is 3 s from full.
	l := newLimiter(t, client, redislimit.Options{Rate: 1, Burst: 5, Prefix: prefix})
	for range 3 {
		if err := waitFor(l, "k", 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	ttl, err := client.PTTL(context.Background(), prefix+"k").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 0 || ttl > 3*time.Second {
		t.Fatalf("key TTL %v, want in (0, 3s]", ttl)
	}
	t.Logf("TTL after 3 calls at 1/s: %v", ttl)
	if n, err := client.Exists(context.Background(), prefix+"other").Result(); err != nil || n != 0 {
		t.Fatalf("a key never used exists: %d, %v", n, err)
	}
}

// TestRedisDown: with Redis refusing connections or never answering, calls
// are paced by the in-process fallback, which keeps the rate but not the
// burst (every replica paces alone then): one call is admitted at once,
// the next fails by its deadline instead of blocking, and the outage is
// logged once, not per call.
func TestRedisDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		addr func(t testing.TB) string
	}{
		{"error/refused", storetest.ClosedAddr},
		{"error/silent", storetest.BlackholeRedis},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := redis.NewClient(&redis.Options{Addr: tc.addr(t), ContextTimeoutEnabled: true, MaxRetries: -1})
			t.Cleanup(func() { _ = client.Close() })
			var logs bytes.Buffer
			var mu sync.Mutex
			reg := prometheus.NewRegistry()
			l := newLimiter(t, client, redislimit.Options{
				Rate: slow, Burst: 3, Timeout: 30 * time.Millisecond, Cooldown: 50 * time.Millisecond,
				Logger:     slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil)),
				Registerer: reg,
			})
			if err := waitFor(l, "k", 10*time.Second); err != nil {
				t.Fatalf("first call with Redis down: %v", err)
			}
			time.Sleep(60 * time.Millisecond) // past the cooldown: Redis is tried again
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- l.Wait(ctx, "k") }()
			select {
			case err := <-done:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("second call at once (Burst 3 is not the fallback's): %v, want deadline exceeded", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Wait blocked with Redis down")
			}
			mu.Lock()
			out := logs.String()
			mu.Unlock()
			if n := strings.Count(out, "redis failed"); n != 1 {
				t.Fatalf("logged the outage %d times, want once:\n%s", n, out)
			}
			if n := decisions(t, reg, "fallback"); n != 2 {
				t.Fatalf("decisions by the fallback = %v, want 2", n)
			}
			t.Logf("log: %s", strings.TrimSpace(out))
		})
	}
}

// TestErrorAnswer: an error answer of Redis (here a key of another type
// under the limiter's prefix) sends the call to the fallback too.
func TestErrorAnswer(t *testing.T) {
	client := newClient(t)
	prefix := uniquePrefix(t, client)
	if err := client.HSet(context.Background(), prefix+"k", "f", "v").Err(); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	l := newLimiter(t, client, redislimit.Options{
		Rate: slow, Burst: 1, Prefix: prefix, Registerer: reg,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err := waitFor(l, "k", 10*time.Second); err != nil {
		t.Fatalf("first call: %v", err)
	}
	if err := waitFor(l, "k", 100*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second call: %v, want deadline exceeded (the fallback limits)", err)
	}
	if n := decisions(t, reg, "fallback"); n != 2 {
		t.Fatalf("decisions by the fallback = %v, want 2", n)
	}
}

func TestNew(t *testing.T) {
	if _, err := redislimit.New(nil, redislimit.Options{}); err == nil {
		t.Error("error/nil client: accepted")
	}
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	if _, err := redislimit.New(client, redislimit.Options{}); err == nil {
		t.Error("error/no context timeouts: accepted")
	}
	ok := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer ok.Close()
	if _, err := redislimit.New(ok, redislimit.Options{Rate: 2 * redislimit.MaxRate}); err == nil {
		t.Error("error/rate above MaxRate: accepted")
	}
	if _, err := redislimit.New(ok, redislimit.Options{}); err != nil {
		t.Errorf("ok/defaults: %v", err)
	}
}

// TestNoLimit: a negative rate admits every call without asking Redis (the
// address is closed: a call to Redis would be counted as a fallback).
func TestNoLimit(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: storetest.ClosedAddr(t), ContextTimeoutEnabled: true})
	defer client.Close()
	reg := prometheus.NewRegistry()
	l := newLimiter(t, client, redislimit.Options{Rate: -1, Registerer: reg})
	for range 1000 {
		if err := l.Wait(context.Background(), "k"); err != nil {
			t.Fatal(err)
		}
	}
	if n := decisions(t, reg, "fallback"); n != 0 {
		t.Fatalf("fallback decisions %v, want 0", n)
	}
}

// BenchmarkWait measures one admission: one round trip running the script
// (the rate is high enough that no call waits).
func BenchmarkWait(b *testing.B) {
	client := newClient(b)
	l := newLimiter(b, client, redislimit.Options{
		Rate: redislimit.MaxRate, Burst: 1e6, Prefix: uniquePrefix(b, client), Fallback: failing{b},
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Wait(ctx, "company:1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWaitParallel is BenchmarkWait from 8×GOMAXPROCS goroutines on
// 64 keys (the connection pool's default size is 10×GOMAXPROCS).
func BenchmarkWaitParallel(b *testing.B) {
	client := newClient(b)
	l := newLimiter(b, client, redislimit.Options{
		Rate: redislimit.MaxRate, Burst: 1e6, Prefix: uniquePrefix(b, client), Fallback: failing{b},
	})
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = "company:" + strconv.Itoa(i)
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		key := keys[next.Add(1)%int64(len(keys))]
		for pb.Next() {
			if err := l.Wait(context.Background(), key); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// decisions returns the limiter's count of calls decided by "redis" or
// "fallback".
func decisions(t *testing.T, reg *prometheus.Registry, by string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "facturad_ratelimit_decisions_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "by" && lp.GetValue() == by {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// noFallback fails the test when any of the limiters registered with regs
// had a call decided by the fallback: what the test counted was then not
// the shared limit.
func noFallback(t *testing.T, regs ...*prometheus.Registry) {
	t.Helper()
	for i, reg := range regs {
		if n := decisions(t, reg, "fallback"); n != 0 {
			t.Errorf("limiter %d: %v calls decided by the fallback, want 0 (a Redis call failed or outlasted %s)", i+1, n, redisTimeout)
		}
	}
}

// failing is a fallback that fails the benchmark: every call must be
// decided by Redis.
type failing struct{ b *testing.B }

func (f failing) Wait(context.Context, string) error {
	f.b.Error("the fallback was used")
	return errors.New("fallback used")
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (lw *lockedWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.Write(p)
}
