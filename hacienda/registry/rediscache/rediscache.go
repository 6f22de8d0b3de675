// Package rediscache is the registry's cache (registry.Cache) in Redis,
// shared by every replica: one Redis string per key, under a prefix, with
// Redis's own expiry for the keep (none for a keep of 0).
//
// Every call runs under its own short timeout, whatever the caller's
// deadline: go-redis waits for an unresponsive (blackholed) Redis until the
// context ends, and a registry lookup must not stall on its cache. After a
// failed call, Get and Put fail fast for a cooldown without calling Redis,
// so that an outage does not add the timeout to every lookup; the registry
// treats a failing cache as a miss.
package rediscache

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of Options.
const (
	DefaultPrefix   = "facturad:registry:"
	DefaultTimeout  = 100 * time.Millisecond
	DefaultCooldown = time.Second
)

// Options configure New. Every field has a default.
type Options struct {
	// Prefix starts every key, so that deployments (or tests) can share
	// one Redis; default DefaultPrefix.
	Prefix string
	// Timeout bounds each call to Redis; default DefaultTimeout.
	Timeout time.Duration
	// Cooldown is how long calls fail with ErrUnavailable, without calling
	// Redis, after a call failed; default DefaultCooldown.
	Cooldown time.Duration
}

// ErrUnavailable is returned without calling Redis while a recent failure
// is cooling down.
var ErrUnavailable = errors.New("rediscache: redis unavailable (cooling down after a failure)")

// Cache is a registry cache in Redis. It is safe for concurrent use.
type Cache struct {
	client    redis.UniversalClient
	prefix    string
	timeout   time.Duration
	cooldown  time.Duration
	downUntil atomic.Int64 // unix nanos
}

// New returns a cache on a Redis client. The client must have
// ContextTimeoutEnabled set: go-redis otherwise ignores context deadlines
// on socket reads and writes and waits its own ReadTimeout (seconds) on an
// unresponsive server, which would defeat the per-call timeout.
func New(client redis.UniversalClient, o Options) (*Cache, error) {
	if client == nil {
		return nil, errors.New("rediscache: redis client is nil")
	}
	ctxTimeouts := true // a client of another type: trust the caller
	switch c := client.(type) {
	case *redis.Client:
		ctxTimeouts = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		ctxTimeouts = c.Options().ContextTimeoutEnabled
	}
	if !ctxTimeouts {
		return nil, errors.New("rediscache: the redis client needs ContextTimeoutEnabled so that calls obey their timeout")
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
	return &Cache{client: client, prefix: o.Prefix, timeout: o.Timeout, cooldown: o.Cooldown}, nil
}

func (c *Cache) coolingDown() bool { return time.Now().UnixNano() < c.downUntil.Load() }

// failed starts a cooldown unless the caller's own context ended (that is
// not Redis's fault). The socket's deadline, set from the caller's, may
// fire a moment before the context reports it: a deadline reached counts
// as ended.
func (c *Cache) failed(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return
	}
	c.downUntil.Store(time.Now().Add(c.cooldown).UnixNano())
}

// Get returns the value under key; ok is false when Redis has none (never
// stored, or expired).
func (c *Cache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if c.coolingDown() {
		return nil, false, ErrUnavailable
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	v, err := c.client.Get(cctx, c.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		c.failed(ctx)
		return nil, false, fmt.Errorf("rediscache: get: %w", err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

// Put stores value under key, replacing any value and expiry there, to
// expire keep from now (Redis keeps milliseconds); keep 0 means never. A
// negative keep is an error.
func (c *Cache) Put(ctx context.Context, key string, value []byte, keep time.Duration) error {
	if keep < 0 {
		return fmt.Errorf("rediscache: put: keep %s is negative", keep)
	}
	if keep > 0 && keep < time.Millisecond {
		keep = time.Millisecond // Redis's least expiry; 0 would mean never
	}
	if c.coolingDown() {
		return ErrUnavailable
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// A plain SET (no KEEPTTL) drops any expiry the key had, so a keep of
	// 0 over a kept value is never forgotten.
	if err := c.client.Set(cctx, c.prefix+key, value, keep).Err(); err != nil {
		c.failed(ctx)
		return fmt.Errorf("rediscache: put: %w", err)
	}
	return nil
}
