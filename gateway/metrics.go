package gateway

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/metrics"
)

// httpMetrics are the gateway's collectors. Labels are bounded: the route is
// the router's pattern (or "unmatched"), never the raw path, and the
// counter's status is its class ("2xx" ... "5xx"), or "shed" for a 503
// the service chose because of load or a rollout (shedder). The duration histogram
// has no status label: one histogram per route and method, whatever the
// mix of answers, keeps /metrics the same size on a replica that has
// answered every class as on one that answered only 2xx. No alert or panel
// reads latency by class; the error ratio comes from the counter.
//
// Only the routes on a document's path have a duration histogram of their
// own (OwnLatency); the others (companies, branches, users, webhooks,
// usage, the operators' lists, /docs...) share one per method, under the
// route SharedLatencyRoute. Their counters stay per route.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// auditFailures counts the changes made whose audit entry could not be
	// recorded (one series, no labels: the log line says which).
	auditFailures prometheus.Counter
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
			Help:      "Time to answer an API request, by route pattern and method.",
			Buckets:   metrics.HTTPBuckets,
		}, []string{"route", "method"}),
		auditFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "audit",
			Name:      "record_failures_total",
			Help:      "Changes made whose audit log entry could not be recorded.",
		}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.auditFailures} {
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

// statusClasses are the request counter's status values, by index: the
// status's hundreds, and classShed.
var statusClasses = [7]string{"", "1xx", "2xx", "3xx", "4xx", "5xx", "shed"}

// classShed is the index of "shed": a 503 refusal because of load or a
// rollout, counted apart from the server errors ("5xx") that the
// error-ratio alerts read.
const classShed = 6

// SharedLatencyRoute is the duration histogram's route label of the routes
// without a histogram of their own.
const SharedLatencyRoute = "other"

// ownLatencyPrefixes are the route patterns whose latency is watched route
// by route: what a billing system waits on when it issues and reads
// documents, receives its suppliers', or looks a registry up before a
// send, and the tax authority's callback. A route a company calls now and
// then to manage itself shares its histogram: a histogram is a dozen
// series, and /metrics has a size budget (docs/performance.md).
var ownLatencyPrefixes = []string{"/api/documents/", "/api/received/", "/api/registry/", "/hacienda/"}

// OwnLatency reports whether the route pattern has a duration histogram of
// its own.
func OwnLatency(pattern string) bool {
	for _, p := range ownLatencyPrefixes {
		if strings.HasPrefix(pattern, p) {
			return true
		}
	}
	return false
}

// precreated are the status classes whose request counter exists from the
// start, at zero, so that a rate or an error ratio has a series to read
// before the first such answer (and the first increment after a restart
// is not lost to a series that did not exist); "shed" too on the routes
// that shed as a matter of course (Route.Sheds). The other classes'
// counters, and the route's duration histogram, appear on first use: a
// route never called costs no histogram.
var precreated = [...]int{2, 4, 5}

// routeMetrics are one route's series, bound once (the counter once per
// class) so that a request costs no label lookup after the first.
type routeMetrics struct {
	m               *httpMetrics
	method, pattern string

	countOnce [len(statusClasses)]sync.Once
	count     [len(statusClasses)]prometheus.Counter
	durOnce   sync.Once
	dur       prometheus.Observer
}

func (m *httpMetrics) forRoute(method, pattern string, sheds bool) *routeMetrics {
	rm := &routeMetrics{m: m, method: method, pattern: pattern}
	for _, i := range precreated {
		rm.counter(i)
	}
	if sheds {
		rm.counter(classShed)
	}
	return rm
}

func (rm *routeMetrics) counter(i int) prometheus.Counter {
	rm.countOnce[i].Do(func() {
		rm.count[i] = rm.m.requests.WithLabelValues(rm.pattern, rm.method, statusClasses[i])
	})
	return rm.count[i]
}

func (rm *routeMetrics) observer() prometheus.Observer {
	rm.durOnce.Do(func() {
		route := rm.pattern
		if !OwnLatency(route) {
			route = SharedLatencyRoute
		}
		rm.dur = rm.m.duration.WithLabelValues(route, rm.method)
	})
	return rm.dur
}

// observe counts an answer of status (as "shed" when shed and a 503) and
// its duration.
func (rm *routeMetrics) observe(status int, shed bool, d time.Duration) {
	i := status / 100
	switch {
	case shed && status == 503:
		i = classShed
	case i < 1 || i > 5:
		i = 5
	}
	rm.counter(i).Inc()
	rm.observer().Observe(d.Seconds())
}
