package authcache

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptions configure a Redis cache.
type RedisOptions struct {
	// Prefix starts every key, so that several deployments (or tests) can
	// share one Redis; default "facturad:auth:".
	Prefix string
	// Timeout bounds every call; default 75 ms. A Redis that stops
	// answering would otherwise hold each request until its own deadline.
	Timeout time.Duration
	// Cooldown is how long Get and Set fail fast, without calling Redis,
	// after a call failed; default 1 s. It keeps a Redis outage from adding
	// a timeout to every request. Delete always calls Redis: dropping
	// credentials must be tried whatever happened before.
	Cooldown time.Duration
}

// ErrUnavailable is returned without calling Redis while a recent failure
// is cooling down.
var ErrUnavailable = errors.New("authcache: redis unavailable (cooling down after a failure)")

// Redis is an auth cache shared by every replica.
type Redis struct {
	client    redis.UniversalClient
	prefix    string
	timeout   time.Duration
	cooldown  time.Duration
	downUntil atomic.Int64 // unix nanos
}

// DefaultRedisTimeout is the default per-call timeout.
const DefaultRedisTimeout = 75 * time.Millisecond

// NewRedis returns a cache on a Redis client. The client must have
// ContextTimeoutEnabled set: go-redis otherwise ignores context deadlines
// on socket reads and writes and waits its own ReadTimeout (seconds) on an
// unresponsive server, which would defeat the per-call timeout.
func NewRedis(client redis.UniversalClient, o RedisOptions) (*Redis, error) {
	if client == nil {
		return nil, errors.New("authcache: redis client is nil")
	}
	var ctxTimeouts bool
	switch c := client.(type) {
	case *redis.Client:
		ctxTimeouts = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		ctxTimeouts = c.Options().ContextTimeoutEnabled
	default:
		ctxTimeouts = true // cannot tell; trust the caller
	}
	if !ctxTimeouts {
		return nil, errors.New("authcache: the redis client needs ContextTimeoutEnabled so that calls obey their timeout")
	}
	if o.Prefix == "" {
		o.Prefix = "facturad:auth:"
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultRedisTimeout
	}
	if o.Cooldown <= 0 {
		o.Cooldown = time.Second
	}
	return &Redis{client: client, prefix: o.Prefix, timeout: o.Timeout, cooldown: o.Cooldown}, nil
}

func (r *Redis) coolingDown() bool {
	return time.Now().UnixNano() < r.downUntil.Load()
}

// failed starts a cooldown unless the caller's own context ended (that is
// not Redis's fault). The socket's deadline, set from the caller's, may
// fire a moment before the context reports it: a deadline reached counts
// as ended.
func (r *Redis) failed(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return
	}
	r.downUntil.Store(time.Now().Add(r.cooldown).UnixNano())
}

// Get returns a live entry.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if r.coolingDown() {
		return nil, false, ErrUnavailable
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	v, err := r.client.Get(cctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		r.failed(ctx)
		return nil, false, fmt.Errorf("authcache: redis get: %w", err)
	}
	return v, true, nil
}

// Set stores value for ttl.
func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return nil
	}
	if r.coolingDown() {
		return ErrUnavailable
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if err := r.client.Set(cctx, r.prefix+key, value, ttl).Err(); err != nil {
		r.failed(ctx)
		return fmt.Errorf("authcache: redis set: %w", err)
	}
	return nil
}

// Delete removes entries in one round trip; missing keys are ignored.
func (r *Redis) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	// One DEL per key in a pipeline rather than one multi-key DEL, so that
	// a Redis Cluster can route each key to its own slot.
	_, err := r.client.Pipelined(cctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Del(cctx, r.prefix+k)
		}
		return nil
	})
	if err != nil {
		r.failed(ctx)
		return fmt.Errorf("authcache: redis delete: %w", err)
	}
	return nil
}
