package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestHandlerServesRegisteredMetrics(t *testing.T) {
	r := NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "test_total", Help: "A test counter."})
	r.MustRegister(c)
	c.Add(3)

	rec := httptest.NewRecorder()
	Handler(r).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{"facturad_test_total 3", "go_goroutines", "process_"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics output lacks %q", want)
		}
	}
}

func TestBucketsAscend(t *testing.T) {
	for name, b := range map[string][]float64{"request": RequestBuckets, "http": HTTPBuckets} {
		for i := 1; i < len(b); i++ {
			if b[i] <= b[i-1] {
				t.Errorf("%s buckets not ascending at %d: %v", name, i, b)
			}
		}
	}
}

// Register hands a second component the collector the first registered,
// and refuses one whose name is taken by a collector of another kind.
func TestRegisterSharesACollector(t *testing.T) {
	r := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Namespace: Namespace, Name: "shared_total", Help: "A shared counter."}
	first, err := Register(r, prometheus.NewCounterVec(opts, []string{"kind"}))
	if err != nil {
		t.Fatal(err)
	}
	second, err := Register(r, prometheus.NewCounterVec(opts, []string{"kind"}))
	if err != nil || second != first {
		t.Fatalf("second registration: %p %v, want the first collector %p", second, err, first)
	}
	if _, err := Register(r, prometheus.NewGaugeVec(prometheus.GaugeOpts(opts), []string{"kind"})); err == nil {
		t.Fatal("a gauge took a counter's name")
	}
}
