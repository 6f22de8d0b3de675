package delivery

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	m "facturad/metrics"
)

// DefaultHealthWindow is how long a webhook attempted by this replica is
// counted in facturad_webhook_endpoints after its latest attempt.
const DefaultHealthWindow = 30 * time.Minute

// endpointHealth remembers, per webhook this replica attempted within
// the window, whether its latest attempt failed, and exports the counts
// as facturad_webhook_endpoints{state="healthy"|"failing"}. One company's
// dead endpoint is one failing webhook among the healthy ones of the
// others; most webhooks failing at once point at the service's side
// (egress, DNS, proxy, trust store): the alert WebhooksFailingWidely
// reads the ratio, replica by replica (a busy endpoint is attempted by
// every replica in turn, so the replicas' counts must not be summed). It
// holds at most one entry per webhook (10 per
// company), pruned when read.
type endpointHealth struct {
	window time.Duration
	clock  func() time.Time
	desc   *prometheus.Desc

	mu   sync.Mutex
	seen map[int64]endpointSeen
}

type endpointSeen struct {
	at      time.Time
	failing bool
}

func newEndpointHealth(window time.Duration, clock func() time.Time) *endpointHealth {
	return &endpointHealth{
		window: window, clock: clock, seen: map[int64]endpointSeen{},
		desc: prometheus.NewDesc(m.Namespace+"_webhook_endpoints",
			"Webhooks this replica attempted in the last 30 minutes, by the outcome of its latest attempt: healthy (a 2xx) or failing.",
			[]string{"state"}, nil),
	}
}

// record notes the outcome of an attempt at webhook id.
func (h *endpointHealth) record(id int64, failing bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen[id] = endpointSeen{at: h.clock(), failing: failing}
}

// counts returns how many webhooks attempted within the window are
// healthy and failing, forgetting the older ones.
func (h *endpointHealth) counts() (healthy, failing int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cut := h.clock().Add(-h.window)
	for id, s := range h.seen {
		switch {
		case s.at.Before(cut):
			delete(h.seen, id)
		case s.failing:
			failing++
		default:
			healthy++
		}
	}
	return healthy, failing
}

func (h *endpointHealth) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

func (h *endpointHealth) Collect(ch chan<- prometheus.Metric) {
	healthy, failing := h.counts()
	ch <- prometheus.MustNewConstMetric(h.desc, prometheus.GaugeValue, float64(healthy), "healthy")
	ch <- prometheus.MustNewConstMetric(h.desc, prometheus.GaugeValue, float64(failing), "failing")
}
