package main

import (
	"bufio"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/deploy/monitoring"
	"facturad/hacienda/sandbox"
	"facturad/metrics"
	"facturad/tenant/storetest"
)

// poolMetric reports whether name is exported only when the service runs on PostgreSQL and
// Redis: without them in the test environment, their absence is not an
// error.
func poolMetric(name string) bool {
	return strings.HasPrefix(name, "facturad_pgxpool_") || strings.HasPrefix(name, "facturad_redis_pool_")
}

// scrapeTargetMetrics are written by Prometheus for each target, not by the
// service.
var scrapeTargetMetrics = map[string]bool{"up": true}

// TestMonitoringUsesExportedMetrics checks that every metric the alerting
// rules and the dashboard use is one the service exports: registered in its
// registry (a vector without series yet counts) or served on /metrics. It
// runs the service on the embedded store, and also on PostgreSQL and Redis
// when the test environment has them, since the pools' collectors exist
// only there.
func TestMonitoringUsesExportedMetrics(t *testing.T) {
	notQuick(t, "an end-to-end drill (the Quick start runs one)")
	queries, err := monitoring.Queries()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string][]string{} // metric name → sources
	for _, q := range queries {
		for _, name := range monitoring.MetricNames(q.Expr) {
			used[name] = append(used[name], q.Source)
		}
	}
	if len(used) < 20 {
		t.Fatalf("only %d metric names read from the rules and the dashboard: %v", len(used), used)
	}

	shapes := [][]string{nil}
	if os.Getenv(storetest.EnvDatabaseURL) != "" || storetest.RequireServices(t) {
		sb := sandbox.NewTestServer(t, sandbox.Options{})
		shapes = append(shapes, append([]string{
			"--database-url", postgresSchema(t), "--redis-url", storetest.RedisURL(t), "--master-key", masterKey(t),
			"--hacienda-env", "staging", "--hacienda-api-url", sb.APIURL, "--hacienda-token-url", sb.TokenURL,
		}, trustSandbox(t, sb)...))
	}
	exported := map[string]bool{}
	for _, args := range shapes {
		for name := range exportedMetrics(t, args, used) {
			exported[name] = true
		}
	}

	names := make([]string, 0, len(used))
	for name := range used {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch {
		case scrapeTargetMetrics[name] || exported[name]:
		case poolMetric(name) && len(shapes) == 1:
			t.Logf("%s: exported only on PostgreSQL and Redis, which this run does not have (used by %s)", name, strings.Join(used[name], ", "))
		default:
			t.Errorf("%s is used by %s but the service does not export it", name, strings.Join(used[name], ", "))
		}
	}
}

// exportedMetrics starts the service with extra arguments and returns which
// of the names in used it exports, and every name its /metrics serves.
func exportedMetrics(t *testing.T, extra []string, used map[string][]string) map[string]bool {
	t.Helper()
	var reg *prometheus.Registry
	orig := newRegistry
	newRegistry = func() *prometheus.Registry {
		reg = metrics.NewRegistry()
		return reg
	}
	defer func() { newRegistry = orig }()

	_, _, admin, stop := startService(t, t.TempDir(), extra...)
	out := map[string]bool{}
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		stop()
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		// "# TYPE name kind" names every family served, histograms included.
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			out[f[2]] = true
			if f[3] == "histogram" || f[3] == "summary" {
				out[f[2]+"_count"], out[f[2]+"_sum"] = true, true
				if f[3] == "histogram" {
					out[f[2]+"_bucket"] = true
				}
			}
		}
	}
	resp.Body.Close()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if reg == nil {
		t.Fatal("the service did not make its registry with newRegistry")
	}
	for name := range used {
		if registered(reg, name) {
			out[name] = true
		}
	}
	return out
}

// registered reports whether reg holds a collector describing a metric
// named name, or a histogram whose series name is. A registry refuses a
// second descriptor with the same name and other labels or help, so a
// probe gauge of that name registers only when nothing there uses it.
func registered(reg *prometheus.Registry, name string) bool {
	names := []string{name}
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			names = append(names, base)
		}
	}
	for _, n := range names {
		probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: n, Help: "A probe of the monitoring test."})
		if err := reg.Register(probe); err != nil {
			return true
		}
		reg.Unregister(probe)
	}
	return false
}

// TestRegisteredProbe checks the probe registered relies on: true for a
// vector without series, a histogram's series and the Go collector, false
// for a name nothing registered.
func TestRegisteredProbe(t *testing.T) {
	reg := metrics.NewRegistry()
	reg.MustRegister(
		prometheus.NewCounterVec(prometheus.CounterOpts{Name: "probe_test_total", Help: "h"}, []string{"reason"}),
		prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "probe_test_seconds", Help: "h"}, []string{"op"}),
	)
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"probe_test_total", true},
		{"probe_test_seconds_bucket", true},
		{"probe_test_seconds_count", true},
		{"go_goroutines", true},
		{"process_open_fds", true},
		{"probe_test_missing", false},
		{"probe_test_missing_count", false},
	} {
		if got := registered(reg, tt.name); got != tt.want {
			t.Errorf("registered(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	if registered(reg, "probe_test_missing") {
		t.Error("a probe stayed registered")
	}
}
