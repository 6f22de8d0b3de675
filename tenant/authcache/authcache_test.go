package authcache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"facturad/tenant/authcache"
	"facturad/tenant/storetest"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestMemory(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	m := authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now})

	v := []byte("value")
	if err := m.Set(ctx, "k", v, time.Minute); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X' // the cache keeps its own copy
	got, ok, err := m.Get(ctx, "k")
	if err != nil || !ok || string(got) != "value" {
		t.Fatalf("Get = %q, %v, %v", got, ok, err)
	}
	if _, ok, _ := m.Get(ctx, "other"); ok {
		t.Fatal("missing key found")
	}
	clk.Add(59 * time.Second)
	if _, ok, _ := m.Get(ctx, "k"); !ok {
		t.Fatal("entry gone before its TTL")
	}
	clk.Add(time.Second)
	if _, ok, _ := m.Get(ctx, "k"); ok {
		t.Fatal("entry alive after its TTL")
	}
	if m.Len() != 0 {
		t.Fatalf("expired entry kept: %d", m.Len())
	}

	_ = m.Set(ctx, "a", []byte("1"), time.Minute)
	_ = m.Set(ctx, "b", []byte("2"), time.Minute)
	if err := m.Delete(ctx, "a", "missing"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := m.Get(ctx, "a"); ok {
		t.Fatal("deleted entry found")
	}
	if _, ok, _ := m.Get(ctx, "b"); !ok {
		t.Fatal("untouched entry lost")
	}
	if err := m.Set(ctx, "zero", []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := m.Get(ctx, "zero"); ok {
		t.Fatal("an entry with no TTL was kept")
	}
}

func TestMemoryBounded(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	m := authcache.NewMemory(authcache.MemoryOptions{MaxEntries: 64, Now: clk.Now})
	for i := range 1000 {
		if err := m.Set(ctx, fmt.Sprint(i), []byte("v"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if m.Len() > 64 {
			t.Fatalf("cache grew to %d entries, bound 64", m.Len())
		}
	}
	if _, ok, _ := m.Get(ctx, "999"); !ok {
		t.Fatal("the newest entry was evicted")
	}
	// Expired entries go first.
	clk.Add(2 * time.Hour)
	_ = m.Set(ctx, "fresh", []byte("v"), time.Hour)
	if m.Len() != 1 {
		t.Fatalf("expired entries kept on a full cache: %d", m.Len())
	}
}

func TestMemoryConcurrent(t *testing.T) {
	ctx := context.Background()
	m := authcache.NewMemory(authcache.MemoryOptions{MaxEntries: 100})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				k := fmt.Sprint(g*1000 + i%150)
				_ = m.Set(ctx, k, []byte(k), time.Minute)
				if v, ok, _ := m.Get(ctx, k); ok && string(v) != k {
					t.Errorf("key %s holds %s", k, v)
				}
				if i%7 == 0 {
					_ = m.Delete(ctx, k)
				}
			}
		}()
	}
	wg.Wait()
}

func newRedis(t *testing.T, o authcache.RedisOptions) (*authcache.Redis, *redis.Client) {
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
	r, err := authcache.NewRedis(client, o)
	if err != nil {
		t.Fatal(err)
	}
	return r, client
}

func TestRedis(t *testing.T) {
	ctx := context.Background()
	prefix := "facturad-test:" + storetest.UniqueName(t) + ":"
	r, client := newRedis(t, authcache.RedisOptions{Prefix: prefix})

	if _, ok, err := r.Get(ctx, "k"); ok || err != nil {
		t.Fatalf("missing key: %v, %v", ok, err)
	}
	if err := r.Set(ctx, "k", []byte("value\x00\xff"), time.Minute); err != nil {
		t.Fatal(err)
	}
	got, ok, err := r.Get(ctx, "k")
	if err != nil || !ok || string(got) != "value\x00\xff" {
		t.Fatalf("Get = %q, %v, %v", got, ok, err)
	}
	// The key carries the prefix and the TTL.
	ttl, err := client.TTL(ctx, prefix+"k").Result()
	if err != nil || ttl <= 0 || ttl > time.Minute {
		t.Fatalf("TTL of %sk = %v, %v", prefix, ttl, err)
	}
	// Another prefix does not see it.
	other, _ := newRedis(t, authcache.RedisOptions{})
	if _, ok, _ := other.Get(ctx, "k"); ok {
		t.Fatal("a cache with another prefix sees the key")
	}
	_ = r.Set(ctx, "k2", []byte("2"), time.Minute)
	if err := r.Delete(ctx, "k", "k2", "missing"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k", "k2"} {
		if _, ok, _ := r.Get(ctx, k); ok {
			t.Fatalf("%s survived Delete", k)
		}
	}
	if err := r.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRedisTTLExpires(t *testing.T) {
	ctx := context.Background()
	r, _ := newRedis(t, authcache.RedisOptions{})
	if err := r.Set(ctx, "short", []byte("v"), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// Redis expires the key on its own clock; wait for it rather than
	// asserting a duration.
	for range 200 {
		if _, ok, _ := r.Get(ctx, "short"); !ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the entry never expired")
}

func TestNewRedisNeedsContextTimeouts(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	if _, err := authcache.NewRedis(client, authcache.RedisOptions{}); err == nil {
		t.Fatal("a client that ignores context deadlines was accepted")
	}
	if _, err := authcache.NewRedis(nil, authcache.RedisOptions{}); err == nil {
		t.Fatal("a nil client was accepted")
	}
}

// TestRedisUnresponsive: a Redis that accepts connections and never answers
// fails each call with the cache's own timeout (the caller's context has no
// deadline, so without it the call would hang), then fails fast while
// cooling down.
func TestRedisUnresponsive(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: storetest.BlackholeRedis(t), ContextTimeoutEnabled: true, MaxRetries: -1})
	defer client.Close()
	r, err := authcache.NewRedis(client, authcache.RedisOptions{Timeout: 30 * time.Millisecond, Cooldown: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	_, _, err = r.Get(ctx, "k")
	if err == nil || errors.Is(err, authcache.ErrUnavailable) {
		t.Fatalf("first Get on a silent Redis: %v", err)
	}
	t.Logf("first Get failed after %v: %v", time.Since(start), err)
	if _, _, err := r.Get(ctx, "k"); !errors.Is(err, authcache.ErrUnavailable) {
		t.Fatalf("Get while cooling down: %v", err)
	}
	if err := r.Set(ctx, "k", []byte("v"), time.Minute); !errors.Is(err, authcache.ErrUnavailable) {
		t.Fatalf("Set while cooling down: %v", err)
	}
	// Delete still tries (and fails with the timeout, not the cooldown).
	if err := r.Delete(ctx, "k"); err == nil || errors.Is(err, authcache.ErrUnavailable) {
		t.Fatalf("Delete while cooling down: %v", err)
	}
}
