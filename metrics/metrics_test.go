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
