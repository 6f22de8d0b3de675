package gateway

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/metrics"
)

// httpMetrics are the gateway's collectors. Labels are bounded: the route is
// the router's pattern (or "unmatched"), never the raw path, and the status
// is its class ("2xx" ... "5xx").
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(r prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "http",
			Name:      "requests_total",
			Help:      "API requests answered, by route pattern, method and status class.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metrics.Namespace,
			Subsystem: "http",
			Name:      "request_duration_seconds",
			Help:      "Time to answer an API request, by route pattern, method and status class.",
			Buckets:   metrics.RequestBuckets,
		}, []string{"route", "method", "status"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := r.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, fmt.Errorf("gateway: metrics already registered (one Server per registry): %w", err)
			}
			return nil, fmt.Errorf("gateway: register metrics: %w", err)
		}
	}
	return m, nil
}

var statusClasses = [6]string{"", "1xx", "2xx", "3xx", "4xx", "5xx"}

// routeMetrics are one route's series, bound once so that a request costs
// no label lookup.
type routeMetrics struct {
	count [6]prometheus.Counter
	dur   [6]prometheus.Observer
}

func (m *httpMetrics) forRoute(method, pattern string) *routeMetrics {
	rm := &routeMetrics{}
	for i := 1; i < len(statusClasses); i++ {
		rm.count[i] = m.requests.WithLabelValues(pattern, method, statusClasses[i])
		rm.dur[i] = m.duration.WithLabelValues(pattern, method, statusClasses[i])
	}
	return rm
}

func (rm *routeMetrics) observe(status int, d time.Duration) {
	i := status / 100
	if i < 1 || i > 5 {
		i = 5
	}
	rm.count[i].Inc()
	rm.dur[i].Observe(d.Seconds())
}
