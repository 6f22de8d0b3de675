package statereport_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/pipeline/statereport"
	"facturad/tenant"
	"facturad/tenant/postgres"
	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

// clock is a settable clock shared by the replicas of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// twoReplicas opens two stores on one database, as two replicas hold them.
type twoReplicas func(t *testing.T, now func() time.Time) (storetest.StateStore, storetest.StateStore)

func postgresReplicas(t *testing.T, now func() time.Time) (storetest.StateStore, storetest.StateStore) {
	return storetest.NewPostgresReplicas(t, func(_ int, o *postgres.Options) { o.MaxConns, o.Now = 2, now })
}

func sqliteReplicas(t *testing.T, now func() time.Time) (storetest.StateStore, storetest.StateStore) {
	return storetest.NewSQLiteReplicas(t, func(_ int, o *sqlite.Options) { o.Now = now })
}

var stores = []struct {
	name string
	open twoReplicas
}{
	{"postgres", postgresReplicas},
	{"sqlite", sqliteReplicas},
}

// replica is one reporter with its own registry.
type replica struct {
	name string
	r    *statereport.Reporter
	reg  *prometheus.Registry
}

// The replicas' refresh interval and lease. Leases run on the store's
// clock, which is the real one on PostgreSQL: the tests wait for a lease to
// end for real, so it is short, yet long enough for a loaded machine.
const (
	interval = 500 * time.Millisecond
	leaseTTL = 1500 * time.Millisecond
)

