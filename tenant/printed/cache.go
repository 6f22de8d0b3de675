package printed

import (
	"context"
	"sync"
	"time"

	"facturad/tenant"
)

// Cache keeps what companies print for a short while, so that an export
// or an archive sweep of many documents of one company reads its logo
// once, not once a document. A change of a company's logo or notes shows
// on the documents printed after at most the cache's TTL (on every
// replica). Make it with NewCache; it is safe for concurrent use.
type Cache struct {
	c   Companies
	ttl time.Duration
	max int
	now func() time.Time

	mu sync.Mutex
	m  map[int64]cached
}

type cached struct {
	p  tenant.CompanyPrint
	at time.Time
}

// Defaults of NewCache.
const (
	// DefaultCacheTTL is how long what a company prints is kept.
	DefaultCacheTTL = 30 * time.Second
	// DefaultCacheSize is how many companies' are kept (each up to a
	// 256 KiB logo).
	DefaultCacheSize = 32
)

// NewCache returns a Cache in front of c that keeps up to size companies'
// logo and notes for ttl each (0 or less: the defaults).
func NewCache(c Companies, ttl time.Duration, size int) *Cache {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	if size <= 0 {
		size = DefaultCacheSize
	}
	return &Cache{c: c, ttl: ttl, max: size, now: time.Now, m: map[int64]cached{}}
}

var _ Companies = (*Cache)(nil)

// CompanyPrint returns the company's logo and notes, read within the TTL.
// An error is not kept.
func (c *Cache) CompanyPrint(ctx context.Context, companyID int64) (tenant.CompanyPrint, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[companyID]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl {
		return e.p, nil
	}
	p, err := c.c.CompanyPrint(ctx, companyID)
	if err != nil {
		return tenant.CompanyPrint{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[companyID]; !ok && len(c.m) >= c.max {
		// Make room: drop the one read longest ago.
		var oldest int64
		first := true
		for id, e := range c.m {
			if first || e.at.Before(c.m[oldest].at) {
				oldest, first = id, false
			}
		}
		delete(c.m, oldest)
	}
	c.m[companyID] = cached{p: p, at: now}
	return p, nil
}
