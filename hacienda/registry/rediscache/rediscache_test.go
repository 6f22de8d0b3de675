package rediscache_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"facturad/hacienda/registry"
	"facturad/hacienda/registry/rediscache"
	"facturad/tenant/storetest"
)

var _ registry.Cache = (*rediscache.Cache)(nil)

// newCache returns a cache on the test Redis under a prefix of the test's
// own (its keys are deleted when the test ends) and the raw client.
func newCache(t *testing.T, o rediscache.Options) (*rediscache.Cache, *redis.Client) {
	t.Helper()
	opt, err := redis.ParseURL(storetest.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	opt.ContextTimeoutEnabled = true
	client := redis.NewClient(opt)
	t.Cleanup(func() { _ = client.Close() })
	if o.Prefix == "" {
		o.Prefix = "facturad-test:" + storetest.UniqueName(t) + ":"
	}
	prefix := o.Prefix
	t.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
	})
	// A slow shared CI machine: the default 100 ms is for production.
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Second
	}
	c, err := rediscache.New(client, o)
	if err != nil {
		t.Fatal(err)
	}
	return c, client
}

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	c, _ := newCache(t, rediscache.Options{})
	ctx := context.Background()
	for _, tt := range []struct {
		name, key string
		value     []byte
		keep      time.Duration
	}{
		{"json", "ae:3101123456", []byte(`{"found":true,"value":{"nombre":"ÑANDÚ S.A."}}`), time.Hour},
		{"every byte", "bytes", allBytes(), time.Hour},
		{"empty", "empty", []byte{}, time.Hour},
		{"nil is empty", "nil", nil, time.Hour},
		{"large", "large", bytes.Repeat(allBytes(), 4096), time.Hour},
		{"never forgotten", "tc:2020-01-02", []byte("560.1"), 0},
		{"key with spaces and patterns", "cabys:q=café * ? [a]", []byte("x"), time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.Put(ctx, tt.key, tt.value, tt.keep); err != nil {
				t.Fatalf("Put: %v", err)
			}
			got, ok, err := c.Get(ctx, tt.key)
			if err != nil || !ok {
				t.Fatalf("Get = %v, %v", ok, err)
			}
			want := tt.value
			if want == nil {
				want = []byte{}
			}
			if !bytes.Equal(got, want) || got == nil {
				t.Errorf("Get = %q, want %q", got, want)
			}
		})
	}
	if v, ok, err := c.Get(ctx, "ae:nobody"); err != nil || ok || v != nil {
		t.Errorf("Get of a missing key = %q, %v, %v; want absent", v, ok, err)
	}
}