func newReplica(t *testing.T, name string, s statereport.Store, c *clock) replica {
	t.Helper()
	reg := prometheus.NewRegistry()
	r, err := statereport.New(statereport.Options{
		Store:      s,
		Holder:     name,
		Interval:   interval,
		LeaseTTL:   leaseTTL,
		Registerer: reg,
		Now:        c.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return replica{name, r, reg}
}

func (x replica) refresh(t *testing.T) {
	t.Helper()
	if err := x.r.Refresh(context.Background()); err != nil {
		t.Fatalf("%s: Refresh: %v", x.name, err)
	}
}

// series gathers x's registry as "name{label=value,...}" -> value.
func (x replica) series(t *testing.T) map[string]float64 {
	t.Helper()
	mfs, err := x.reg.Gather()
	if err != nil {
		t.Fatalf("%s: gather: %v", x.name, err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			key := mf.GetName()
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			out[key] = m.GetGauge().GetValue()
		}
	}
	return out
}

// checkOnlyReporter asserts that want exports every store-wide series with
// the seeded values and other exports only facturad_state_reporter 0.
func checkOnlyReporter(t *testing.T, want, other replica, c *clock, seeded map[string]float64) {
	t.Helper()
	got := want.series(t)
	for k, v := range seeded {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: %s = %v (present %v), want %v", want.name, k, g, ok, v)
		}
	}
	if got["facturad_state_reporter"] != 1 {
		t.Errorf("%s: facturad_state_reporter = %v, want 1", want.name, got["facturad_state_reporter"])
	}
	if ts := got["facturad_state_last_refresh_timestamp_seconds"]; ts <= 0 || ts > float64(c.Now().Unix())+1 {
		t.Errorf("%s: last refresh timestamp %v, want a time up to now %v", want.name, ts, c.Now().Unix())
	}
	if !want.r.Reporting() || other.r.Reporting() {
		t.Errorf("Reporting: %s %v, %s %v; want only %s", want.name, want.r.Reporting(), other.name, other.r.Reporting(), want.name)
	}
	if o := other.series(t); len(o) != 1 || o["facturad_state_reporter"] != 0 {
		t.Errorf("%s exports %v, want only facturad_state_reporter 0", other.name, o)
	}
}

func TestOneReplicaExports(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			// The stores stamp documents with the test's clock too.
			c := &clock{t: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
			s1, s2 := st.open(t, c.Now)
			st := storetest.SeedState(t, s1, c.Now())
			a, b := newReplica(t, "a", s1, c), newReplica(t, "b", s2, c)

			// Nobody has refreshed: nobody exports store-wide values.
			for _, x := range []replica{a, b} {
				if got := x.series(t); len(got) != 1 || got["facturad_state_reporter"] != 0 {
					t.Errorf("%s before any refresh exports %v", x.name, got)
				}
			}

			c.Add(10 * time.Second)
			a.refresh(t)
			b.refresh(t)
			seeded := func() map[string]float64 {
				return map[string]float64{
					`facturad_documents{ambiente=pruebas,estado=00,kind=document,waiting=service}`: 1,
					`facturad_documents{ambiente=pruebas,estado=00,kind=document,waiting=caller}`:  1,
					`facturad_documents{ambiente=pruebas,estado=04,kind=document,waiting=service}`: 1,
					`facturad_documents{ambiente=pruebas,estado=04,kind=document,waiting=caller}`:  0,
					`facturad_documents{ambiente=pruebas,estado=05,kind=document,waiting=service}`: 1,
					`facturad_documents{ambiente=pruebas,estado=05,kind=document,waiting=caller}`:  1,
					`facturad_documents{ambiente=pruebas,estado=00,kind=received,waiting=service}`: 0,
					`facturad_documents{ambiente=pruebas,estado=00,kind=received,waiting=caller}`:  0,
					`facturad_documents{ambiente=pruebas,estado=04,kind=received,waiting=service}`: 1,
					`facturad_documents{ambiente=pruebas,estado=04,kind=received,waiting=caller}`:  0,
					`facturad_documents{ambiente=pruebas,estado=05,kind=received,waiting=service}`: 0,
					`facturad_documents{ambiente=pruebas,estado=05,kind=received,waiting=caller}`:  1,
					`facturad_certificates_expiring{within=30d}`:                                   3,
					`facturad_certificates_expiring{within=7d}`:                                    2,
					`facturad_certificates_expiring{within=expired}`:                               1,
					`facturad_oldest_unsettled_document_age_seconds{kind=document}`:                c.Now().Sub(st.OldestServiceWaiting[tenant.UnsettledDocument]).Seconds(),
					`facturad_oldest_unsettled_document_age_seconds{kind=received}`:                c.Now().Sub(st.OldestServiceWaiting[tenant.UnsettledReceived]).Seconds(),
					`facturad_state_last_refresh_timestamp_seconds`:                                float64(c.Now().UnixNano()) / 1e9,
				}
			}
			for k, n := range st.Unsettled {
				if seeded()[fmt.Sprintf("facturad_documents{ambiente=%s,estado=%s,kind=%s,waiting=%s}", k.Ambiente, k.Estado, k.Kind, k.Waiting)] != float64(n) {
					t.Fatalf("seed: %v", st.Unsettled)
				}
			}
			if got := len(a.series(t)); got != 24+2+3+2 {
				t.Errorf("the reporter exports %d series, want 31: 24 counts, 2 ages, 3 certificate counts, the refresh and the reporter", got)
			}
			checkOnlyReporter(t, a, b, c, seeded())

			// Renewals keep it with a; b keeps asking in vain.
			for range 3 {
				c.Add(interval)
				b.refresh(t)
				a.refresh(t)
				checkOnlyReporter(t, a, b, c, seeded())
			}

			// a dies (no more refreshes, no release): it stops exporting
			// once its lease ends by its clock, and b takes over at its
			// first refresh after the store's lease ends, not before.
			c.Add(leaseTTL - time.Millisecond)
			b.refresh(t)
			if b.r.Reporting() || !a.r.Reporting() {
				t.Fatalf("before the end of a's lease: a %v, b %v", a.r.Reporting(), b.r.Reporting())
			}
			c.Add(time.Millisecond)
			if a.r.Reporting() {
				t.Error("a still reports after its lease ended")
			}
			time.Sleep(leaseTTL) // the store's clock, on PostgreSQL
			b.refresh(t)
			c.Add(time.Second) // the age grows between refreshes
			seededLater := seeded()
			seededLater[`facturad_state_last_refresh_timestamp_seconds`] -= 1
			checkOnlyReporter(t, b, a, c, seededLater)

			// b stops: it releases the lease, and a gets it at once.
			if err := b.r.Stop(context.Background()); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			a.refresh(t)
			checkOnlyReporter(t, a, b, c, seeded())
		})
	}
}

