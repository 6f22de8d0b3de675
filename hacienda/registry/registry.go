package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
)

// Cache holds the registry's answers for every tenant and replica: Redis
// when the deployment has it, else the store (tenant/authcache's Redis and
// Memory caches, and tenant.RegistryCache, satisfy it). Values are opaque
// bytes.
type Cache interface {
	// Get returns the value under key; ok is false when there is none (or
	// it was to be forgotten by now).
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	// Set stores value under key, to be forgotten after ttl; the registry
	// always gives a positive ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// Pacer paces the calls to the registry, over every replica when it is
// shared (the registry blocks an address that asks too often).
type Pacer interface {
	Wait(ctx context.Context, key string) error
}

// Defaults.
const (
	// DefaultTTL is how long an answer is fresh.
	DefaultTTL = 24 * time.Hour
	// Keep is how long an answer is kept past its TTL, to be served stale
	// while the registry cannot be reached.
	Keep = 7 * 24 * time.Hour
	// keepUnexpiring is how long an answer that never goes stale (a past
	// day's exchange rate) stays in the cache: for good, in practice.
	keepUnexpiring = 10 * 365 * 24 * time.Hour
	// NotRegisteredTTL bounds how long "not registered" is believed: a
	// buyer who registers today should be found today.
	NotRegisteredTTL = time.Hour
	// FailureBackoff is how long a process stops asking an endpoint after
	// it failed, unless the registry said how long (Retry-After).
	FailureBackoff = 30 * time.Second
	// DefaultPaceWait is Options.PaceWait's default.
	DefaultPaceWait = 3 * time.Second
	// BlockBackoff is how long every replica stops asking after the
	// registry blocked us (429 or 403) without saying how long: its
	// published block lasts 10 minutes.
	BlockBackoff = 10 * time.Minute
)

// Options configure a Registry.
type Options struct {
	Client *Client // required
	Cache  Cache   // required
	Pacer  Pacer   // nil: calls are not paced
	// TTL is how long an answer is fresh (DefaultTTL when 0). A past
	// day's exchange rate never expires.
	TTL time.Duration
	// Wait bounds how long a caller waits for an answer that is not
	// cached (the Client's own timeout bounds the call itself); 0: the
	// caller's context alone.
	Wait time.Duration
	// PaceWait bounds how long a call waits for its turn under the Pacer
	// (DefaultPaceWait when 0): a question whose turn is further away is
	// not asked now (the registry is "unavailable" for it), so that a
	// burst of new questions never piles up behind the pace.
	PaceWait   time.Duration
	Now        func() time.Time
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Registry answers questions about the registries from the shared cache,
// asking the registry (once per question at a time in this process) when
// the cache has no fresh answer.
type Registry struct {
	c     *Client
	cache Cache
	pacer Pacer
	ttl   time.Duration
	wait  time.Duration
	pace  time.Duration
	now   func() time.Time
	// ns prefixes every key with the registry's base URL's hash, so that
	// deployments sharing a cache but asking different registries (the
	// sandbox's and the real one) never read each other's answers.
	ns     string
	log    *slog.Logger
	m      *regMetrics
	flight singleflight.Group

	mu   sync.Mutex
	down map[string]time.Time // endpoint → no call before
	// local keeps fresh answers decoded for a minute, so that a warm
	// check costs no round trip to the shared cache.
	local map[string]localEntry
}

// localEntry is a fresh answer kept in process until until.
type localEntry struct {
	v     any
	meta  Meta
	err   error
	until time.Time
}

const (
	// LocalTTL is how long a process keeps a fresh answer to itself
	// before reading the shared cache again.
	LocalTTL = time.Minute
	// localMax bounds the answers kept in process.
	localMax = 20000
)

// New returns a Registry.
func New(o Options) (*Registry, error) {
	if o.Client == nil || o.Cache == nil {
		return nil, errors.New("registry: a client and a cache are required")
	}
	if o.TTL < 0 {
		return nil, fmt.Errorf("registry: TTL %s must be positive", o.TTL)
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PaceWait <= 0 {
		o.PaceWait = DefaultPaceWait
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256([]byte(o.Client.BaseURL()))
	return &Registry{c: o.Client, cache: o.Cache, pacer: o.Pacer, ttl: o.TTL, wait: o.Wait, pace: o.PaceWait,
		now: o.Now, log: o.Logger, m: m, ns: hex.EncodeToString(h[:4]) + ":",
		down: map[string]time.Time{}, local: map[string]localEntry{}}, nil
}

// Meta says where an answer comes from: when the registry gave it
// (Consultado) and whether it is served stale because the registry could
// not be asked again (Desactualizado).
type Meta struct {
	Consultado     time.Time
	Desactualizado bool
}

// entry is what the cache holds under a question's key.
type entry struct {
	// Found is false for the registry's "not registered".
	Found   bool            `json:"found"`
	Value   json.RawMessage `json:"value,omitempty"`
	Fetched time.Time       `json:"fetched"`
	// Expires is when the answer stops being fresh; zero: never.
	Expires time.Time `json:"expires,omitzero"`
}

func (e entry) fresh(now time.Time) bool { return e.Expires.IsZero() || now.Before(e.Expires) }

// question is one lookup: its endpoint (the metrics' label), its cache key,
// how long its answer is fresh, and how to ask the registry.
type question[T any] struct {
	endpoint string
	key      string
	ttl      time.Duration // 0: never expires
	ask      func(ctx context.Context) (T, error)
}

// lookup answers q from the cache or the registry. A "not registered"
// answer is ErrNotRegistered; a question the registry refused is a
// *MalformedError; when the registry cannot answer, a cached answer is
// served with Meta.Desactualizado, else the error is an *UnavailableError.
func lookup[T any](ctx context.Context, r *Registry, q question[T]) (T, Meta, error) {
	var zero T
	if le, ok := r.fromLocal(q.key); ok {
		r.m.cache.WithLabelValues(q.endpoint, "hit").Inc()
		v, _ := le.v.(T)
		return v, le.meta, le.err
	}
	cached, have := r.get(ctx, q.key)
	if have && cached.fresh(r.now()) {
		r.m.cache.WithLabelValues(q.endpoint, "hit").Inc()
		return keep[T](r, q.key, cached)
	}

	ch := r.flight.DoChan(q.key, func() (any, error) {
		// The call outlives a caller who stops waiting: the next one
		// finds its answer in the cache.
		ctx := context.WithoutCancel(ctx)
		// Another replica may have asked meanwhile.
		if e, ok := r.get(ctx, q.key); ok && e.fresh(r.now()) {
			return e, nil
		}
		return r.ask(ctx, q.endpoint, q.key, q.ttl, func(ctx context.Context) (any, error) { return q.ask(ctx) })
	})
	wctx := ctx
	if r.wait > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, r.wait)
		defer cancel()
	}
	var res singleflight.Result
	select {
	case res = <-ch:
	case <-wctx.Done():
		res.Err = &UnavailableError{Endpoint: q.endpoint, Err: fmt.Errorf("no answer in time: %w", context.Cause(wctx))}
	}
	if res.Err == nil {
		r.m.cache.WithLabelValues(q.endpoint, "miss").Inc()
		return keep[T](r, q.key, res.Val.(entry))
	}
	if have && Unavailable(res.Err) {
		r.m.cache.WithLabelValues(q.endpoint, "stale").Inc()
		return decode[T](cached, true)
	}
	r.m.cache.WithLabelValues(q.endpoint, "miss").Inc()
	return zero, Meta{}, res.Err
}

// keep decodes a fresh entry and keeps the answer in process.
func keep[T any](r *Registry, key string, e entry) (T, Meta, error) {
	v, meta, err := decode[T](e, false)
	if err != nil && !errors.Is(err, ErrNotRegistered) {
		return v, meta, err
	}
	until := r.now().Add(LocalTTL)
	if !e.Expires.IsZero() && e.Expires.Before(until) {
		until = e.Expires
	}
	r.mu.Lock()
	if len(r.local) >= localMax {
		clear(r.local)
	}
	r.local[key] = localEntry{v: v, meta: meta, err: err, until: until}
	r.mu.Unlock()
	return v, meta, err
}

// fromLocal returns the answer kept in process under key, while fresh.
func (r *Registry) fromLocal(key string) (localEntry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	le, ok := r.local[key]
	if !ok || !r.now().Before(le.until) {
		return localEntry{}, false
	}
	return le, true
}

// decode turns a cached entry into the answer.
func decode[T any](e entry, stale bool) (T, Meta, error) {
	var v T
	meta := Meta{Consultado: e.Fetched, Desactualizado: stale}
	if !e.Found {
		return v, meta, ErrNotRegistered
	}
	if err := json.Unmarshal(e.Value, &v); err != nil {
		return v, Meta{}, fmt.Errorf("registry cache: read an entry: %w", err)
	}
	return v, meta, nil
}

// ask calls the registry for one question and caches its answer. It is
// run once at a time per key.
func (r *Registry) ask(ctx context.Context, endpoint, key string, ttl time.Duration, call func(context.Context) (any, error)) (entry, error) {
	if err := r.blocked(ctx, endpoint); err != nil {
		r.m.calls.WithLabelValues(endpoint, "skipped").Inc()
		return entry{}, err
	}
	if r.pacer != nil {
		pctx, cancel := context.WithTimeout(ctx, r.pace)
		err := r.pacer.Wait(pctx, "registry")
		cancel()
		if err != nil {
			r.m.calls.WithLabelValues(endpoint, "skipped").Inc()
			return entry{}, &UnavailableError{Endpoint: endpoint, After: r.pace,
				Err: fmt.Errorf("not asked: too many questions at once for the registry's pace: %w", err)}
		}
	}
	start := time.Now()
	v, err := call(ctx)
	r.m.duration.Observe(time.Since(start).Seconds())
	now := r.now()
	e := entry{Fetched: now}
	switch {
	case err == nil:
		r.m.calls.WithLabelValues(endpoint, "ok").Inc()
		b, merr := json.Marshal(v)
		if merr != nil {
			return entry{}, fmt.Errorf("registry %s: encode the answer: %w", endpoint, merr)
		}
		e.Found, e.Value = true, b
		if ttl > 0 {
			e.Expires = now.Add(ttl)
		}
	case errors.Is(err, ErrNotRegistered):
		r.m.calls.WithLabelValues(endpoint, "not_registered").Inc()
		e.Expires = now.Add(min(r.ttl, NotRegisteredTTL))
	default:
		var mal *MalformedError
		if errors.As(err, &mal) {
			r.m.calls.WithLabelValues(endpoint, "malformed").Inc()
			return entry{}, err
		}
		r.m.calls.WithLabelValues(endpoint, "unavailable").Inc()
		r.failed(ctx, endpoint, err)
		return entry{}, err
	}
	r.put(ctx, key, e)
	return e, nil
}

// blocked refuses to call an endpoint that failed a moment ago in this
// process, or that blocked any replica (the shared mark).
func (r *Registry) blocked(ctx context.Context, endpoint string) error {
	now := r.now()
	r.mu.Lock()
	until := r.down[endpoint]
	r.mu.Unlock()
	if b, ok, _ := r.cache.Get(ctx, r.ns+blockKey); ok {
		var t time.Time
		if t.UnmarshalText(b) == nil && t.After(until) {
			until = t
		}
	}
	if now.Before(until) {
		return &UnavailableError{Endpoint: endpoint, After: until.Sub(now),
			Err: errors.New("not asked: the registry failed or blocked us a moment ago")}
	}
	return nil
}

const blockKey = "blocked"

// failed remembers a failure: for FailureBackoff, or as long as the
// registry said; a block (429, 403) is shared with every replica, since
// the registry blocks the address they share.
func (r *Registry) failed(ctx context.Context, endpoint string, err error) {
	var u *UnavailableError
	after := FailureBackoff
	errors.As(err, &u)
	blocked := u != nil && (u.Status == 429 || u.Status == 403)
	switch {
	case u != nil && u.After > 0:
		after = u.After
	case blocked:
		after = BlockBackoff
	}
	until := r.now().Add(after)
	r.mu.Lock()
	r.down[endpoint] = until
	r.mu.Unlock()
	r.log.WarnContext(ctx, "registry unavailable", "endpoint", endpoint, "err", err, "retry_in_s", after.Seconds())
	if blocked {
		b, _ := until.MarshalText()
		if perr := r.cache.Set(ctx, r.ns+blockKey, b, after); perr != nil {
			r.log.WarnContext(ctx, "registry cache: share the block", "err", perr)
		}
	}
}

// get reads key's entry from the cache; a cache failure is a miss.
func (r *Registry) get(ctx context.Context, key string) (entry, bool) {
	b, ok, err := r.cache.Get(ctx, r.ns+key)
	if err != nil {
		r.m.cacheErrors.Inc()
		r.log.WarnContext(ctx, "registry cache: read", "err", err)
		return entry{}, false
	}
	if !ok {
		return entry{}, false
	}
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		r.m.cacheErrors.Inc()
		r.log.WarnContext(ctx, "registry cache: unreadable entry", "err", err)
		return entry{}, false
	}
	return e, true
}

// put writes key's entry, kept Keep past its freshness.
func (r *Registry) put(ctx context.Context, key string, e entry) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	keep := Keep + r.ttl
	if e.Expires.IsZero() {
		keep = keepUnexpiring
	}
	if err := r.cache.Set(ctx, r.ns+key, b, keep); err != nil {
		r.m.cacheErrors.Inc()
		r.log.WarnContext(ctx, "registry cache: write", "err", err)
	}
}

