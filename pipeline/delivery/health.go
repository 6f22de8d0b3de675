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
// as facturad_webhook_endpoints{state="healthy"|"failing"}, and the
// companies those webhooks belong to as
// facturad_webhook_companies{state="healthy"|"failing"} (failing: at
// least one of its webhooks failed its latest attempt). The alert
// WebhooksFailingWidely counts companies: one company with several dead
// webhooks is one failing company. One company's
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
	// companies describes the companies' gauge.
	companies *prometheus.Desc

	mu   sync.Mutex
	seen map[int64]endpointSeen
}

type endpointSeen struct {
	at      time.Time
	company int64
	failing bool
}

func newEndpointHealth(window time.Duration, clock func() time.Time) *endpointHealth {
	return &endpointHealth{
		window: window, clock: clock, seen: map[int64]endpointSeen{},
		desc: prometheus.NewDesc(m.Namespace+"_webhook_endpoints",
			"Webhooks this replica attempted in the last 30 minutes, by the outcome of its latest attempt: healthy (a 2xx) or failing.",
			[]string{"state"}, nil),
		companies: prometheus.NewDesc(m.Namespace+"_webhook_companies",
			"Companies with webhooks this replica attempted in the last 30 minutes: failing (the latest attempt of at least one of them failed) or healthy.",
			[]string{"state"}, nil),
	}
}

// record notes the outcome of an attempt at webhook id of company.
func (h *endpointHealth) record(id, company int64, failing bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen[id] = endpointSeen{at: h.clock(), company: company, failing: failing}
}

// healthCounts are the webhooks and their companies, healthy and failing.
type healthCounts struct {
	healthy, failing                   int
	healthyCompanies, failingCompanies int
}

// counts counts the webhooks attempted within the window, and their
// companies, forgetting the older ones.
func (h *endpointHealth) counts() healthCounts {
	h.mu.Lock()
	defer h.mu.Unlock()
	cut := h.clock().Add(-h.window)
	var c healthCounts
	companies := map[int64]bool{} // company → failing
	for id, s := range h.seen {
		switch {
		case s.at.Before(cut):
			delete(h.seen, id)
			continue
		case s.failing:
			c.failing++
		default:
			c.healthy++
		}
		companies[s.company] = companies[s.company] || s.failing
	}
	for _, failing := range companies {
		if failing {
			c.failingCompanies++
		} else {
			c.healthyCompanies++
		}
	}
	return c
}

func (h *endpointHealth) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc; ch <- h.companies }

func (h *endpointHealth) Collect(ch chan<- prometheus.Metric) {
	c := h.counts()
	ch <- prometheus.MustNewConstMetric(h.desc, prometheus.GaugeValue, float64(c.healthy), "healthy")
	ch <- prometheus.MustNewConstMetric(h.desc, prometheus.GaugeValue, float64(c.failing), "failing")
	ch <- prometheus.MustNewConstMetric(h.companies, prometheus.GaugeValue, float64(c.healthyCompanies), "healthy")
	ch <- prometheus.MustNewConstMetric(h.companies, prometheus.GaugeValue, float64(c.failingCompanies), "failing")
}
