package signer

import (
	"container/list"
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// CertificateSource is where the cache gets companies' certificates: the
// tenant store satisfies it. CertificateVersion must be cheap (it runs on
// every signature); it changes whenever the company uploads a new
// certificate. CertificateP12 returns the .p12 file, its PIN and the version
// they belong to.
type CertificateSource interface {
	CertificateVersion(ctx context.Context, companyID int64) (int64, error)
	CertificateP12(ctx context.Context, companyID int64) (p12, pin []byte, version int64, err error)
}

// CacheOptions configures NewCache.
type CacheOptions struct {
	// Source provides the certificates. Required.
	Source CertificateSource
	// Size is the most companies kept parsed at once (least recently used
	// ones are dropped first). Default 1024.
	Size int
	// Policy is the signature policy of Cache.Sign; default PolicyV44.
	Policy Policy
	// Clock gives the signing time and the instant validity is checked at;
	// default time.Now.
	Clock func() time.Time
	// VersionCheckInterval is how long a version check is trusted before
	// the next use asks Source again. Zero (the default) asks on every use,
	// so a new upload is seen by the very next signature on every replica.
	VersionCheckInterval time.Duration
}

// Cache keeps one parsed certificate per company, so that signing never
// re-reads a .p12 while the company's certificate stays the same. Concurrent
// misses for one company share one load. It is safe for concurrent use.
type Cache struct {
	o CacheOptions

	mu      sync.Mutex
	entries map[int64]*cacheEntry
	lru     *list.List // of *cacheEntry, most recently used first

	loads atomic.Int64
}

type cacheEntry struct {
	companyID int64
	ready     chan struct{} // closed when the load finished

	// Set before ready is closed, read-only afterwards.
	cert    *Certificate
	key     crypto.Signer       // cert.Key, or what signs for it (see RSABackend)
	chain   []*x509.Certificate // Leaf followed by Chain, as Sign takes it
	version int64
	err     error // a load error tied to version (bad file or PIN)

	elem *list.Element // guarded by Cache.mu

	checkedAt atomic.Int64 // unix nanoseconds of the last version check
}

// NewCache returns an empty cache.
func NewCache(o CacheOptions) (*Cache, error) {
	if o.Source == nil {
		return nil, errors.New("signer cache: Source is required")
	}
	if o.Size <= 0 {
		o.Size = 1024
	}
	if o.Policy == (Policy{}) {
		o.Policy = PolicyV44
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return &Cache{o: o, entries: make(map[int64]*cacheEntry), lru: list.New()}, nil
}

// CacheStats are counters for tests and metrics.
type CacheStats struct {
	// Loads counts .p12 files read from the source and parsed.
	Loads int64
	// Entries is the number of companies currently cached.
	Entries int
}

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	n := len(c.entries)
	c.mu.Unlock()
	return CacheStats{Loads: c.loads.Load(), Entries: n}
}

// Invalidate drops a company's entry; the next use reloads it.
func (c *Cache) Invalidate(companyID int64) {
	c.mu.Lock()
	if e, ok := c.entries[companyID]; ok {
		c.removeLocked(e)
	}
	c.mu.Unlock()
}

// Sign signs doc with the company's current certificate (see Sign). A
// certificate that is expired or not yet valid at the signing time gives an
// error wrapping ErrCertificateExpired.
func (c *Cache) Sign(ctx context.Context, companyID int64, doc []byte, opts ...Option) ([]byte, error) {
	e, err := c.entry(ctx, companyID)
	if err != nil {
		return nil, err
	}
	now := c.o.Clock()
	if err := checkValidity(e.cert.Leaf, now); err != nil {
		return nil, fmt.Errorf("company %d: %w", companyID, err)
	}
	all := make([]Option, 0, len(opts)+1)
	all = append(all, WithClock(func() time.Time { return now }))
	all = append(all, opts...)
	out, err := Sign(doc, e.key, e.chain, c.o.Policy, all...)
	if err != nil {
		return nil, fmt.Errorf("company %d: %w", companyID, err)
	}
	return out, nil
}

// Certificate returns the company's current certificate, loading it when
// it is not cached or its version changed. It returns an error wrapping
// ErrCertificateExpired, together with the certificate, when the
// certificate is not valid now.
func (c *Cache) Certificate(ctx context.Context, companyID int64) (*Certificate, error) {
	e, err := c.entry(ctx, companyID)
	if err != nil {
		return nil, err
	}
	if err := checkValidity(e.cert.Leaf, c.o.Clock()); err != nil {
		return e.cert, fmt.Errorf("company %d: %w", companyID, err)
	}
	return e.cert, nil
}

// entry returns a loaded, current entry for the company.
func (c *Cache) entry(ctx context.Context, companyID int64) (*cacheEntry, error) {
	for attempt := 0; attempt < 3; attempt++ {
		c.mu.Lock()
		e, ok := c.entries[companyID]
		if !ok {
			e = c.insertLocked(companyID)
			c.mu.Unlock()
			c.load(ctx, e)
			return e.result(companyID)
		}
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()

		waited := false
		select {
		case <-e.ready:
		default:
			waited = true
			select {
			case <-e.ready:
			case <-ctx.Done():
				return nil, fmt.Errorf("company %d: wait for certificate: %w", companyID, context.Cause(ctx))
			}
		}
		if waited {
			// The load finished while we waited: it read the current
			// version moments ago.
			return e.result(companyID)
		}
		if c.o.VersionCheckInterval > 0 {
			last := e.checkedAt.Load()
			if time.Duration(time.Now().UnixNano()-last) < c.o.VersionCheckInterval {
				return e.result(companyID)
			}
		}
		v, err := c.o.Source.CertificateVersion(ctx, companyID)
		if err != nil {
			return nil, fmt.Errorf("company %d: certificate version: %w", companyID, err)
		}
		if v == e.version {
			e.checkedAt.Store(time.Now().UnixNano())
			return e.result(companyID)
		}
		// A new certificate was uploaded: swap in a fresh load, unless
		// another goroutine already did.
		c.replace(e)
	}
	return nil, fmt.Errorf("company %d: certificate keeps changing while loading", companyID)
}

func (e *cacheEntry) result(companyID int64) (*cacheEntry, error) {
	if e.err != nil {
		return nil, fmt.Errorf("company %d: %w", companyID, e.err)
	}
	return e, nil
}

// replace drops e if it is still the company's entry, so the next round
// loads afresh.
func (c *Cache) replace(e *cacheEntry) {
	c.mu.Lock()
	if cur, ok := c.entries[e.companyID]; ok && cur == e {
		c.removeLocked(e)
	}
	c.mu.Unlock()
}

func (c *Cache) insertLocked(companyID int64) *cacheEntry {
	e := &cacheEntry{companyID: companyID, ready: make(chan struct{})}
	e.elem = c.lru.PushFront(e)
	c.entries[companyID] = e
	for len(c.entries) > c.o.Size {
		oldest := c.lru.Back().Value.(*cacheEntry)
		c.removeLocked(oldest)
	}
	return e
}

func (c *Cache) removeLocked(e *cacheEntry) {
	c.lru.Remove(e.elem)
	delete(c.entries, e.companyID)
}

// load reads and parses the company's .p12 into e and marks it ready. A
// source failure is not remembered (the entry is dropped); a file that
// cannot be opened is remembered for its version, so a bad upload is not
// parsed again on every signature.
func (c *Cache) load(ctx context.Context, e *cacheEntry) {
	defer close(e.ready)
	p12, pin, version, err := c.o.Source.CertificateP12(ctx, e.companyID)
	if err != nil {
		e.err = fmt.Errorf("load certificate: %w", err)
		c.replace(e)
		return
	}
	c.loads.Add(1)
	cert, err := LoadPKCS12(p12, pin)
	e.version = version
	e.checkedAt.Store(time.Now().UnixNano())
	if err != nil {
		e.err = fmt.Errorf("load certificate: %w", err)
		return
	}
	e.cert = cert
	e.key = cacheKey(cert.Key)
	e.chain = append([]*x509.Certificate{cert.Leaf}, cert.Chain...)
}