// Taxpayer looks up a taxpayer by identification number.
func (r *Registry) Taxpayer(ctx context.Context, id string) (Taxpayer, Meta, error) {
	id = strings.TrimSpace(id)
	return lookup(ctx, r, question[Taxpayer]{endpoint: "ae", key: "ae:" + id, ttl: r.ttl,
		ask: func(ctx context.Context) (Taxpayer, error) { return r.c.Taxpayer(ctx, id) }})
}

// Cabys looks up a CAByS code in the catalog in force; ErrNotRegistered
// when the catalog has no such code.
func (r *Registry) Cabys(ctx context.Context, code string) (Cabys, Meta, error) {
	code = strings.TrimSpace(code)
	return lookup(ctx, r, question[Cabys]{endpoint: "cabys", key: "cabys:" + code, ttl: r.ttl,
		ask: func(ctx context.Context) (Cabys, error) { return r.c.Cabys(ctx, code) }})
}

// SearchCabys searches the catalog by words, up to limit entries.
func (r *Registry) SearchCabys(ctx context.Context, q string, limit int) ([]Cabys, Meta, error) {
	q = strings.Join(strings.Fields(strings.ToLower(q)), " ")
	return lookup(ctx, r, question[[]Cabys]{endpoint: "cabys", key: fmt.Sprintf("cabys?%d:%s", limit, q), ttl: r.ttl,
		ask: func(ctx context.Context) ([]Cabys, error) { return r.c.SearchCabys(ctx, q, limit) }})
}

