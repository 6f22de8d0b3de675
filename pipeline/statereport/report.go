// Package statereport exports the store-wide state gauges: the documents
// not settled yet, issued ones and the companies' messages on received
// ones apart (label kind), per state and per who they wait for (the
// service, which still works on them, or their company, which alone can
// move them on), the age of the oldest of each kind the service works on,
// and the active companies whose certificate expires soon or has expired.
//
// Every replica runs a Reporter, but only one exports the store-wide
// values at a time, so that a sum over replicas counts each document once:
// the one that holds the "state-metrics" lease in the store. Each refresh
// (every Interval) takes or renews the lease and reads the store; a replica
// that stops releases it, one that dies lets it run out (LeaseTTL), and
// another takes it over at its next refresh. The store times the lease
// with its own clock; the holder stops exporting when its own count of
// LeaseTTL from before it asked runs out, which is never later than the
// store's end whatever the clocks say. Every replica exports
// facturad_state_reporter, 1 on the holder and 0 elsewhere.
package statereport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/metrics"
	"facturad/tenant"
)

// Store is what the reporter needs of the store: both adapters implement
// it (tenant.StateStore).
type Store interface {
	StoreState(ctx context.Context, now time.Time) (tenant.StoreState, error)
	TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
}

// LeaseName is the lease the replicas share the export through.
const LeaseName = "state-metrics"

// DefaultInterval is how often the state is read when Options.Interval is
// zero.
const DefaultInterval = 15 * time.Second

// Options configure a Reporter. Store is required.
type Options struct {
	Store Store
	// Holder names this replica in the lease. Default: the host name (the
	// pod's name in Kubernetes) and a random suffix, so that a restarted
	// process never mistakes its predecessor's lease for its own.
	Holder string
	// Interval is the time between refreshes (default DefaultInterval).
	Interval time.Duration
	// LeaseTTL is how long a refresh holds the lease (default three
	// intervals): a holder that dies stops exporting at once and is
	// replaced within LeaseTTL plus an interval. It also bounds the age of
	// the values exported: when no read has succeeded for LeaseTTL, the
	// holder withdraws them even though it keeps renewing the lease.
	LeaseTTL time.Duration
	// Timeout bounds one refresh (default Interval).
	Timeout time.Duration
	// Registerer receives the collector. Default: a private registry.
	Registerer prometheus.Registerer
	// Logger receives refresh failures and lease changes. Default:
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock of the exported ages and of this replica's view of
	// its lease. Default time.Now.
	Now func() time.Time
}

// Reporter refreshes and exports the state gauges. Build it with New; it
// is safe for concurrent use.
type Reporter struct {
	o   Options
	log *slog.Logger

	mu        sync.Mutex
	holds     bool      // the last lease attempt got it
	heldUntil time.Time // the end of the lease the last success took, by Now
	state     tenant.StoreState
	refreshed time.Time // when state was read; zero: never while holding

	stop context.CancelFunc
	done chan struct{}
}

// New builds a Reporter and registers its collector.
func New(o Options) (*Reporter, error) {
	if o.Store == nil {
		return nil, errors.New("statereport: Options.Store is required")
	}
	if o.Interval < 0 || o.LeaseTTL < 0 || o.Timeout < 0 {
		return nil, errors.New("statereport: negative Interval, LeaseTTL or Timeout")
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = 3 * o.Interval
	}
	if o.LeaseTTL <= o.Interval {
		return nil, fmt.Errorf("statereport: LeaseTTL %s must be longer than Interval %s, or the holder loses the lease between refreshes", o.LeaseTTL, o.Interval)
	}
	if o.Timeout == 0 {
		o.Timeout = o.Interval
	}
	if o.Holder == "" {
		h, err := tenant.NewLeaseHolder()
		if err != nil {
			return nil, fmt.Errorf("statereport: %w", err)
		}
		o.Holder = h
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &Reporter{o: o, log: o.Logger.With("component", "statereport", "holder", o.Holder)}
	if err := o.Registerer.Register(collector{r}); err != nil {
		return nil, fmt.Errorf("statereport: register metrics: %w", err)
	}
	return r, nil
}

// Refresh takes or renews the lease and, holding it, reads the state. A
// replica that does not get the lease exports none of the store-wide
// values. When the read fails, the values read last stay exported until
// they are LeaseTTL old, however often the lease is renewed meanwhile;
// then they are withdrawn, and StateMetricsStale tells.
func (r *Reporter) Refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	// Timed from before the request: the store's lease, timed from when
	// it wrote the row, ends no earlier.
	now := r.o.Now()
	until := now.Add(r.o.LeaseTTL)
	held, err := r.o.Store.TakeLease(ctx, LeaseName, r.o.Holder, r.o.LeaseTTL)
	if err != nil {
		return fmt.Errorf("statereport: take lease: %w", err)
	}
	r.mu.Lock()
	was := r.holds
	r.holds = held
	if held {
		r.heldUntil = until
	} else {
		r.heldUntil, r.refreshed, r.state = time.Time{}, time.Time{}, tenant.StoreState{}
	}
	r.mu.Unlock()
	if held != was {
		r.log.Info("state gauges", "reporting", held)
	}
	if !held {
		return nil
	}
	st, err := r.o.Store.StoreState(ctx, now)
	if err != nil {
		return fmt.Errorf("statereport: read state: %w", err)
	}
	r.mu.Lock()
	if r.holds && r.heldUntil.Equal(until) { // not released meanwhile
		r.state, r.refreshed = st, now
	}
	r.mu.Unlock()
	return nil
}

