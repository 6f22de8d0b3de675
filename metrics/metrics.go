// Package metrics builds the Prometheus registry the service reports into,
// the handler that exposes it, and the bucket layouts shared by every stage,
// so that dashboards can compare stages on the same scale.
//
// Packages do not import a global registry: each receives a
// prometheus.Registerer in its Options (tests pass prometheus.NewRegistry()),
// and only cmd/facturad builds the real one with NewRegistry.
package metrics

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric name of the service.
const Namespace = "facturad"

// Duration buckets, in seconds. Each bucket is one series per label set
// (per route and status class for HTTP), so the layouts keep only bounds a
// dashboard or an alert reads.
var (
	// RequestBuckets suit the pipeline's in-process stages: 1 ms to 10 s,
	// two bounds a decade below 100 ms (a document's own stages: a stage
	// under a millisecond is fast whatever its exact time) and a bound a
	// few seconds apart above (the tax authority's, timed finer by its
	// calls' own histogram).
	RequestBuckets = []float64{.001, .005, .01, .05, .1, 1, 5, 10}
	// HTTPBuckets suit answering an API request: 25 ms to 10 s. Latency
	// objectives start at tens of milliseconds (p99 under 50 ms for a send)
	// and the send alert fires at 5 s, which 5 and 10 bound; between 1 s
	// and 5 s a call is slow whatever its exact time, and below 25 ms fast
	// whatever its exact time. Finer bounds told nothing an operator acts
	// on and cost a series per route (TestMetricsSize in cmd/facturad
	// measures what each route costs; docs/performance.md).
	HTTPBuckets = []float64{.025, .05, .1, .25, 1, 5, 10}
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

// Register registers c with r and returns it or, when a collector of the
// same description is registered already (several components of one
// process sharing their collectors), that one.
func Register[C prometheus.Collector](r prometheus.Registerer, c C) (C, error) {
	err := r.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}