// Exoneration looks up an exoneration authorisation by its number.
func (r *Registry) Exoneration(ctx context.Context, autorizacion string) (Exoneration, Meta, error) {
	autorizacion = strings.TrimSpace(autorizacion)
	return lookup(ctx, r, question[Exoneration]{endpoint: "ex", key: "ex:" + autorizacion, ttl: r.ttl,
		ask: func(ctx context.Context) (Exoneration, error) { return r.c.Exoneration(ctx, autorizacion) }})
}

// Rate looks up the central bank's exchange rate of a currency on a day
// (YYYY-MM-DD, Costa Rica). A past day's rate never changes, so it never
// expires; today's is fresh for the TTL. ErrNotRegistered: no rate for
// that currency or day.
func (r *Registry) Rate(ctx context.Context, moneda string, day time.Time) (Rate, Meta, error) {
	moneda = strings.ToUpper(strings.TrimSpace(moneda))
	d := day.Format(time.DateOnly)
	ttl := r.ttl
	if d < r.now().In(day.Location()).Format(time.DateOnly) {
		ttl = 0
	}
	return lookup(ctx, r, question[Rate]{endpoint: "tc", key: "tc:" + moneda + ":" + d, ttl: ttl,
		ask: func(ctx context.Context) (Rate, error) { return r.c.Rate(ctx, moneda, day) }})
}
