// Package eventsweep runs the checks that find the tenant events' occasions
// (A.14, docs/design/tenant-events.md): the companies' certificates near or
// past their expiry, at start-up and at least hourly, and the documents
// still unsettled an hour after they were numbered, hourly.
//
// Every replica runs a Sweeper. The hourly sweep is one replica's at a
// time: each tick (every Tick) a replica asks the store for the
// "tenant-events" lease under a name of its own for that sweep, so that it
// can only take a lease that is free or has ended, never renew one; the
// one that takes it sweeps, and the lease, left to run out after
// Interval−Tick, keeps the others (and itself) from sweeping again
// before then. So a sweep comes at most Interval after the last one
// whichever replica ran it, and a replica that dies mid-sweep is
// replaced when its lease ends. The lease only saves work: what keeps an
// occasion from being announced twice is the store's record of it
// (tenant.TenantEventStore), so the certificate check that every replica
// runs at start-up, lease or not, announces nothing twice.
package eventsweep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"facturad/pipeline/loop"
	"facturad/tenant"
)

// Checks are the sweeps (tenant.Service satisfies it). Each returns how
// many events it recorded.
type Checks interface {
	SweepCertificates(ctx context.Context, now time.Time) (int, error)
	SweepStuckDocuments(ctx context.Context, now time.Time) (int, error)
}

// Leases are the store's leases (tenant.StateStore).
type Leases interface {
	TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
}

// LeaseName is the lease the replicas share the hourly sweep through.
const LeaseName = "tenant-events"

// Defaults of Options.
const (
	DefaultInterval = time.Hour
	DefaultTimeout  = 10 * time.Minute
)

// Options configure a Sweeper. Checks and Leases are required.
type Options struct {
	Checks Checks
	Leases Leases
	// Holder names this replica in the lease (default: the host name and
	// a random suffix); each sweep adds a number of its own.
	Holder string
	// Interval is the longest time between two sweeps over every replica
	// (default DefaultInterval); Tick how often each replica asks for the
	// lease (default Interval/12). Tick must be shorter than Interval.
	Interval, Tick time.Duration
	// Timeout bounds one sweep (default DefaultTimeout).
	Timeout time.Duration
	Logger  *slog.Logger
	Now     func() time.Time
}

// Sweeper runs the sweeps. Build it with New.
type Sweeper struct {
	o    Options
	log  *slog.Logger
	seq  atomic.Int64
	loop loop.Loop
}

// New checks the options and returns a Sweeper.
func New(o Options) (*Sweeper, error) {
	if o.Checks == nil || o.Leases == nil {
		return nil, errors.New("eventsweep: Options.Checks and Leases are required")
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.Tick == 0 {
		o.Tick = o.Interval / 12
	}
	if o.Interval < 0 || o.Tick <= 0 || o.Tick >= o.Interval {
		return nil, fmt.Errorf("eventsweep: Tick %s must be positive and shorter than Interval %s", o.Tick, o.Interval)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Holder == "" {
		h, err := tenant.NewLeaseHolder()
		if err != nil {
			return nil, fmt.Errorf("eventsweep: %w", err)
		}
		o.Holder = h
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Sweeper{o: o, log: o.Logger.With("component", "eventsweep"), loop: loop.Loop{Name: "eventsweep"}}, nil
}

// Tick asks for the lease and, when this replica gets it, sweeps the
// certificates and the stuck documents. It reports whether it swept.
func (s *Sweeper) Tick(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	holder := s.o.Holder + "#" + strconv.FormatInt(s.seq.Add(1), 10)
	got, err := s.o.Leases.TakeLease(ctx, LeaseName, holder, s.o.Interval-s.o.Tick)
	if err != nil {
		return false, fmt.Errorf("eventsweep: take the lease: %w", err)
	}
	if !got {
		return false, nil
	}
	now := s.o.Now()
	certs, err1 := s.o.Checks.SweepCertificates(ctx, now)
	stuck, err2 := s.o.Checks.SweepStuckDocuments(ctx, now)
	if err := errors.Join(err1, err2); err != nil {
		return true, fmt.Errorf("eventsweep: %w", err)
	}
	s.log.Debug("tenant events swept", "certificates", certs, "stuck", stuck)
	return true, nil
}

// startUp is the start-up check: a sweep when this replica gets the lease,
// else the certificate check alone (the contract's "at start-up").
func (s *Sweeper) startUp(ctx context.Context) error {
	swept, err := s.Tick(ctx)
	if swept || (err != nil && ctx.Err() != nil) {
		return err // swept (or stopping): nothing more to check
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	_, cerr := s.o.Checks.SweepCertificates(ctx, s.o.Now())
	if cerr != nil {
		cerr = fmt.Errorf("eventsweep: %w", cerr)
	}
	return errors.Join(err, cerr)
}

// Start runs the start-up check at once, then a Tick every Tick until
// Stop. Failures are logged and the next tick tries again.
func (s *Sweeper) Start(ctx context.Context) error {
	return s.loop.Start(ctx, func(ctx context.Context) {
		if err := s.startUp(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("tenant events: start-up check failed; tried again at the next tick", "err", err)
		}
		loop.Every(ctx, s.o.Tick, func() {
			if _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("tenant events: sweep failed; tried again at the next tick", "err", err)
			}
		})
	})
}

// Stop ends the sweeps, cancelling one in flight, and waits for it or for
// ctx. The lease is left to run out: it spaces the sweeps.
func (s *Sweeper) Stop(ctx context.Context) error { return s.loop.Stop(ctx) }