// TestKeep: the keep is Redis's expiry on the prefixed key; 0 is none, and
// a put replaces the expiry with its own.
func TestKeep(t *testing.T) {
	prefix := "facturad-test:" + storetest.UniqueName(t) + ":"
	c, client := newCache(t, rediscache.Options{Prefix: prefix})
	ctx := context.Background()
	ttl := func(key string) time.Duration {
		t.Helper()
		d, err := client.PTTL(ctx, prefix+key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tt := range []struct {
		name          string
		keeps         []time.Duration // successive puts
		wantMin, want time.Duration   // the remaining TTL; -1: none
	}{
		{"an hour", []time.Duration{time.Hour}, 59 * time.Minute, time.Hour},
		{"never", []time.Duration{0}, -1, -1},
		{"an hour made never", []time.Duration{time.Hour, 0}, -1, -1},
		{"never made a minute", []time.Duration{0, time.Minute}, 59 * time.Second, time.Minute},
		{"a day made a minute", []time.Duration{24 * time.Hour, time.Minute}, 59 * time.Second, time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := strings.ReplaceAll(tt.name, " ", "-")
			for _, k := range tt.keeps {
				if err := c.Put(ctx, key, []byte("v"), k); err != nil {
					t.Fatalf("Put(keep %s): %v", k, err)
				}
			}
			got := ttl(key)
			if tt.want < 0 {
				if got != -1*time.Nanosecond && got != -1*time.Millisecond {
					t.Errorf("PTTL = %s, want none (-1)", got)
				}
				return
			}
			if got < tt.wantMin || got > tt.want {
				t.Errorf("PTTL = %s, want within [%s, %s]", got, tt.wantMin, tt.want)
			}
		})
	}
}

// TestExpires: Redis forgets a value on its own clock; wait for it.
func TestExpires(t *testing.T) {
	c, _ := newCache(t, rediscache.Options{})
	ctx := context.Background()
	if err := c.Put(ctx, "short", []byte("v"), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "long", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		_, ok, err := c.Get(ctx, "short")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a value kept 50 ms is still there after 3 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, ok, err := c.Get(ctx, "long"); err != nil || !ok {
		t.Errorf("the value kept an hour: %v, %v", ok, err)
	}
}

// TestPrefix: two caches with different prefixes do not see each other's
// keys.
func TestPrefix(t *testing.T) {
	a, _ := newCache(t, rediscache.Options{})
	b, _ := newCache(t, rediscache.Options{})
	ctx := context.Background()
	if err := a.Put(ctx, "k", []byte("a"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := b.Get(ctx, "k"); err != nil || ok {
		t.Errorf("another prefix sees %q, %v, %v", v, ok, err)
	}
	if err := b.Put(ctx, "k", []byte("b"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := a.Get(ctx, "k"); string(v) != "a" {
		t.Errorf("a's value became %q", v)
	}
}

func TestNegativeKeep(t *testing.T) {
	c, _ := newCache(t, rediscache.Options{})
	ctx := context.Background()
	if err := c.Put(ctx, "neg", []byte("v"), -time.Second); err == nil {
		t.Error("Put with a negative keep succeeded")
	}
	if _, ok, _ := c.Get(ctx, "neg"); ok {
		t.Error("a refused Put stored its value")
	}
	if err := c.Put(ctx, "neg", []byte("kept"), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "neg", []byte("v"), -time.Second); err == nil {
		t.Error("Put with a negative keep succeeded")
	}
	if v, _, _ := c.Get(ctx, "neg"); string(v) != "kept" {
		t.Errorf("a refused Put changed the value to %q", v)
	}
}

func TestNew(t *testing.T) {
	for _, tt := range []struct {
		name   string
		client redis.UniversalClient
	}{
		{"error/nil client", nil},
		{"error/no context timeouts", redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})},
		{"error/cluster without context timeouts", redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.client != nil {
				defer tt.client.Close()
			}
			if _, err := rediscache.New(tt.client, rediscache.Options{}); err == nil {
				t.Error("New succeeded")
			}
		})
	}
}

// TestRedisDown: a Redis that never answers fails each call with the
// cache's own timeout (the caller's context has no deadline), then calls
// fail fast while cooling down; a refused connection fails at once. A
// caller whose own context ended starts no cooldown.
func TestRedisDown(t *testing.T) {
	for _, tt := range []struct {
		name string
		addr func(testing.TB) string
	}{
		{"error/silent", storetest.BlackholeRedis},
		{"error/refused", storetest.ClosedAddr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := redis.NewClient(&redis.Options{Addr: tt.addr(t), ContextTimeoutEnabled: true, MaxRetries: -1})
			defer client.Close()
			const timeout = 50 * time.Millisecond
			c, err := rediscache.New(client, rediscache.Options{Timeout: timeout, Cooldown: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			start := time.Now()
			_, _, err = c.Get(ctx, "k")
			if took := time.Since(start); took > 20*timeout {
				t.Errorf("Get took %s with a %s timeout", took, timeout)
			}
			if err == nil || errors.Is(err, rediscache.ErrUnavailable) {
				t.Fatalf("first Get: %v, want Redis's failure", err)
			}
			start = time.Now()
			if _, _, err := c.Get(ctx, "k"); !errors.Is(err, rediscache.ErrUnavailable) {
				t.Errorf("Get while cooling down: %v", err)
			}
			if err := c.Put(ctx, "k", []byte("v"), time.Minute); !errors.Is(err, rediscache.ErrUnavailable) {
				t.Errorf("Put while cooling down: %v", err)
			}
			if took := time.Since(start); took > timeout {
				t.Errorf("calls while cooling down took %s", took)
			}
		})
	}
	t.Run("ok/the caller's own deadline starts no cooldown", func(t *testing.T) {
		client := redis.NewClient(&redis.Options{Addr: storetest.BlackholeRedis(t), ContextTimeoutEnabled: true, MaxRetries: -1})
		defer client.Close()
		c, err := rediscache.New(client, rediscache.Options{Timeout: time.Minute, Cooldown: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		if err := c.Put(ctx, "k", []byte("v"), time.Minute); err == nil || errors.Is(err, rediscache.ErrUnavailable) {
			t.Fatalf("Put past the caller's deadline: %v", err)
		}
		ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel2()
		if _, _, err := c.Get(ctx2, "k"); errors.Is(err, rediscache.ErrUnavailable) {
			t.Error("the caller's deadline started a cooldown")
		}
	})
}
