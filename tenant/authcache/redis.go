package authcache

import (
	"context"
	"errors"
	"fmt"
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
}

// Redis is an auth cache shared by every replica.
type Redis struct {
	client  redis.UniversalClient
	prefix  string
	timeout time.Duration
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
	if c, ok := client.(*redis.Client); ok && !c.Options().ContextTimeoutEnabled {
		return nil, errors.New("authcache: the redis client needs ContextTimeoutEnabled so that calls obey their timeout")
	}
	if o.Prefix == "" {
		o.Prefix = "facturad:auth:"
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultRedisTimeout
	}
	return &Redis{client: client, prefix: o.Prefix, timeout: o.Timeout}, nil
}

// Get returns a live entry.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	v, err := r.client.Get(ctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("authcache: redis get: %w", err)
	}
	return v, true, nil
}

// Set stores value for ttl.
func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if err := r.client.Set(ctx, r.prefix+key, value, ttl).Err(); err != nil {
		return fmt.Errorf("authcache: redis set: %w", err)
	}
	return nil
}

// Delete removes entries in one round trip; missing keys are ignored.
func (r *Redis) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	// One DEL per key in a pipeline rather than one multi-key DEL, so that
	// a Redis Cluster can route each key to its own slot.
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Del(ctx, r.prefix+k)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("authcache: redis delete: %w", err)
	}
	return nil
}
