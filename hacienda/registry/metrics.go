package registry

import (
	"github.com/prometheus/client_golang/prometheus"

	"facturad/metrics"
)

// Endpoints and outcomes: the bounded values of the metrics' labels.
var (
	endpoints = []string{"ae", "cabys", "ex", "tc"}
	outcomes  = []string{"ok", "not_registered", "malformed", "unavailable", "skipped"}
	results   = []string{"hit", "miss", "stale"}
)

type regMetrics struct {
	calls       *prometheus.CounterVec
	cache       *prometheus.CounterVec
	duration    prometheus.Histogram
	cacheErrors prometheus.Counter
}

func newMetrics(r prometheus.Registerer) (*regMetrics, error) {
	m := &regMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace, Subsystem: "registry", Name: "calls_total",
			Help: "Calls to the tax authority's registries (skipped: not made, the registry failed or blocked us a moment ago).",
		}, []string{"endpoint", "outcome"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace, Subsystem: "registry", Name: "cache_total",
			Help: "Registry lookups by how the cache served them (stale: past its TTL, the registry unreachable).",
		}, []string{"endpoint", "result"}),
		// One series: the calls counter tells the endpoints apart, and
		// /metrics stays small.
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: metrics.Namespace, Subsystem: "registry", Name: "call_duration_seconds",
			Help:    "Duration of the calls to the tax authority's registries.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5},
		}),
		cacheErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: metrics.Namespace, Subsystem: "registry", Name: "cache_errors_total",
			Help: "Failures reading or writing the registry cache.",
		}),
	}
	if r != nil {
		var err error
		if m.calls, err = metrics.Register(r, m.calls); err != nil {
			return nil, err
		}
		if m.cache, err = metrics.Register(r, m.cache); err != nil {
			return nil, err
		}
		if m.duration, err = metrics.Register(r, m.duration); err != nil {
			return nil, err
		}
		if m.cacheErrors, err = metrics.Register(r, m.cacheErrors); err != nil {
			return nil, err
		}
	}
	for _, e := range endpoints {
		for _, o := range outcomes {
			m.calls.WithLabelValues(e, o)
		}
		for _, res := range results {
			m.cache.WithLabelValues(e, res)
		}
	}
	return m, nil
}
