package delivery

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	m "facturad/metrics"
)

// metrics of the deliveries. kind is "webhook" or "email"; outcome
// "delivered", "retry" or "failed".
type metrics struct {
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	pending  *prometheus.GaugeVec
	oldest   *prometheus.GaugeVec
	purged   *prometheus.CounterVec
}

// newMetrics registers the collectors, or takes those already registered
// (the webhook and the e-mail deliverers of one process share them).
func newMetrics(r prometheus.Registerer) (*metrics, error) {
	if r == nil {
		r = prometheus.NewRegistry()
	}
	x := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: m.Namespace, Name: "delivery_attempts_total",
			Help: "Delivery attempts by kind (webhook, email) and outcome (delivered, retry, failed).",
		}, []string{"kind", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: m.Namespace, Name: "delivery_attempt_duration_seconds",
			Help: "Time of one delivery attempt (the HTTP call, the SMTP session), by kind.",
			// Quick, slow, near the webhook's timeout (10 s by default),
			// near the SMTP session's (60 s): nothing reads finer, and the
			// outcome is the attempts counter's.
			Buckets: []float64{.1, 1, 10, 60},
		}, []string{"kind"}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: m.Namespace, Name: "delivery_pending",
			Help: "Deliveries waiting in the outbox (store-wide: every replica reads the same), by kind.",
		}, []string{"kind"}),
		oldest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: m.Namespace, Name: "delivery_oldest_pending_age_seconds",
			Help: "Age of the oldest delivery waiting in the outbox, by kind; 0 when none.",
		}, []string{"kind"}),
		purged: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: m.Namespace, Name: "delivery_purged_total",
			Help: "Settled deliveries deleted past the retention (delivery_retention), by kind.",
		}, []string{"kind"}),
	}
	var err error
	if x.attempts, err = m.Register(r, x.attempts); err != nil {
		return nil, err
	}
	if x.duration, err = m.Register(r, x.duration); err != nil {
		return nil, err
	}
	if x.pending, err = m.Register(r, x.pending); err != nil {
		return nil, err
	}
	if x.oldest, err = m.Register(r, x.oldest); err != nil {
		return nil, err
	}
	if x.purged, err = m.Register(r, x.purged); err != nil {
		return nil, err
	}
	for _, kind := range []string{"webhook", "email"} {
		for _, o := range []string{"delivered", "retry", "failed"} {
			x.attempts.WithLabelValues(kind, o)
		}
		x.duration.WithLabelValues(kind)
		x.pending.WithLabelValues(kind)
		x.oldest.WithLabelValues(kind)
		x.purged.WithLabelValues(kind)
	}
	return x, nil
}

func (x *metrics) setBacklog(kind string, n int, oldest, now time.Time) {
	x.pending.WithLabelValues(kind).Set(float64(n))
	age := 0.0
	if !oldest.IsZero() && now.After(oldest) {
		age = now.Sub(oldest).Seconds()
	}
	x.oldest.WithLabelValues(kind).Set(age)
}
