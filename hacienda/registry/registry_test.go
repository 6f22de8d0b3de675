package registry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"facturad/hacienda"
	"facturad/hacienda/sandbox"
	"facturad/tenant/authcache"
)

// server is a registry answering from a table, counting the calls.
type server struct {
	*httptest.Server
	calls atomic.Int64
	mu    sync.Mutex
	// answers by "path?query"; absent: 404 in the error form.
	answers map[string]reply
	// fail, when set, answers every call.
	fail *reply
	// gate, when set, holds each call until closed.
	gate chan struct{}
}

type reply struct {
	status int
	body   string
	header map[string]string
}

func newServer(t testing.TB, answers map[string]reply) *server {
	s := &server{answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		s.mu.Lock()
		rep, ok := s.answers[r.URL.Path+"?"+r.URL.RawQuery]
		if s.fail != nil {
			rep, ok = *s.fail, true
		}
		gate := s.gate
		s.mu.Unlock()
		if gate != nil {
			<-gate
		}
		if !ok {
			rep = reply{status: 404, body: `{"code":404,"status":"Information no available on this system, please try again with new values"}`}
		}
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		w.Write([]byte(rep.body))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) setFail(r *reply) {
	s.mu.Lock()
	s.fail = r
	s.mu.Unlock()
}

func newRegistry(t testing.TB, s *server, cache Cache, clk *sandbox.ManualClock) *Registry {
	t.Helper()
	c, err := NewClient(ClientOptions{BaseURL: s.URL, Timeout: 2 * time.Second, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Client: c, Cache: cache, Now: clk.Now, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const bncr = `{"nombre":"BANCO NACIONAL DE COSTA RICA","tipoIdentificacion":"02","regimen":{"codigo":1,"descripcion":"Régimen general"},"situacion":{"moroso":"NO","omiso":"NO","estado":"Inscrito"},"actividades":[{"estado":"A","tipo":"P","codigo":"6492.0","descripcion":"Otros tipos de crédito"}]}`

func TestClientErrors(t *testing.T) {
	s := newServer(t, map[string]reply{
		"/fe/ae?identificacion=4000001021": {200, bncr, nil},
		"/fe/ae?identificacion=012345678":  {400, `{"code":400,"status":"Bad Request, please review your request and try again"}`, nil},
		"/fe/ae?identificacion=310100000":  {200, `{"code":404,"status":"Information no available on this system, please try again with new values"}`, nil},
		"/fe/ae?identificacion=111111111":  {429, `<html>blocked</html>`, map[string]string{"Retry-After": "600"}},
		"/fe/ae?identificacion=222222222":  {503, `{"code":503,"status":"Service unavailable"}`, nil},
		"/fe/ae?identificacion=333333333":  {200, `<html>not json</html>`, nil},
		"/fe/ae?identificacion=444444444":  {400, `<html><body>Bad request</body></html>`, nil},
	})
	c, err := NewClient(ClientOptions{BaseURL: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if tp, err := c.Taxpayer(ctx, "4000001021"); err != nil || tp.Identificacion != "4000001021" || tp.Nombre == "" {
		t.Errorf("registered: %+v, %v", tp, err)
	}
	var mal *MalformedError
	if _, err := c.Taxpayer(ctx, "012345678"); !errors.As(err, &mal) || mal.Status != 400 {
		t.Errorf("malformed: %v", err)
	}
	if _, err := c.Taxpayer(ctx, "444444444"); !errors.As(err, &mal) {
		t.Errorf("malformed with an HTML body: %v", err)
	}
	for _, id := range []string{"999999999", "310100000"} {
		if _, err := c.Taxpayer(ctx, id); !errors.Is(err, ErrNotRegistered) {
			t.Errorf("%s: %v, want not registered", id, err)
		}
	}
	var un *UnavailableError
	if _, err := c.Taxpayer(ctx, "111111111"); !errors.As(err, &un) || un.Status != 429 || un.RetryAfter() != 10*time.Minute {
		t.Errorf("blocked: %v", err)
	}
	for _, id := range []string{"222222222", "333333333"} {
		if _, err := c.Taxpayer(ctx, id); !Unavailable(err) {
			t.Errorf("%s: %v, want unavailable", id, err)
		}
	}
	s.Close()
	if _, err := c.Taxpayer(ctx, "4000001021"); !Unavailable(err) {
		t.Errorf("closed: %v, want unavailable", err)
	}
}

func TestClientTimeout(t *testing.T) {
	s := newServer(t, nil)
	s.gate = make(chan struct{})
	defer close(s.gate)
	c, err := NewClient(ClientOptions{BaseURL: s.URL, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Taxpayer(context.Background(), "4000001021"); !Unavailable(err) {
		t.Errorf("err = %v, want unavailable", err)
	}
}

func TestClientRate(t *testing.T) {
	s := newServer(t, map[string]reply{
		"/indicadores/tc/dolar?": {200, `{ "venta":  { "fecha": "2026-07-29", "valor": 454.55 },
  "compra": { "fecha": "2026-07-29", "valor": 449.94 } }`, nil},
		"/indicadores/tc/dolar/historico?d=2026-07-01&h=2026-07-01": {200, `[{"fecha":"2026-07-01 00:00:00","compra":450.1,"venta":456.2}]`, nil},
		"/indicadores/tc/dolar/historico?d=2026-07-02&h=2026-07-02": {503, `{"code":503,"status":"Service unavailable"}`, nil},
	})
	clk := sandbox.NewManualClock(time.Date(2026, 7, 29, 10, 0, 0, 0, hacienda.CostaRica))
	c, _ := NewClient(ClientOptions{BaseURL: s.URL, Now: clk.Now})
	ctx := context.Background()
	if r, err := c.Rate(ctx, "USD", mustDate(t, "2026-07-29")); err != nil || r.Venta.String() != "454.55" || r.Moneda != "USD" {
		t.Errorf("today: %+v, %v", r, err)
	}
	if r, err := c.Rate(ctx, "USD", mustDate(t, "2026-07-01")); err != nil || r.Venta.String() != "456.2" {
		t.Errorf("a past day: %+v, %v", r, err)
	}
	if _, err := c.Rate(ctx, "USD", mustDate(t, "2026-07-02")); !Unavailable(err) {
		t.Errorf("history failing: %v", err)
	}
	if _, err := c.Rate(ctx, "EUR", mustDate(t, "2026-07-01")); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("euro: %v", err)
	}
}

func TestCacheServesAndExpires(t *testing.T) {
	s := newServer(t, map[string]reply{"/fe/ae?identificacion=4000001021": {200, bncr, nil}})
	clk := sandbox.NewManualClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	r := newRegistry(t, s, authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now}), clk)
	ctx := context.Background()
	for range 3 {
		if _, meta, err := r.Taxpayer(ctx, "4000001021"); err != nil || meta.Desactualizado {
			t.Fatalf("%+v %v", meta, err)
		}
	}
	if n := s.calls.Load(); n != 1 {
		t.Errorf("calls = %d, want 1", n)
	}
	// Past the TTL it is asked again.
	clk.Advance(DefaultTTL + time.Second)
	if _, _, err := r.Taxpayer(ctx, "4000001021"); err != nil {
		t.Fatal(err)
	}
	if n := s.calls.Load(); n != 2 {
		t.Errorf("calls = %d, want 2", n)
	}
	// Down: served stale, then a week later not at all.
	clk.Advance(DefaultTTL + time.Second)
	s.setFail(&reply{503, `{"code":503,"status":"Service unavailable"}`, nil})
	tp, meta, err := r.Taxpayer(ctx, "4000001021")
	if err != nil || !meta.Desactualizado || tp.Nombre == "" || meta.Consultado.IsZero() {
		t.Errorf("stale: %+v %+v %v", tp, meta, err)
	}
	if got := testutil.ToFloat64(r.m.cache.WithLabelValues("ae", "stale")); got != 1 {
		t.Errorf("stale counted %v", got)
	}
	if got := testutil.ToFloat64(r.m.calls.WithLabelValues("ae", "unavailable")); got != 1 {
		t.Errorf("unavailable counted %v", got)
	}
	// Right after a failure the registry is not asked again.
	if _, meta, _ := r.Taxpayer(ctx, "4000001021"); !meta.Desactualizado || s.calls.Load() != 3 {
		t.Errorf("asked again right after a failure: calls %d", s.calls.Load())
	}
	clk.Advance(Keep + FailureBackoff)
	if _, _, err := r.Taxpayer(ctx, "4000001021"); !Unavailable(err) {
		t.Errorf("a week past its TTL: %v, want unavailable", err)
	}
}

func TestNotRegisteredCachedBriefly(t *testing.T) {
	s := newServer(t, nil)
	clk := sandbox.NewManualClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	r := newRegistry(t, s, authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now}), clk)
	ctx := context.Background()
	for range 2 {
		if _, _, err := r.Taxpayer(ctx, "310100000"); !errors.Is(err, ErrNotRegistered) {
			t.Fatal(err)
		}
	}
	if n := s.calls.Load(); n != 1 {
		t.Errorf("calls = %d, want 1", n)
	}
	clk.Advance(NotRegisteredTTL + time.Second)
	r.Taxpayer(ctx, "310100000")
	if n := s.calls.Load(); n != 2 {
		t.Errorf("calls = %d after an hour, want 2", n)
	}
}

// A thousand lookups of one question at once make one call.
func TestOneCallInFlight(t *testing.T) {
	s := newServer(t, map[string]reply{"/fe/ae?identificacion=4000001021": {200, bncr, nil}})
	s.gate = make(chan struct{})
	clk := sandbox.NewManualClock(time.Now())
	r := newRegistry(t, s, authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now}), clk)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range 1000 {
		wg.Go(func() {
			if _, _, err := r.Taxpayer(context.Background(), "4000001021"); err != nil {
				failed.Add(1)
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	close(s.gate)
	wg.Wait()
	if n := s.calls.Load(); n != 1 || failed.Load() != 0 {
		t.Errorf("calls = %d, failed = %d; want 1 and 0", n, failed.Load())
	}
}

// A caller who stops waiting does not cancel the call: the next finds its
// answer.
func TestCallerGivesUp(t *testing.T) {
	s := newServer(t, map[string]reply{"/fe/ae?identificacion=4000001021": {200, bncr, nil}})
	s.gate = make(chan struct{})
	clk := sandbox.NewManualClock(time.Now())
	r := newRegistry(t, s, authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now}), clk)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := r.Taxpayer(ctx, "4000001021"); !Unavailable(err) {
		t.Errorf("err = %v, want unavailable", err)
	}
	close(s.gate)
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, ok, _ := r.cache.Get(context.Background(), r.ns+"ae:4000001021")
		if ok && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call's answer never reached the cache")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, _, err := r.Taxpayer(context.Background(), "4000001021"); err != nil || s.calls.Load() != 1 {
		t.Errorf("err %v, calls %d", err, s.calls.Load())
	}
}

// A block (429) stops every process sharing the cache.
func TestBlockShared(t *testing.T) {
	s := newServer(t, nil)
	s.setFail(&reply{429, `<html>blocked</html>`, nil})
	clk := sandbox.NewManualClock(time.Now())
	cache := authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now})
	a := newRegistry(t, s, cache, clk)
	b := newRegistry(t, s, cache, clk)
	ctx := context.Background()
	if _, _, err := a.Taxpayer(ctx, "4000001021"); !Unavailable(err) {
		t.Fatal(err)
	}
	_, _, err := b.Cabys(ctx, "4321000000200")
	var un *UnavailableError
	if !errors.As(err, &un) || un.RetryAfter() < 9*time.Minute {
		t.Errorf("the other process: %v", err)
	}
	if n := s.calls.Load(); n != 1 {
		t.Errorf("calls = %d, want 1", n)
	}
	clk.Advance(BlockBackoff + time.Second)
	s.setFail(nil)
	if _, _, err := b.Taxpayer(ctx, "4000001021"); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("after the block: %v", err)
	}
}

