package dependency

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestNewRefusesBadChecks(t *testing.T) {
	ok := func(context.Context) error { return nil }
	tests := []struct {
		name   string
		checks []Check
	}{
		{"no name", []Check{{Probe: ok}}},
		{"no probe", []Check{{Name: "store"}}},
		{"twice", []Check{{Name: "store", Probe: ok}, {Name: "store", Probe: ok}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(Options{Checks: tt.checks}); err == nil {
				t.Fatal("New accepted the checks")
			}
		})
	}
}

// waitGauge waits until the gauge of dep reads want.
func waitGauge(t *testing.T, p *Prober, dep string, want float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if got := testutil.ToFloat64(p.up.WithLabelValues(dep)); got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("dependency_up{dependency=%q} = %v, want %v", dep, testutil.ToFloat64(p.up.WithLabelValues(dep)), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The gauge follows each dependency's probes, down and back up, and the
// log says each change once.
func TestProberFollowsTheProbes(t *testing.T) {
	var storeDown atomic.Bool
	var logs bytes.Buffer
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logs, mu}, nil))
	reg := prometheus.NewRegistry()
	p, err := New(Options{
		Checks: []Check{
			{Name: "store", Probe: func(context.Context) error {
				if storeDown.Load() {
					return errors.New("connection refused")
				}
				return nil
			}},
			{Name: "smtp", Probe: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }},
		},
		Interval:   10 * time.Millisecond,
		Timeout:    20 * time.Millisecond,
		Registerer: reg,
		Logger:     logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(reg); n != 0 {
		t.Fatalf("%d series before the first probe", n)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer p.Stop(context.Background())
	waitGauge(t, p, "store", 1)
	waitGauge(t, p, "smtp", 0) // a probe that does not answer in time is down
	storeDown.Store(true)
	waitGauge(t, p, "store", 0)
	time.Sleep(50 * time.Millisecond) // several failed probes: one line
	storeDown.Store(false)
	waitGauge(t, p, "store", 1)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-mu
	text := logs.String()
	mu <- struct{}{}
	if n := strings.Count(text, `msg="dependency down" dependency=store`); n != 1 {
		t.Errorf("store went down once, logged %d times:\n%s", n, text)
	}
	if n := strings.Count(text, `msg="dependency back" dependency=store`); n != 1 {
		t.Errorf("store came back once, logged %d times:\n%s", n, text)
	}
}

// Start does not wait for a slow probe.
func TestStartDoesNotWait(t *testing.T) {
	release := make(chan struct{})
	p, err := New(Options{Checks: []Check{{Name: "archive", Probe: func(ctx context.Context) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}}}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Start took %s", d)
	}
	close(release)
	waitGauge(t, p, "archive", 1)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Each dependency is probed once at Start, then every interval (its own
// when it has one); Start twice is an error, and after Stop no probe runs.
func TestProbesAtStartThenEveryInterval(t *testing.T) {
	var fast, slow atomic.Int32
	p, err := New(Options{
		Checks: []Check{
			{Name: "store", Probe: func(context.Context) error { fast.Add(1); return nil }},
			{Name: "smtp", Interval: time.Hour, Probe: func(context.Context) error { slow.Add(1); return nil }},
		},
		Interval: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer p.Stop(context.Background())
	if err := p.Start(context.Background()); err == nil || err.Error() != "dependency: already started" {
		t.Errorf("second Start: %v", err)
	}
	// An hour's interval: only the first probe, at Start, sets the gauge.
	waitGauge(t, p, "smtp", 1)
	deadline := time.Now().Add(5 * time.Second)
	for fast.Load() < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("store probed %d times in 5 s at a 5 ms interval", fast.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := slow.Load(); n != 1 {
		t.Errorf("smtp (an hour's interval) probed %d times, want 1: at Start", n)
	}
	after := fast.Load()
	time.Sleep(30 * time.Millisecond)
	if n := fast.Load(); n != after {
		t.Errorf("store probed %d times after Stop returned", n-after)
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu chan struct{}
}

func (w lockedWriter) Write(p []byte) (int, error) {
	<-w.mu
	defer func() { w.mu <- struct{}{} }()
	return w.b.Write(p)
}
