package sandbox

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"facturad/hacienda"
)

// This file serves the tax authority's public registry API at the
// sandbox's root, as api.hacienda.go.cr serves it: /fe/ae, /fe/cabys,
// /fe/ex, /indicadores/tc/dolar and /indicadores/tc/dolar/historico, with
// the real answers' shapes and error forms, its rate limit and its IP
// block. The data are registry_data.go's.

// RegistryLimit is the registry's rate limit per client address: more
// than Burst calls within BurstWindow, or more than Sustained within
// SustainedWindow, and the address is blocked for Block, every call
// answered 429. A zero count turns its limit off; the zero value limits
// nothing.
type RegistryLimit struct {
	Burst           int           `json:"burst,omitempty"`
	BurstWindow     time.Duration `json:"burstWindow,omitempty"`
	Sustained       int           `json:"sustained,omitempty"`
	SustainedWindow time.Duration `json:"sustainedWindow,omitempty"`
	// Block defaults to 10 minutes.
	Block time.Duration `json:"block,omitempty"`
}

// RealRegistryLimit is the limit the tax authority publishes for its
// registry API: 20 calls a second over 5 seconds (100 in 5 s), or 10 a
// second over 120 seconds (1 200 in 2 min), block the address for 10
// minutes with HTTP 429.
func RealRegistryLimit() RegistryLimit {
	return RegistryLimit{Burst: 100, BurstWindow: 5 * time.Second, Sustained: 1200, SustainedWindow: 120 * time.Second, Block: 10 * time.Minute}
}

func (l *RegistryLimit) validate() error {
	if l.Burst < 0 || l.Sustained < 0 || l.BurstWindow < 0 || l.SustainedWindow < 0 || l.Block < 0 {
		return errors.New("registry limit: negative value")
	}
	if l.Burst > 0 && l.BurstWindow == 0 || l.Sustained > 0 && l.SustainedWindow == 0 {
		return errors.New("registry limit: a count needs its window")
	}
	if l.Block == 0 {
		l.Block = 10 * time.Minute
	}
	return nil
}

func (l RegistryLimit) on() bool { return l.Burst > 0 || l.Sustained > 0 }

// limiter applies a RegistryLimit per client address.
type limiter struct {
	l   RegistryLimit
	mu  sync.Mutex
	ips map[string]*ipCalls
}

// ipCalls are one address's recent calls and its block.
type ipCalls struct {
	times        []time.Time // within the longest window, oldest first
	blockedUntil time.Time
}

// allow records a call from ip at now and reports whether it is served;
// when not, until is when the block ends.
func (lm *limiter) allow(ip string, now time.Time) (ok bool, until time.Time) {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	longest := max(lm.l.BurstWindow, lm.l.SustainedWindow)
	if len(lm.ips) > 4096 {
		// Forget the addresses that are neither blocked nor recent.
		for k, c := range lm.ips {
			if !now.Before(c.blockedUntil) && (len(c.times) == 0 || now.Sub(c.times[len(c.times)-1]) > longest) {
				delete(lm.ips, k)
			}
		}
	}
	c := lm.ips[ip]
	if c == nil {
		c = &ipCalls{}
		lm.ips[ip] = c
	}
	if now.Before(c.blockedUntil) {
		return false, c.blockedUntil
	}
	i := 0
	for i < len(c.times) && now.Sub(c.times[i]) >= longest {
		i++
	}
	c.times = append(c.times[i:], now)
	over := func(count int, window time.Duration) bool {
		if count <= 0 {
			return false
		}
		n := 0
		for j := len(c.times) - 1; j >= 0 && now.Sub(c.times[j]) < window; j-- {
			n++
		}
		return n > count
	}
	if over(lm.l.Burst, lm.l.BurstWindow) || over(lm.l.Sustained, lm.l.SustainedWindow) {
		c.blockedUntil = now.Add(lm.l.Block)
		c.times = nil
		return false, c.blockedUntil
	}
	return true, time.Time{}
}

// The registry endpoints, as Stats.RegistryCalls names them.
const (
	RegistryTaxpayers     = "ae"        // /fe/ae
	RegistryCabys         = "cabys"     // /fe/cabys
	RegistryExonerations  = "ex"        // /fe/ex
	RegistryDollar        = "tc"        // /indicadores/tc/dolar
	RegistryDollarHistory = "historico" // /indicadores/tc/dolar/historico
)

