// Package redislimit is a pipeline.Limiter shared by every replica: one
// pace per key (per company) kept in Redis with GCRA (the generic cell rate
// algorithm), decided by one atomic Lua script on the server's clock, so
// replicas whose clocks disagree still share one limit. When Redis fails, a
// call is paced by an in-process token bucket instead, so an outage of
// Redis never stops submissions (each replica then paces only itself).
//
// It is the only package under pipeline that imports go-redis. The design
// is described in docs/design/pipeline.md ("Shared rate limit").
package redislimit

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"facturad/metrics"
	"facturad/pipeline"
)

//go:embed gcra.lua
var gcraSource string

// gcra is loaded with EVALSHA; go-redis sends the source with EVAL when the
// server answers NOSCRIPT (after a restart or a SCRIPT FLUSH).
var gcra = redis.NewScript(gcraSource)

// Defaults of Options.
const (
	DefaultPrefix    = "facturad:limit:"
	DefaultTimeout   = 75 * time.Millisecond
	DefaultCooldown  = time.Second
	DefaultReserve   = time.Second
	DefaultWarnEvery = time.Minute
	// MaxRate is the highest Rate: the script counts in microseconds.
	MaxRate = 100_000
)

// Options configure New. Every field has a default.
type Options struct {
	// Rate is the sustained number of calls per second of one key
	// (default pipeline.DefaultRate; negative: no limit; at most MaxRate);
	// Burst how many calls one key may make at once after a quiet spell
	// (default pipeline.DefaultBurst).
	Rate  float64
	Burst int
	// Prefix starts every Redis key, so that deployments (or tests) can
	// share one Redis; default DefaultPrefix. Keys are Prefix + the key
	// given to Wait.
	Prefix string
	// Timeout bounds each Redis call (default 75 ms): a Redis that stops
	// answering would otherwise hold the call until the caller's deadline.
	Timeout time.Duration
	// Cooldown is how long calls go straight to the fallback, without
	// trying Redis, after a Redis call failed (default 1 s), so that an
	// outage does not add Timeout to every call.
	Cooldown time.Duration
	// Reserve is how far ahead a call may take its turn in one round trip
	// (default 1 s): a call whose turn is nearer than that is admitted at
	// once and sleeps until its turn; a call whose turn is further sleeps
	// and asks again. Negative means never reserve (every waiter asks again
	// when its sleep is over). A reserved turn is not given back when the
	// caller's context ends; it is left unused, which errs on the side of
	// the tax authority.
	Reserve time.Duration
	// Fallback paces the calls made while Redis is failing; default a
	// pipeline.TokenBucket at Rate with no burst. Every replica then paces
	// alone, so the replicas together may exceed the shared pace: without
	// the burst, by at most (replicas − 1) × Rate calls a second, instead
	// of that plus a full burst from each the moment Redis is slow.
	Fallback pipeline.Limiter
	// Logger receives a warning when Redis fails, at most once per
	// WarnEvery (default 1 min) with the number of calls paced by the
	// fallback since the last one; default slog.Default().
	Logger    *slog.Logger
	WarnEvery time.Duration
	// Registerer receives the limiter's counter; default a private
	// registry (nothing exported).
	Registerer prometheus.Registerer
}

// Limiter is a pipeline.Limiter kept in Redis. It is safe for concurrent
// use.
type Limiter struct {
	client    redis.UniversalClient
	prefix    string
	timeout   time.Duration
	cooldown  time.Duration
	reserve   time.Duration
	fallback  pipeline.Limiter
	log       *slog.Logger
	warnEvery time.Duration
	// The script's arguments, in microseconds, formatted once.
	interval, tolerance string
	off                 bool // rate ≤ 0: no limit

	downUntil atomic.Int64 // unix nanos: cooling down until then
	lastWarn  atomic.Int64 // unix nanos of the last warning
	unwarned  atomic.Int64 // fallback calls since the last warning
	decisions *prometheus.CounterVec
}

var _ pipeline.Limiter = (*Limiter)(nil)