func TestStartRefreshesAndStopReleases(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
	s1, s2 := postgresReplicas(t, c.Now)
	storetest.SeedState(t, s1, c.Now())
	reg := prometheus.NewRegistry()
	r, err := statereport.New(statereport.Options{Store: s1, Holder: "started", Interval: 20 * time.Millisecond, Registerer: reg, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !r.Reporting() {
		if time.Now().After(deadline) {
			t.Fatal("the started reporter never reported")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := r.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if r.Reporting() {
		t.Error("a stopped reporter still reports")
	}
	// Released: another replica takes the lease at once.
	ok, err := s2.TakeLease(context.Background(), statereport.LeaseName, "other", time.Minute)
	if err != nil || !ok {
		t.Errorf("TakeLease after Stop = %v, %v; want the lease", ok, err)
	}
}

func TestOptions(t *testing.T) {
	s, _ := sqliteReplicas(t, time.Now)
	tests := []struct {
		name string
		o    statereport.Options
	}{
		{"error/no store", statereport.Options{}},
		{"error/lease not longer than the interval", statereport.Options{Store: s, Interval: time.Minute, LeaseTTL: time.Minute}},
		{"error/negative interval", statereport.Options{Store: s, Interval: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := statereport.New(tt.o); err == nil {
				t.Error("New accepted the options")
			}
		})
	}
}

// fakeStore is a store on the test's clock whose reads can be made to fail.
type fakeStore struct {
	c *clock

	mu     sync.Mutex
	holder string
	until  time.Time
	fail   bool
}

func (f *fakeStore) StoreState(context.Context, time.Time) (tenant.StoreState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return tenant.StoreState{}, errors.New("store unavailable")
	}
	st := tenant.NewStoreState()
	st.Unsettled[tenant.Unsettled{Kind: tenant.UnsettledDocument, Ambiente: tenant.AmbientePruebas, Estado: tenant.StateNotSentYet, Waiting: tenant.WaitingService}] = 7
	return st, nil
}

func (f *fakeStore) TakeLease(_ context.Context, _, holder string, ttl time.Duration) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.c.Now()
	if f.holder != "" && f.holder != holder && now.Before(f.until) {
		return false, nil
	}
	f.holder, f.until = holder, now.Add(ttl)
	return true, nil
}

func (f *fakeStore) ReleaseLease(context.Context, string, string) error { return nil }

func (f *fakeStore) setFail(v bool) { f.mu.Lock(); f.fail = v; f.mu.Unlock() }

// A holder that keeps renewing its lease while every read fails withdraws
// the values once they are LeaseTTL old, instead of exporting them frozen;
// it still says it holds the lease. A read that works again brings them
// back.
func TestFailedReadsWithdrawValues(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
	f := &fakeStore{c: c}
	a := newReplica(t, "a", f, c)
	a.refresh(t)
	const docs = `facturad_documents{ambiente=pruebas,estado=05,kind=document,waiting=service}`
	if got := a.series(t); got[docs] != 7 || got["facturad_state_reporter"] != 1 {
		t.Fatalf("after a good read: %v", got)
	}
	f.setFail(true)
	steps := []struct {
		after  time.Duration // since the good read
		values bool
	}{
		{interval, true},
		{2 * interval, true},
		{leaseTTL - time.Millisecond, true},
		{leaseTTL, false},
		{leaseTTL + interval, false},
	}
	var since time.Duration
	for _, st := range steps {
		c.Add(st.after - since)
		since = st.after
		if err := a.r.Refresh(context.Background()); err == nil {
			t.Fatalf("+%s: Refresh of a failing store did not fail", st.after)
		}
		got := a.series(t)
		if _, ok := got[docs]; ok != st.values || a.r.Reporting() != st.values {
			t.Errorf("+%s: values exported %v, Reporting %v; want %v", st.after, ok, a.r.Reporting(), st.values)
		}
		if _, ok := got["facturad_state_last_refresh_timestamp_seconds"]; ok != st.values {
			t.Errorf("+%s: last refresh exported %v, want %v", st.after, ok, st.values)
		}
		if got["facturad_state_reporter"] != 1 {
			t.Errorf("+%s: facturad_state_reporter = %v, want 1: the lease is renewed", st.after, got["facturad_state_reporter"])
		}
	}
	f.setFail(false)
	c.Add(interval)
	a.refresh(t)
	if got := a.series(t); got[docs] != 7 {
		t.Errorf("after the store came back: %v", got)
	}
}
