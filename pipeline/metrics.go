package pipeline

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/metrics"
)

// Stage names: the bounded values of the stage label.
const (
	stageValidate = "validate" // validate and calculate (the gateway decodes)
	stageNumber   = "number"
	stageBuild    = "build"
	stageTurn     = "turn" // waiting for a turn to sign (turns)
	stageSign     = "sign"
	stageStore    = "store"
	stageLimit    = "limit" // waiting for the rate limiter
	stageSubmit   = "submit"
	stageStatus   = "status"
	stageQueue    = "queue" // waiting for a turn in the branch's lane
)

// Operations: the bounded values of the op label.
const (
	opSend  = "send"
	opCheck = "check"
	// opReceive is a receiver's message sent (A.11).
	opReceive = "receive"
	opRetry   = "retry"
	// opCallback is a status asked because the tax authority called back.
	opCallback = "callback"
)

type pipelineMetrics struct {
	stage    *prometheus.HistogramVec
	outcomes *prometheus.CounterVec
	refused  *prometheus.CounterVec
	answers  *prometheus.CounterVec
	callback *prometheus.CounterVec
	supplier *prometheus.CounterVec
	// credentials counts the stops on refused credentials and their ends.
	credentials *prometheus.CounterVec
	// registry counts the registry checks' findings by what became of
	// them: refused (a 400 under refuse) or warned (advertencias).
	registry *prometheus.CounterVec
	// quota counts the sends refused by their company's monthly quota
	// (402), apart from refused: those are back-pressure (503), which
	// the overload alert reads; a tenant at its quota is not an overload.
	quota    prometheus.Counter
	lanes    prometheus.GaugeFunc
	admitted prometheus.GaugeFunc
	capacity prometheus.Gauge
}

func newMetrics(r prometheus.Registerer, ls *lanes) (*pipelineMetrics, error) {
	m := &pipelineMetrics{
		stage: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metrics.Namespace,
			Subsystem: "pipeline",
			Name:      "stage_duration_seconds",
			Help:      "Time spent in each stage of the document pipeline.",
			Buckets:   metrics.RequestBuckets,
		}, []string{"stage"}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "pipeline",
			Name:      "documents_total",
			Help:      "Documents leaving a send, check or background retry, by the state they were left in.",
		}, []string{"op", "estado"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "pipeline",
			Name:      "refused_total",
			Help:      "Send calls refused before any work: lane full, company or service at its bound, id_externo in progress, stopping.",
		}, []string{"reason"}),
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "pipeline",
			Name:      "answers_refused_total",
			Help:      "Signed answers of the tax authority not applied: signature, trust, or about another document or issuer.",
		}, []string{"reason"}),
		callback: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "pipeline",
			Name:      "callbacks_total",
			Help:      "Callbacks of the tax authority, by what they led to: applied (verdict stored), asked (status asked), settled (already final), refused, failed.",
		}, []string{"outcome"}),
		supplier: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "pipeline",
			Name:      "supplier_signatures_total",
			Help:      "Suppliers' signatures that verified on a received document, by what their certificate rests on: national_pki (it chains to it), tax_authority (issued outside it, trusted on the tax authority's acceptance of the document), unchecked (no national PKI configured).",
		}, []string{"trust"}),
		credentials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "pipeline",
			Name:      "credential_stops_total",
			Help:      "Documents stopped on refused tax-authority credentials: stopped (a stop recorded), probed (one tried again), resumed (made due: a login worked again).",
		}, []string{"event"}),
		registry: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "pipeline",
			Name:      "registry_findings_total",
			Help:      "Registry check findings before numbering: refused (400) or warned (advertencias).",
		}, []string{"result"}),
	}
	// Every series whose label values are known is made at 0 from the
	// start, so that a panel shows 0 rather than no data and a rate sees
	// the first increment after a restart. The document outcomes are made
	// for 05 only (what DocumentsNotSentPiling reads): every operation and
	// state would be 30 series of /metrics.
	for _, r := range []string{"refused", "warned"} {
		m.registry.WithLabelValues(r)
	}
	for _, r := range []string{"in_progress", "stopping", "queue_timeout", "company_full", "lane_full", "all_full"} {
		m.refused.WithLabelValues(r)
	}
	for _, o := range []string{"applied", "asked", "settled", "refused", "failed"} {
		m.callback.WithLabelValues(o)
	}
	for _, e := range []string{"stopped", "probed", "resumed"} {
		m.credentials.WithLabelValues(e)
	}
	for _, op := range []string{opSend, opCheck, opReceive, opRetry, opCallback} {
		m.outcomes.WithLabelValues(op, "05")
	}
	m.quota = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Subsystem: "pipeline",
		Name:      "quota_refused_total",
		Help:      "Send calls refused (402) because the company had numbered its monthly quota; nothing was numbered.",
	})
	m.lanes = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: "pipeline",
		Name:      "lanes",
		Help:      "Branches with documents in flight.",
	}, func() float64 { n, _ := ls.stats(); return float64(n) })
	// Saturation is in_flight / capacity: at 1 every further send call of
	// this replica is refused (reason "all_full").
	m.admitted = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: "pipeline",
		Name:      "in_flight",
		Help:      "Send calls this replica has admitted now (running or waiting in a lane).",
	}, func() float64 { _, n := ls.stats(); return float64(n) })
	m.capacity = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: "pipeline",
		Name:      "capacity",
		Help:      "Send calls this replica admits at once over every branch (MaxInFlight).",
	})
	m.capacity.Set(float64(ls.maxTotal))
	for _, c := range []prometheus.Collector{m.stage, m.outcomes, m.refused, m.answers, m.callback, m.supplier, m.credentials, m.registry, m.quota, m.lanes, m.admitted, m.capacity} {
		if err := r.Register(c); err != nil {
			return nil, fmt.Errorf("pipeline: register metrics: %w", err)
		}
	}
	return m, nil
}

// observe records the time spent in stage since start.
func (m *pipelineMetrics) observe(stage string, start time.Time) {
	m.stage.WithLabelValues(stage).Observe(time.Since(start).Seconds())
}