// New returns a limiter on a Redis client. The client must have
// ContextTimeoutEnabled set: go-redis otherwise ignores context deadlines
// on socket reads and writes, which would defeat Timeout.
func New(client redis.UniversalClient, o Options) (*Limiter, error) {
	if client == nil {
		return nil, errors.New("redislimit: redis client is nil")
	}
	ctxTimeouts := true // cannot tell for other clients; trust the caller
	switch c := client.(type) {
	case *redis.Client:
		ctxTimeouts = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		ctxTimeouts = c.Options().ContextTimeoutEnabled
	}
	if !ctxTimeouts {
		return nil, errors.New("redislimit: the redis client needs ContextTimeoutEnabled so that calls obey their timeout")
	}
	if o.Rate == 0 {
		o.Rate = pipeline.DefaultRate
	}
	if o.Rate > MaxRate {
		return nil, fmt.Errorf("redislimit: rate %g per second is above %g (a negative rate means no limit)", o.Rate, float64(MaxRate))
	}
	if o.Burst <= 0 {
		o.Burst = pipeline.DefaultBurst
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Cooldown <= 0 {
		o.Cooldown = DefaultCooldown
	}
	switch {
	case o.Reserve == 0:
		o.Reserve = DefaultReserve
	case o.Reserve < 0:
		o.Reserve = 0
	}
	if o.Fallback == nil {
		o.Fallback = pipeline.NewTokenBucket(o.Rate, 1)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.WarnEvery <= 0 {
		o.WarnEvery = DefaultWarnEvery
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	l := &Limiter{
		client:    client,
		prefix:    o.Prefix,
		timeout:   o.Timeout,
		cooldown:  o.Cooldown,
		reserve:   o.Reserve,
		fallback:  o.Fallback,
		log:       o.Logger,
		warnEvery: o.WarnEvery,
		off:       o.Rate < 0,
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "ratelimit",
			Name:      "decisions_total",
			Help:      "Rate-limiter calls, by who decided them: redis (shared by the replicas) or fallback (this process alone, Redis failing).",
		}, []string{"by"}),
	}
	if !l.off {
		interval := 1e6 / o.Rate
		l.interval = strconv.FormatFloat(interval, 'f', 3, 64)
		l.tolerance = strconv.FormatFloat(interval*float64(o.Burst), 'f', 3, 64)
	}
	// Both deciders exist at 0 from the start: the first fallback after a
	// restart is a rise a rate sees, and the panel shows 0, not no data.
	l.decisions.WithLabelValues("redis")
	l.decisions.WithLabelValues("fallback")
	if err := o.Registerer.Register(l.decisions); err != nil {
		return nil, fmt.Errorf("redislimit: register metrics: %w", err)
	}
	return l, nil
}

// Wait blocks until key may make a call, or returns an error wrapping the
// context's cause when ctx ends first. A call whose turn comes after ctx's
// deadline fails at once with an error wrapping context.DeadlineExceeded:
// turns never move earlier, so waiting could not help.
func (l *Limiter) Wait(ctx context.Context, key string) error {
	if l.off {
		return nil
	}
	for {
		if ctx.Err() != nil {
			return fmt.Errorf("rate limit %s: %w", key, context.Cause(ctx))
		}
		if time.Now().UnixNano() < l.downUntil.Load() {
			return l.fallbackWait(ctx, key, nil)
		}
		horizon, left := l.reserve, time.Duration(-1)
		if dl, ok := ctx.Deadline(); ok {
			left = max(time.Until(dl), 0)
			horizon = min(horizon, left)
		}
		admitted, wait, err := l.ask(ctx, key, horizon)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("rate limit %s: %w", key, context.Cause(ctx))
			}
			return l.fallbackWait(ctx, key, err)
		}
		l.decisions.WithLabelValues("redis").Inc()
		if admitted && wait <= 0 {
			return nil
		}
		sleep := wait
		if !admitted {
			if left >= 0 && wait > left {
				return fmt.Errorf("rate limit %s: next turn in %s, after the deadline: %w", key, wait.Round(time.Millisecond), context.DeadlineExceeded)
			}
			// Ask again when the turn is within reach of a reservation.
			sleep = wait - horizon
		}
		if err := sleepCtx(ctx, sleep); err != nil {
			return fmt.Errorf("rate limit %s: %w", key, err)
		}
		if admitted {
			return nil
		}
	}
}

// ask runs the script once under the limiter's own timeout.
func (l *Limiter) ask(ctx context.Context, key string, horizon time.Duration) (admitted bool, wait time.Duration, err error) {
	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	res, err := gcra.Run(cctx, l.client, []string{l.prefix + key},
		l.interval, l.tolerance, strconv.FormatInt(horizon.Microseconds(), 10)).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("redislimit: run script (timeout %s): %w", l.timeout, err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("redislimit: script answered %d values, want 2", len(res))
	}
	return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
}

// fallbackWait paces the call in process. err is the Redis failure that
// sent it here (nil while cooling down after an earlier one).
func (l *Limiter) fallbackWait(ctx context.Context, key string, err error) error {
	l.decisions.WithLabelValues("fallback").Inc()
	n := l.unwarned.Add(1)
	if err != nil {
		now := time.Now()
		l.downUntil.Store(now.Add(l.cooldown).UnixNano())
		last := l.lastWarn.Load()
		if now.UnixNano()-last >= int64(l.warnEvery) && l.lastWarn.CompareAndSwap(last, now.UnixNano()) {
			l.unwarned.Add(-n)
			l.log.WarnContext(ctx, "rate limiter: redis failed, pacing in this process only",
				"err", err, "fallback_calls", n, "cooldown_s", l.cooldown.Seconds())
		}
	}
	return l.fallback.Wait(ctx, key)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
