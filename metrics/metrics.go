// Package metrics builds the Prometheus registry the service reports into,
// the handler that exposes it, and the bucket layouts shared by every stage,
// so that dashboards can compare stages on the same scale.
//
// Packages do not import a global registry: each receives a
// prometheus.Registerer in its Options (tests pass prometheus.NewRegistry()),
// and only cmd/facturad builds the real one with NewRegistry.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric name of the service.
const Namespace = "facturad"

// Buckets for durations, in seconds.
var (
	// RequestBuckets suit in-process work and HTTP handling: 50 µs to 10 s.
	RequestBuckets = []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	// RemoteBuckets suit calls to the tax authority and the stores: 1 ms to 60 s.
	RemoteBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
)

// NewRegistry returns a registry with the Go runtime and process collectors
// registered.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return r
}

// Handler serves the registry in the Prometheus exposition format.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}