// A past day's rate never expires; today's does.
func TestRateTTL(t *testing.T) {
	s := newServer(t, map[string]reply{
		"/indicadores/tc/dolar/historico?d=2026-11-02&h=2026-11-02": {200, `[{"fecha":"2026-11-02 00:00:00","compra":500.5,"venta":507.25}]`, nil},
	})
	clk := sandbox.NewManualClock(time.Date(2026, 12, 1, 9, 0, 0, 0, hacienda.CostaRica))
	r := newRegistry(t, s, authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now}), clk)
	ctx := context.Background()
	rt, _, err := r.Rate(ctx, "usd", mustDate(t, "2026-11-02"))
	if err != nil || rt.Venta.String() != "507.25" {
		t.Fatalf("%+v %v", rt, err)
	}
	clk.Advance(365 * 24 * time.Hour)
	s.setFail(&reply{503, `{}`, nil})
	if _, meta, err := r.Rate(ctx, "USD", mustDate(t, "2026-11-02")); err != nil || meta.Desactualizado {
		t.Errorf("a year later: %+v %v", meta, err)
	}
	if n := s.calls.Load(); n != 1 {
		t.Errorf("calls = %d, want 1", n)
	}
}

// backlog is a pace whose next turn is always further than any deadline.
type backlog struct{}

