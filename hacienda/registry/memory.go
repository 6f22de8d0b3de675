package registry

import (
	"context"
	"sync"
	"time"
)

// MemoryCache is a Cache in process memory, for a single process and for
// tests: what it holds is not shared and does not outlive the process.
type MemoryCache struct {
	now func() time.Time

	mu sync.Mutex
	m  map[string]memoryEntry
}

type memoryEntry struct {
	v      []byte
	forget time.Time // zero: never
}

// NewMemoryCache returns an empty MemoryCache; now is the clock (time.Now
// when nil).
func NewMemoryCache(now func() time.Time) *MemoryCache {
	if now == nil {
		now = time.Now
	}
	return &MemoryCache{now: now, m: map[string]memoryEntry{}}
}

// Get implements Cache.
func (c *MemoryCache) Get(_ context.Context, key string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || !e.forget.IsZero() && !c.now().Before(e.forget) {
		return nil, false, nil
	}
	return e.v, true, nil
}

// Put implements Cache.
func (c *MemoryCache) Put(_ context.Context, key string, value []byte, keep time.Duration) error {
	e := memoryEntry{v: append([]byte(nil), value...)}
	if keep > 0 {
		e.forget = c.now().Add(keep)
	}
	c.mu.Lock()
	c.m[key] = e
	c.mu.Unlock()
	return nil
}
