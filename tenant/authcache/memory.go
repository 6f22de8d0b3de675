// Package authcache keeps verified API credentials between requests, so
// that the slow password hash runs once per credential pair and TTL rather
// than on every request. Values are opaque bytes (the tenant Service encodes
// them). Memory is the in-process cache of a single node; Redis is shared
// by every replica, so that deleting an entry (a deactivated user) takes
// effect everywhere. Both are plain byte caches with a TTL per entry: the
// tax authority's registry answers are kept in them too (registry.Cache),
// under a prefix of their own.
package authcache

import (
	"context"
	"sync"
	"time"
)

// MemoryOptions configure a Memory cache.
type MemoryOptions struct {
	// MaxEntries bounds the cache; default 100000. When full, expired
	// entries are dropped first, then arbitrary ones.
	MaxEntries int
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Memory is a bounded in-process cache with a TTL per entry. It is safe for
// concurrent use.
type Memory struct {
	mu      sync.RWMutex
	entries map[string]memEntry
	max     int
	now     func() time.Time
}

type memEntry struct {
	value   []byte
	expires time.Time
}

// NewMemory returns an empty in-process cache.
func NewMemory(o MemoryOptions) *Memory {
	if o.MaxEntries <= 0 {
		o.MaxEntries = 100000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Memory{entries: make(map[string]memEntry), max: o.MaxEntries, now: o.Now}
}

// Get returns a live entry.
func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.RLock()
	e, ok := m.entries[key]
	m.mu.RUnlock()
	if !ok {
		return nil, false, nil
	}
	if !m.now().Before(e.expires) {
		m.mu.Lock()
		if cur, ok := m.entries[key]; ok && !m.now().Before(cur.expires) {
			delete(m.entries, key)
		}
		m.mu.Unlock()
		return nil, false, nil
	}
	return e.value, true, nil
}

// Set stores a copy of value for ttl.
func (m *Memory) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return nil
	}
	v := append([]byte(nil), value...)
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.entries[key]; !ok && len(m.entries) >= m.max {
		m.evict(now)
	}
	m.entries[key] = memEntry{value: v, expires: now.Add(ttl)}
	return nil
}

// evict makes room for one entry: expired entries go first; if none has
// expired, about one entry in sixteen is dropped (Go's map order is
// random), so that a full cache does not evict on every Set.
func (m *Memory) evict(now time.Time) {
	for k, e := range m.entries {
		if !now.Before(e.expires) {
			delete(m.entries, k)
		}
	}
	if len(m.entries) < m.max {
		return
	}
	drop := max(1, m.max/16)
	for k := range m.entries {
		if drop == 0 {
			break
		}
		delete(m.entries, k)
		drop--
	}
}

// Delete removes entries; missing keys are ignored.
func (m *Memory) Delete(_ context.Context, keys ...string) error {
	m.mu.Lock()
	for _, k := range keys {
		delete(m.entries, k)
	}
	m.mu.Unlock()
	return nil
}

// Len returns the number of entries, expired ones included.
func (m *Memory) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.entries)
}