// Start refreshes at once and then every Interval until Stop or until ctx
// ends. A failed refresh is logged and retried at the next tick.
func (r *Reporter) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop != nil {
		return errors.New("statereport: already started")
	}
	ctx, r.stop = context.WithCancel(ctx)
	r.done = make(chan struct{})
	go r.run(ctx)
	return nil
}

func (r *Reporter) run(ctx context.Context) {
	defer close(r.done)
	t := time.NewTicker(r.o.Interval)
	defer t.Stop()
	for {
		if err := r.Refresh(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("state gauges not refreshed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop ends the refreshes and, when this replica holds the lease, releases
// it so that another takes it over at its next refresh instead of waiting
// for it to run out. It returns ctx's error if ctx ends first.
func (r *Reporter) Stop(ctx context.Context) error {
	r.mu.Lock()
	stop, done := r.stop, r.done
	r.mu.Unlock()
	if stop != nil {
		stop()
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("statereport: stop: %w", ctx.Err())
		}
	}
	r.mu.Lock()
	held := r.holds
	r.holds, r.heldUntil, r.refreshed, r.state = false, time.Time{}, time.Time{}, tenant.StoreState{}
	r.mu.Unlock()
	if !held {
		return nil
	}
	if err := r.o.Store.ReleaseLease(ctx, LeaseName, r.o.Holder); err != nil {
		return fmt.Errorf("statereport: release lease: %w", err)
	}
	return nil
}

// Reporting reports whether this replica exports the store-wide values
// now: it holds an unexpired lease and has read the state under it less
// than LeaseTTL ago.
func (r *Reporter) Reporting() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reportingLocked(r.o.Now())
}

// holdsLocked: the lease is this replica's, as far as its clock tells.
func (r *Reporter) holdsLocked(now time.Time) bool {
	return r.holds && now.Before(r.heldUntil)
}

func (r *Reporter) reportingLocked(now time.Time) bool {
	return r.holdsLocked(now) && !r.refreshed.IsZero() && now.Sub(r.refreshed) < r.o.LeaseTTL
}

var (
	descDocuments = prometheus.NewDesc(metrics.Namespace+"_documents",
		"Documents not settled yet, by kind (document issued; received: a company's message on one received), environment numbered in (ambiente), state and who they wait for (service, or caller: only the company can move them on). State reporter only.",
		[]string{"kind", "ambiente", "estado", "waiting"}, nil)
	descOldest = prometheus.NewDesc(metrics.Namespace+"_oldest_unsettled_document_age_seconds",
		"Age of the oldest unsettled document of the kind that the service still works on (waiting=service), 0 when none. State reporter only.",
		[]string{"kind"}, nil)
	descCertificates = prometheus.NewDesc(metrics.Namespace+"_certificates_expiring",
		"Active companies whose certificate expires within 30d or 7d (30d includes 7d), or has expired. State reporter only.",
		[]string{"within"}, nil)
	descRefreshed = prometheus.NewDesc(metrics.Namespace+"_state_last_refresh_timestamp_seconds",
		"Unix time the state gauges were last read from the store. State reporter only.",
		nil, nil)
	descReporter = prometheus.NewDesc(metrics.Namespace+"_state_reporter",
		"1 when this replica holds the lease to export the store-wide state gauges, else 0.",
		nil, nil)
)

// collector exports the last state read, at scrape time.
type collector struct{ r *Reporter }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDocuments, descOldest, descCertificates, descRefreshed, descReporter} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	r := c.r
	r.mu.Lock()
	now := r.o.Now()
	holds, reporting := r.holdsLocked(now), r.reportingLocked(now)
	st, refreshed := r.state, r.refreshed
	r.mu.Unlock()
	// The holder says so even while its values are withdrawn (read too
	// long ago): a sum over replicas still tells a doubled lease, and
	// StateMetricsStale the missing values.
	reporter := 0.0
	if holds {
		reporter = 1
	}
	ch <- prometheus.MustNewConstMetric(descReporter, prometheus.GaugeValue, reporter)
	if !reporting {
		return
	}
	for u, n := range st.Unsettled {
		ch <- prometheus.MustNewConstMetric(descDocuments, prometheus.GaugeValue,
			float64(n), string(u.Kind), u.Ambiente, string(u.Estado), string(u.Waiting))
	}
	for _, k := range tenant.UnsettledKinds {
		age := 0.0
		if oldest := st.OldestServiceWaiting[k]; !oldest.IsZero() {
			age = max(0, now.Sub(oldest).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, age, string(k))
	}
	ch <- prometheus.MustNewConstMetric(descCertificates, prometheus.GaugeValue, float64(st.CertificatesWithin30d), "30d")
	ch <- prometheus.MustNewConstMetric(descCertificates, prometheus.GaugeValue, float64(st.CertificatesWithin7d), "7d")
	ch <- prometheus.MustNewConstMetric(descCertificates, prometheus.GaugeValue, float64(st.CertificatesExpired), "expired")
	ch <- prometheus.MustNewConstMetric(descRefreshed, prometheus.GaugeValue, float64(refreshed.UnixNano())/1e9)
}