func (backlog) Wait(ctx context.Context, _ string) error {
	<-ctx.Done()
	return ctx.Err()
}

// A question whose turn under the pace is too far away is not asked: the
// caller hears "unavailable" after PaceWait, not after the backlog.
func TestPaceBounded(t *testing.T) {
	s := newServer(t, map[string]reply{"/fe/ae?identificacion=4000001021": {200, bncr, nil}})
	c, _ := NewClient(ClientOptions{BaseURL: s.URL})
	r, err := New(Options{Client: c, Cache: authcache.NewMemory(authcache.MemoryOptions{}), Pacer: backlog{}, PaceWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = r.Taxpayer(context.Background(), "4000001021")
	if !Unavailable(err) || time.Since(start) > 5*time.Second {
		t.Errorf("err %v after %s", err, time.Since(start))
	}
	if s.calls.Load() != 0 {
		t.Error("the registry was asked out of turn")
	}
	if got := testutil.ToFloat64(r.m.calls.WithLabelValues("ae", "skipped")); got != 1 {
		t.Errorf("skipped counted %v", got)
	}
}

// Two registries (the sandbox's, the real one) sharing a cache never read
// each other's answers.
func TestCacheKeyedByRegistry(t *testing.T) {
	a := newServer(t, map[string]reply{"/fe/ae?identificacion=4000001021": {200, bncr, nil}})
	b := newServer(t, nil)
	clk := sandbox.NewManualClock(time.Now())
	cache := authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now})
	ra := newRegistry(t, a, cache, clk)
	rb := newRegistry(t, b, cache, clk)
	ctx := context.Background()
	if _, _, err := ra.Taxpayer(ctx, "4000001021"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rb.Taxpayer(ctx, "4000001021"); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("the other registry's answer was served: %v", err)
	}
}