// The endpoints' indices in registryCounters.
const (
	epTaxpayers = iota
	epCabys
	epExonerations
	epDollar
	epDollarHistory
	registryEndpointMax
)

var registryEndpoints = [registryEndpointMax]string{RegistryTaxpayers, RegistryCabys, RegistryExonerations, RegistryDollar, RegistryDollarHistory}

// registryCounters count the registry calls per endpoint.
type registryCounters struct {
	calls   [registryEndpointMax]atomic.Int64
	blocked atomic.Int64
}

func (c *registryCounters) snapshot() map[string]int64 {
	m := make(map[string]int64, registryEndpointMax)
	for i, name := range registryEndpoints {
		m[name] = c.calls[i].Load()
	}
	return m
}

// The registry's error answers, as it words them.
const (
	regBadRequest   = "Bad Request, please review your request and try again"
	regNotAvailable = "Information no available on this system, please try again with new values"
	regBadRequestTC = "Bad request"
)

// regError answers in the registry's error form, {"code": N, "status": "..."}.
func regError(w http.ResponseWriter, code int, status string) {
	writeJSON(w, code, struct {
		Code   int    `json:"code"`
		Status string `json:"status"`
	}{code, status})
}

// regOK answers 200 with the headers the registry's application sets.
func regOK(w http.ResponseWriter, v any) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, v)
}

func (s *Sandbox) registryRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /fe/ae", s.registry(epTaxpayers, s.handleTaxpayer))
	mux.HandleFunc("GET /fe/cabys", s.registry(epCabys, s.handleCabys))
	mux.HandleFunc("GET /fe/ex", s.registry(epExonerations, s.handleExoneration))
	mux.HandleFunc("GET /indicadores/tc/dolar", s.registry(epDollar, s.handleDollar))
	// Some callers ask the history with a trailing slash; it answers both.
	mux.HandleFunc("GET /indicadores/tc/dolar/historico", s.registry(epDollarHistory, s.handleDollarHistory))
	mux.HandleFunc("GET /indicadores/tc/dolar/historico/{$}", s.registry(epDollarHistory, s.handleDollarHistory))
}

// registry wraps a registry endpoint: it counts the call, applies the rate
// limit per client address and the registry's faults.
func (s *Sandbox) registry(endpoint int, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.registryStats.calls[endpoint].Add(1)
		if s.closed.Load() {
			s.cut(w, r, DropReset)
			return
		}
		if s.limits != nil {
			ip, _, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				ip = r.RemoteAddr
			}
			if ok, _ := s.limits.allow(ip, s.clock.Now()); !ok {
				// The real block has no Retry-After that anyone has seen.
				s.registryStats.blocked.Add(1)
				regError(w, http.StatusTooManyRequests, "Too Many Requests")
				return
			}
		}
		status, latency := s.registryFaults()
		s.sleep(r.Context(), latency)
		if status != 0 {
			s.stats.injectedErrors.Add(1)
			text := http.StatusText(status)
			if status == http.StatusServiceUnavailable {
				text = "Service unavailable"
			}
			regError(w, status, text)
			return
		}
		h(w, r)
	}
}

// handleTaxpayer is GET /fe/ae?identificacion=.
func (s *Sandbox) handleTaxpayer(w http.ResponseWriter, r *http.Request) {
	t, found := lookupTaxpayer(r.URL.Query().Get("identificacion"))
	switch found {
	case taxpayerMalformed:
		regError(w, http.StatusBadRequest, regBadRequest)
	case taxpayerUnknown:
		regError(w, http.StatusNotFound, regNotAvailable)
	default:
		regOK(w, t)
	}
}

// maxCabysTop bounds top; defaultCabysTop is top's value when not given.
const (
	maxCabysTop     = 500
	defaultCabysTop = 10
)

