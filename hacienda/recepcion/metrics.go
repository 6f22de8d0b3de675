package recepcion

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the client's collectors. Labels are bounded: op (token kinds,
// submit, status, logout), outcome (ok, the status classes, the transport
// kinds) and grant (password, refresh_token). The duration histogram is by
// op only: an outage that brings five or six outcomes would otherwise add a
// histogram of 16 series for each, and the counter already says how calls
// ended. Logouts are counted, not timed: they are on no document's way (the
// shutdown's, a connection test's), and their histogram would be 16 series
// of /metrics for every environment.
type metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	grants   *prometheus.CounterVec
	refusals *prometheus.CounterVec
	// health is this client's own (the collectors may be shared with
	// another client on the same registry): its latest exchange.
	health exchangeHealth
}

func newMetrics(r prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facturad_hacienda_calls_total",
			Help: "HTTP exchanges with the tax authority, by operation and outcome.",
		}, []string{"op", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "facturad_hacienda_call_duration_seconds",
			Help:    "Duration of HTTP exchanges with the tax authority, by operation, whatever their outcome.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30},
		}, []string{"op"}),
		grants: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facturad_hacienda_token_grants_total",
			Help: "Token requests to the tax authority's token service, by grant and outcome.",
		}, []string{"grant", "outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facturad_hacienda_login_refusals_total",
			Help: "Logins the token service refused as if for wrong credentials, by what they were taken for: credentials (the company must correct them) or outage (the token service failing; retried).",
		}, []string{"taken_as"}),
	}
	if r == nil {
		return m, nil
	}
	// A second client on the same registry shares the collectors.
	var err error
	if m.calls, err = register(r, m.calls); err != nil {
		return nil, err
	}
	if m.duration, err = register(r, m.duration); err != nil {
		return nil, err
	}
	if m.grants, err = register(r, m.grants); err != nil {
		return nil, err
	}
	if m.refusals, err = register(r, m.refusals); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *metrics) observe(op string, status int, err error, d time.Duration) {
	o := outcome(err)
	if err == nil {
		switch {
		case status == 429:
			o = "rate_limited"
		case status == 401:
			o = "unauthorized"
		case status >= 500:
			o = "server_error"
		case status >= 300:
			o = "client_error"
		}
	}
	m.health.record(time.Now(), status, err)
	m.calls.WithLabelValues(op, o).Inc()
	if op != string(OpLogout) {
		m.duration.WithLabelValues(op).Observe(d.Seconds())
	}
}

func (m *metrics) grant(kind string, err error) {
	m.grants.WithLabelValues(kind, outcome(err)).Inc()
}

func register[C prometheus.Collector](r prometheus.Registerer, c C) (C, error) {
	if err := r.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}
