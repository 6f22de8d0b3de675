// Package dependency probes the services facturad depends on (its store,
// Redis, the tax authority, the mail server, the archive) in the
// background and exports what it found as the gauge
// facturad_dependency_up{dependency}: 1 when the latest probe succeeded, 0
// when it failed. Requests never wait for a probe: each runs on its own
// goroutine at a fixed interval, under a timeout, and the gauge holds the
// latest result until the next one. Its start, ticks and stop are
// pipeline/loop's, as for the service's other background jobs.
package dependency

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/metrics"
	"facturad/pipeline/loop"
)

// Defaults of Options.
const (
	// DefaultInterval is how often each dependency is probed: a failure
	// shows in the gauge within this (plus the probe's timeout), well
	// inside the 2 minutes the store's alert waits.
	DefaultInterval = 15 * time.Second
	// DefaultTimeout bounds one probe.
	DefaultTimeout = 5 * time.Second
)

// Check is one dependency: its name (the dependency label) and how to
// probe it. Probe returns nil when the dependency answers.
type Check struct {
	Name  string
	Probe func(ctx context.Context) error
	// Interval overrides Options.Interval for this dependency (a probe
	// that costs the other side more than a ping: a mail session).
	Interval time.Duration
}

// Options configure a Prober.
type Options struct {
	// Checks are the dependencies probed; names must be distinct.
	Checks []Check
	// Interval between two probes of a dependency. Default DefaultInterval.
	Interval time.Duration
	// Timeout bounds one probe. Default DefaultTimeout.
	Timeout time.Duration
	// Registerer receives facturad_dependency_up. Default: a private
	// registry.
	Registerer prometheus.Registerer
	// Logger is told when a dependency goes down (warn) and comes back
	// (info). Default slog.Default().
	Logger *slog.Logger
}

// Prober probes the dependencies in the background.
type Prober struct {
	o    Options
	up   *prometheus.GaugeVec
	loop loop.Loop
}

// New checks o and registers the gauge; no probe runs before Start.
func New(o Options) (*Prober, error) {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	seen := map[string]bool{}
	for _, c := range o.Checks {
		if c.Name == "" || c.Probe == nil || seen[c.Name] {
			return nil, fmt.Errorf("dependency: check %q needs a distinct name and a probe", c.Name)
		}
		seen[c.Name] = true
	}
	p := &Prober{o: o, loop: loop.Loop{Name: "dependency"}, up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Name:      "dependency_up",
		Help:      "Whether the latest background probe of a dependency (store, redis, hacienda, smtp, archive: those configured) succeeded (1) or failed (0).",
	}, []string{"dependency"})}
	if err := o.Registerer.Register(p.up); err != nil {
		return nil, fmt.Errorf("dependency: register metrics: %w", err)
	}
	return p, nil
}

// Start probes every dependency at once and then every Interval, each on
// its own goroutine, until Stop is called (ctx's values reach the probes,
// its end does not stop them, as with the service's other background
// loops). It does not wait for the first probes. A second Start is an
// error.
func (p *Prober) Start(ctx context.Context) error {
	return p.loop.Start(ctx, func(ctx context.Context) {
		var wg sync.WaitGroup
		for _, c := range p.o.Checks {
			wg.Go(func() { p.run(ctx, c) })
		}
		wg.Wait()
	})
}

// Stop ends the probes and waits for them, or for ctx.
func (p *Prober) Stop(ctx context.Context) error {
	return p.loop.Stop(ctx)
}

// run probes c once, then every interval until ctx ends.
func (p *Prober) run(ctx context.Context, c Check) {
	every := p.o.Interval
	if c.Interval > 0 {
		every = c.Interval
	}
	last := p.probe(ctx, c, -1) // -1: unknown
	loop.Every(ctx, every, func() { last = p.probe(ctx, c, last) })
}

// probe runs one probe of c, sets its gauge and logs a change from last
// (-1 unknown, 0 down, 1 up); it returns the new state.
func (p *Prober) probe(ctx context.Context, c Check, last int) int {
	pctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	err := c.Probe(pctx)
	cancel()
	if ctx.Err() != nil {
		return last // stopping: the failure is ours
	}
	if err != nil {
		p.up.WithLabelValues(c.Name).Set(0)
		if last != 0 {
			p.o.Logger.Warn("dependency down", "dependency", c.Name, "err", err)
		}
		return 0
	}
	p.up.WithLabelValues(c.Name).Set(1)
	if last == 0 {
		p.o.Logger.Info("dependency back", "dependency", c.Name)
	}
	return 1
}