// handleCabys is GET /fe/cabys?codigo= (a list, empty for an unknown
// code) or ?q=&top= (a search's object).
func (s *Sandbox) handleCabys(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Has("codigo") {
		type byCode struct {
			Categorias  []string `json:"categorias"`
			Codigo      string   `json:"codigo"`
			Descripcion string   `json:"descripcion"`
			Impuesto    float64  `json:"impuesto"`
		}
		out := []byCode{}
		if c, ok := lookupCabys(q.Get("codigo")); ok {
			out = append(out, byCode{c.Categorias, c.Codigo, c.Descripcion, c.Impuesto})
		}
		regOK(w, out)
		return
	}
	words := q.Get("q")
	if words == "" {
		regError(w, http.StatusBadRequest, regBadRequest)
		return
	}
	top, err := parseTop(q.Get("top"))
	if err != nil {
		regError(w, http.StatusBadRequest, regBadRequest)
		return
	}
	found := searchCabys(words)
	total := len(found)
	if len(found) > top {
		found = found[:top]
	}
	regOK(w, struct {
		Total    int        `json:"total"`
		Cantidad int        `json:"cantidad"`
		Cabys    []regCabys `json:"cabys"`
	}{total, len(found), found})
}

// parseTop reads a search's top: defaultCabysTop when empty, else 1 to
// maxCabysTop.
func parseTop(s string) (int, error) {
	if s == "" {
		return defaultCabysTop, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxCabysTop {
		return 0, fmt.Errorf("top %q: want 1-%d", s, maxCabysTop)
	}
	return n, nil
}

// handleExoneration is GET /fe/ex?autorizacion=.
func (s *Sandbox) handleExoneration(w http.ResponseWriter, r *http.Request) {
	e, found, malformed := lookupExoneration(r.URL.Query().Get("autorizacion"))
	switch {
	case malformed:
		regError(w, http.StatusBadRequest, regBadRequest)
	case !found:
		regError(w, http.StatusNotFound, regNotAvailable)
	default:
		regOK(w, e)
	}
}

// regToday is the sandbox's day in Costa Rica.
func (s *Sandbox) regToday() string {
	return s.clock.Now().In(hacienda.CostaRica).Format(time.DateOnly)
}

// handleDollar is GET /indicadores/tc/dolar: today's rates. Like the
// real one it ignores any parameter.
func (s *Sandbox) handleDollar(w http.ResponseWriter, r *http.Request) {
	day := s.regToday()
	compra, venta, ok := dollarRate(day)
	if !ok {
		regError(w, http.StatusNotFound, regNotAvailable)
		return
	}
	type rate struct {
		Fecha string  `json:"fecha"`
		Valor float64 `json:"valor"`
	}
	regOK(w, struct {
		Venta  rate `json:"venta"`
		Compra rate `json:"compra"`
	}{rate{day, venta}, rate{day, compra}})
}

// maxHistoryDays bounds the days one history question may span.
const maxHistoryDays = 366

// handleDollarHistory is GET /indicadores/tc/dolar/historico?d=&h=: the
// rates of each day from d to h, both YYYY-MM-DD, without the days that
// have none (before the first rate, after today).
func (s *Sandbox) handleDollarHistory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	from, to, err := historyRange(q.Get("d"), q.Get("h"))
	if err != nil {
		regError(w, http.StatusBadRequest, regBadRequestTC)
		return
	}
	type day struct {
		Fecha  string  `json:"fecha"`
		Compra float64 `json:"compra"`
		Venta  float64 `json:"venta"`
	}
	today := s.regToday()
	out := []day{}
	for t := from; !t.After(to); t = t.AddDate(0, 0, 1) {
		d := t.Format(time.DateOnly)
		if d > today {
			break
		}
		if compra, venta, ok := dollarRate(d); ok {
			out = append(out, day{d + " 00:00:00", compra, venta})
		}
	}
	regOK(w, out)
}

// historyRange reads a history question's days: both present, dates,
// in order, at most maxHistoryDays.
func historyRange(d, h string) (from, to time.Time, err error) {
	from, err = time.Parse(time.DateOnly, d)
	if err != nil {
		return from, to, fmt.Errorf("d: %w", err)
	}
	to, err = time.Parse(time.DateOnly, h)
	if err != nil {
		return from, to, fmt.Errorf("h: %w", err)
	}
	if to.Before(from) {
		return from, to, errors.New("h before d")
	}
	if to.Sub(from) >= maxHistoryDays*24*time.Hour {
		return from, to, fmt.Errorf("more than %d days", maxHistoryDays)
	}
	return from, to, nil
}
