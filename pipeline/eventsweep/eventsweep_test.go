package eventsweep_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"facturad/pipeline/eventsweep"
	"facturad/tenant"
	"facturad/tenant/certopen"
	"facturad/tenant/seal"
	"facturad/tenant/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// store is what the tests need of a store: leases and tenant events.
type store interface {
	storetest.TenantEventStore
	tenant.StateStore
}

// replicas opens two stores on one database: SQLite, and PostgreSQL when
// the test environment has it.
func eachReplicas(t *testing.T, fn func(t *testing.T, a, b store)) {
	t.Run("sqlite", func(t *testing.T) {
		a, b := storetest.NewSQLiteReplicas(t, nil)
		fn(t, a, b)
	})
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv(storetest.EnvDatabaseURL) == "" && !storetest.RequireServices(t) {
			t.Skip("no " + storetest.EnvDatabaseURL)
		}
		a, b := storetest.NewPostgresReplicas(t, nil)
		fn(t, a, b)
	})
}

// countingChecks records when each sweep ran.
type countingChecks struct {
	name string
	mu   *sync.Mutex
	log  *[]string
	at   *[]time.Time
	fail error
}

func (c countingChecks) SweepCertificates(context.Context, time.Time) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.log = append(*c.log, c.name+" certificates")
	return 0, c.fail
}

func (c countingChecks) SweepStuckDocuments(context.Context, time.Time) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.log = append(*c.log, c.name+" stuck")
	*c.at = append(*c.at, time.Now())
	return 0, c.fail
}

// Two replicas sweep in turn: every replica checks the certificates at
// start-up; the hourly sweep runs on one replica at a time, spaced by the
// lease, never more than Interval apart.
func TestSweepsTakeTurns(t *testing.T) {
	eachReplicas(t, func(t *testing.T, a, b store) {
		var (
			mu  sync.Mutex
			log []string
			at  []time.Time
		)
		const interval, tick = 600 * time.Millisecond, 50 * time.Millisecond
		start := func(name string, s store) *eventsweep.Sweeper {
			sw, err := eventsweep.New(eventsweep.Options{
				Checks: countingChecks{name: name, mu: &mu, log: &log, at: &at}, Leases: s,
				Holder: name, Interval: interval, Tick: tick, Logger: quiet,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := sw.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			return sw
		}
		began := time.Now()
		swA, swB := start("a", a), start("b", b)
		time.Sleep(3 * time.Second)
		for _, sw := range []*eventsweep.Sweeper{swA, swB} {
			if err := sw.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, r := range []string{"a", "b"} {
			if !slices.Contains(log, r+" certificates") {
				t.Errorf("replica %s never checked the certificates: %v", r, log)
			}
		}
		// 3 s of sweeps at most 0.6 s apart and at least 0.55 s apart
		// (the lease's length): 5 or 6.
		if len(at) < 4 || len(at) > 6 {
			t.Fatalf("%d sweeps in 3s, want about 5: %v", len(at), log)
		}
		if first := at[0].Sub(began); first > 2*tick {
			t.Errorf("the first sweep came %s after the start", first)
		}
		for i := 1; i < len(at); i++ {
			gap := at[i].Sub(at[i-1])
			if gap < interval-tick-50*time.Millisecond || gap > interval+3*tick {
				t.Errorf("sweeps %d and %d are %s apart, want %s to %s", i-1, i, gap, interval-tick, interval)
			}
		}
	})
}

// A failed sweep is reported, and the start-up check still runs when the
// lease cannot be had.
func TestTickReportsFailures(t *testing.T) {
	s := storetest.NewSQLiteStore(t)
	var (
		mu  sync.Mutex
		log []string
		at  []time.Time
	)
	boom := errors.New("store away")
	sw, err := eventsweep.New(eventsweep.Options{Checks: countingChecks{name: "a", mu: &mu, log: &log, at: &at, fail: boom},
		Leases: s, Holder: "a", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	swept, err := sw.Tick(context.Background())
	if !swept || !errors.Is(err, boom) {
		t.Errorf("Tick = %v, %v; want a sweep that failed with the checks' error", swept, err)
	}
	// The lease is held for the interval: the next tick does not sweep.
	swept, err = sw.Tick(context.Background())
	if swept || err != nil {
		t.Errorf("second Tick = %v, %v; want no sweep within the lease", swept, err)
	}
	for _, o := range []eventsweep.Options{{}, {Checks: countingChecks{}}, {Checks: countingChecks{}, Leases: s, Interval: time.Minute, Tick: time.Minute}} {
		if _, err := eventsweep.New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// newService is a tenant service with notice e-mail on over s.
func newService(t *testing.T, s store) *tenant.Service {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := tenant.NewService(tenant.ServiceOptions{Store: s, Sealer: sealer, Certificates: certopen.Opener{},
		Passwords: tenant.Argon2id{Memory: 64, Time: 1, Threads: 1}, NoticeEmail: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// Two replicas' sweepers over the real checks, started at once and again
// (a restart), announce a certificate's stage once: one delivery to the
// webhook and one notice e-mail.
func TestSweepsAnnounceOnce(t *testing.T) {
	eachReplicas(t, func(t *testing.T, a, b store) {
		ctx := context.Background()
		c := storetest.AddCompany(t, a, "Doble S.A.")
		// Its certificate expires in 10 days: stored directly, so that only
		// the sweeps can announce it.
		c.CertificateExpiry = time.Now().Add(10 * 24 * time.Hour)
		c.CorreoNotificaciones = "avisos@doble.example"
		if err := a.UpdateCompany(ctx, &c, true); err != nil {
			t.Fatal(err)
		}
		hook := tenant.Webhook{CompanyID: c.ID, URL: "https://hooks.example/x", Eventos: tenant.TenantEventNames(), SealedSecret: []byte("s")}
		if err := a.CreateWebhook(ctx, &hook, 10); err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			var sweepers []*eventsweep.Sweeper
			for i, s := range []store{a, b} {
				sw, err := eventsweep.New(eventsweep.Options{Checks: newService(t, s), Leases: s,
					Holder: fmt.Sprintf("r%d-%d", round, i), Logger: quiet})
				if err != nil {
					t.Fatal(err)
				}
				if err := sw.Start(ctx); err != nil {
					t.Fatal(err)
				}
				sweepers = append(sweepers, sw)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				ds, err := a.Deliveries(ctx, hook.ID, tenant.DeliveryPage{Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				if len(ds) > 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond) // the other replica's check too
			for _, sw := range sweepers {
				if err := sw.Stop(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		ds, err := a.Deliveries(ctx, hook.ID, tenant.DeliveryPage{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 1 || ds[0].Evento != tenant.EventCertificateExpiring {
			t.Errorf("deliveries %+v, want one certificado.por_vencer", ds)
		}
		far := time.Now().Add(time.Hour)
		es, err := a.ClaimDueEmails(ctx, far, far.Add(time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 1 || es[0].EventID != ds[0].EventID {
			t.Errorf("notices %+v, want the one of event %s", es, ds[0].EventID)
		}
	})
}
