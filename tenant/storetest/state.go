package storetest

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"facturad/tenant"
)

// StateStore is what the state suite needs: a store to make companies and
// documents in, and the tenant.StateStore under test. Both adapters are one.
type StateStore interface {
	DocumentStore
	tenant.StateStore
}

// RunState checks the tenant.StateStore contract as subtests: the counts
// of the state gauges over a seeded set, and the leases. open must return a
// fresh, empty, migrated store for each call and arrange its cleanup.
func RunState(t *testing.T, open func(t *testing.T) StateStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s StateStore)
	}{
		{"ok/empty store", testStateEmpty},
		{"ok/unsettled documents per state and the oldest", testStateDocuments},
		{"ok/certificates expiring of active companies", testStateCertificates},
		{"ok/lease taken renewed and taken over after its end", testLeaseTakeover},
		{"ok/released lease is free at once", testLeaseRelease},
		{"ok/concurrent takers: one wins", testLeaseRace},
		{"error/lease arguments", testLeaseArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, open(t))
		})
	}
}

// sameCounts fails the test when the counts per state differ.
func sameCounts(t *testing.T, what string, want, got map[tenant.State]int64) {
	t.Helper()
	if !maps.Equal(want, got) {
		t.Errorf("%s: counts %v, want %v", what, got, want)
	}
}

// stateNow is the "now" of the state tests.
var stateNow = time.Date(2026, 5, 6, 7, 8, 9, 123456000, time.UTC)

func testStateEmpty(t *testing.T, s StateStore) {
	st, err := s.StoreState(context.Background(), stateNow)
	mustNot(t, "StoreState", err)
	sameCounts(t, "empty store", map[tenant.State]int64{"00": 0, "04": 0, "05": 0}, st.Unsettled)
	if !st.OldestUnsettled.IsZero() {
		t.Errorf("OldestUnsettled %v, want zero", st.OldestUnsettled)
	}
	if got := [3]int64{st.CertificatesWithin30d, st.CertificatesWithin7d, st.CertificatesExpired}; got != [3]int64{} {
		t.Errorf("certificates (30d, 7d, expired) = %v, want none", got)
	}
}

func testStateDocuments(t *testing.T, s StateStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	states := []struct {
		name string
		st   tenant.State
	}{
		// The oldest is settled, so it is not the oldest unsettled one.
		{"first-01", tenant.StateAccepted},
		{"second-05", tenant.StateNotSentYet},
		{"third-04", tenant.StateSent},
		{"fourth-02", tenant.StateRejected},
		{"fifth-03", tenant.StateError},
		{"sixth-00", tenant.StatePending},
		{"seventh-05", tenant.StateNotSentYet},
		{"eighth-05", tenant.StateNotSentYet},
		{"ninth-04", tenant.StateSent},
		{"tenth-01", tenant.StateAccepted},
	}
	var docs []tenant.Document
	for i, x := range states {
		d := minimalDocument([]tenant.Branch{f.Branch, f.Branch2}[i%2], x.name, "01", "00001")
		d.Estado = x.st
		mustNot(t, "ReserveDocument "+x.name, s.ReserveDocument(ctx, &d))
		docs = append(docs, d)
		// Distinct creation times whatever the clock's resolution.
		time.Sleep(2 * time.Millisecond)
	}
	st, err := s.StoreState(ctx, stateNow)
	mustNot(t, "StoreState", err)
	sameCounts(t, "unsettled", map[tenant.State]int64{"00": 1, "04": 2, "05": 3}, st.Unsettled)
	if !st.OldestUnsettled.Equal(docs[1].CreatedAt) {
		t.Errorf("OldestUnsettled %v, want %v (second-05's creation)", st.OldestUnsettled, docs[1].CreatedAt)
	}
	if !isUTC(st.OldestUnsettled) {
		t.Errorf("OldestUnsettled %v is not UTC", st.OldestUnsettled)
	}

	// Settling the oldest moves the oldest to the next one; the counts follow.
	d := docs[1]
	d.Estado = tenant.StateAccepted
	mustNot(t, "SaveDocument", s.SaveDocument(ctx, &d))
	st, err = s.StoreState(ctx, stateNow)
	mustNot(t, "StoreState after settling", err)
	sameCounts(t, "unsettled after settling", map[tenant.State]int64{"00": 1, "04": 2, "05": 2}, st.Unsettled)
	if !st.OldestUnsettled.Equal(docs[2].CreatedAt) {
		t.Errorf("OldestUnsettled after settling %v, want %v (third-04's creation)", st.OldestUnsettled, docs[2].CreatedAt)
	}
}

func testStateCertificates(t *testing.T, s StateStore) {
	ctx := context.Background()
	now := stateNow
	day := 24 * time.Hour
	tests := []struct {
		name   string
		expiry time.Time // zero: no certificate
		active bool
	}{
		{"expired an hour ago", now.Add(-time.Hour), true},
		{"expires right now", now, true},
		{"expires in an hour", now.Add(time.Hour), true},
		{"expires in exactly 7 days", now.Add(7 * day), true},
		{"expires just after 7 days", now.Add(7*day + time.Microsecond), true},
		{"expires in exactly 30 days", now.Add(30 * day), true},
		{"expires just after 30 days", now.Add(30*day + time.Microsecond), true},
		{"expires next year", now.Add(365 * day), true},
		{"inactive expiring in an hour", now.Add(time.Hour), false},
		{"inactive expired", now.Add(-day), false},
		{"no certificate", time.Time{}, true},
	}
	for _, tt := range tests {
		id, err := s.NextCompanyID(ctx)
		mustNot(t, "NextCompanyID", err)
		c, b, u := company(id, tt.name), branch("001"), user(fmt.Sprintf("cert-%d", id))
		c.CertificateExpiry, c.Activo = tt.expiry, tt.active
		if tt.expiry.IsZero() {
			c.SealedCertificate, c.SealedCertificatePIN, c.CertificateVersion = nil, nil, 0
		}
		mustNot(t, "CreateCompany "+tt.name, s.CreateCompany(ctx, &c, &b, &u))
	}
	st, err := s.StoreState(ctx, now)
	mustNot(t, "StoreState", err)
	got := [3]int64{st.CertificatesWithin30d, st.CertificatesWithin7d, st.CertificatesExpired}
	// 30d: in an hour, 7 days, just after 7 days, 30 days; 7d: the first
	// two; expired: an hour ago and right now.
	if want := [3]int64{4, 2, 2}; got != want {
		t.Errorf("certificates (30d, 7d, expired) = %v, want %v", got, want)
	}
	// A day later, the one that expired in an hour has expired, and the
	// one just after 7 days is within 7.
	st, err = s.StoreState(ctx, now.Add(day))
	mustNot(t, "StoreState a day later", err)
	got = [3]int64{st.CertificatesWithin30d, st.CertificatesWithin7d, st.CertificatesExpired}
	if want := [3]int64{4, 2, 3}; got != want {
		t.Errorf("a day later: certificates (30d, 7d, expired) = %v, want %v", got, want)
	}
}

// takeLease calls TakeLease and fails the test on an error.
func takeLease(t *testing.T, s StateStore, name, holder string, now, until time.Time) bool {
	t.Helper()
	ok, err := s.TakeLease(context.Background(), name, holder, now, until)
	mustNot(t, "TakeLease "+holder, err)
	return ok
}

func testLeaseTakeover(t *testing.T, s StateStore) {
	t0, ttl := stateNow, 30*time.Second
	steps := []struct {
		holder string
		at     time.Duration
		want   bool
	}{
		{"a", 0, true},                   // free
		{"b", 10 * time.Second, false},   // a holds it until 30s
		{"a", 10 * time.Second, true},    // renewal: until 40s
		{"b", 30 * time.Second, false},   // the renewal counts
		{"b", 40*time.Second - 1, false}, // not yet over
		{"b", 40 * time.Second, true},    // over at its end: taken over until 70s
		{"a", 41 * time.Second, false},   // a lost it
		{"b", 50 * time.Second, true},
	}
	for i, st := range steps {
		now := t0.Add(st.at)
		if got := takeLease(t, s, "state", st.holder, now, now.Add(ttl)); got != st.want {
			t.Errorf("step %d: %s takes at +%s = %v, want %v", i, st.holder, st.at, got, st.want)
		}
	}
	// Another name is another lease.
	if !takeLease(t, s, "other", "a", t0.Add(41*time.Second), t0.Add(time.Minute)) {
		t.Error("a could not take a free lease of another name")
	}
}

func testLeaseRelease(t *testing.T, s StateStore) {
	ctx := context.Background()
	t0, until := stateNow, stateNow.Add(time.Minute)
	if !takeLease(t, s, "state", "a", t0, until) {
		t.Fatal("a could not take a free lease")
	}
	// Releasing what one does not hold changes nothing.
	mustNot(t, "ReleaseLease by b", s.ReleaseLease(ctx, "state", "b"))
	if takeLease(t, s, "state", "b", t0.Add(time.Second), until) {
		t.Fatal("b took a's lease after releasing it without holding it")
	}
	mustNot(t, "ReleaseLease by a", s.ReleaseLease(ctx, "state", "a"))
	if !takeLease(t, s, "state", "b", t0.Add(time.Second), until) {
		t.Error("b could not take the lease a released")
	}
}

func testLeaseRace(t *testing.T, s StateStore) {
	const takers = 8
	for round := range 3 {
		name := fmt.Sprintf("race-%d", round)
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			won []string
		)
		errs := make(chan error, takers)
		for i := range takers {
			holder := fmt.Sprintf("replica-%d", i)
			wg.Go(func() {
				ok, err := s.TakeLease(context.Background(), name, holder, stateNow, stateNow.Add(time.Minute))
				if err != nil {
					errs <- err
					return
				}
				if ok {
					mu.Lock()
					won = append(won, holder)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent TakeLease: %v", err)
		}
		if len(won) != 1 {
			t.Errorf("round %d: %d takers got the lease (%v), want exactly 1", round, len(won), won)
		}
	}
}

func testLeaseArgs(t *testing.T, s StateStore) {
	ctx := context.Background()
	tests := []struct {
		name, lease, holder string
		until               time.Time
	}{
		{"error/end not after now", "state", "a", stateNow},
		{"error/end before now", "state", "a", stateNow.Add(-time.Second)},
		{"error/empty name", "", "a", stateNow.Add(time.Second)},
		{"error/empty holder", "state", "", stateNow.Add(time.Second)},
	}
	for _, tt := range tests {
		ok, err := s.TakeLease(ctx, tt.lease, tt.holder, stateNow, tt.until)
		if err == nil || ok {
			t.Errorf("%s: TakeLease = %v, %v; want an error", tt.name, ok, err)
		}
	}
	// None of them took it.
	if !takeLease(t, s, "state", "b", stateNow, stateNow.Add(time.Second)) {
		t.Error("a refused TakeLease left the lease taken")
	}
}

// SeedState fills s with a known set for the state gauges, as of now, and
// returns the StoreState it must read: two companies of documents in every
// state (5 unsettled: two 00, one 04, two 05), and companies whose
// certificates expired (1), expire within 7 days (2) or within 30 days (3
// in all). Other packages' tests use it to check what they export.
func SeedState(tb testing.TB, s StateStore, now time.Time) tenant.StoreState {
	tb.Helper()
	ctx := context.Background()
	f := newDocFixture(tb, s)
	want := tenant.StoreState{Unsettled: map[tenant.State]int64{}}
	for _, e := range tenant.UnsettledStates {
		want.Unsettled[e] = 0
	}
	states := []tenant.State{"01", "05", "04", "02", "00", "03", "05", "00", "01"}
	for i, st := range states {
		d := minimalDocument([]tenant.Branch{f.Branch, f.Branch2}[i%2], fmt.Sprintf("seed-%d-%s", i, st), "01", "00001")
		d.Estado = st
		if err := s.ReserveDocument(ctx, &d); err != nil {
			tb.Fatalf("seed document %d: %v", i, err)
		}
		if _, ok := want.Unsettled[st]; ok {
			want.Unsettled[st]++
			if want.OldestUnsettled.IsZero() {
				want.OldestUnsettled = d.CreatedAt
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	day := 24 * time.Hour
	for i, expiry := range []time.Time{now.Add(-day), now.Add(day), now.Add(6 * day), now.Add(20 * day), now.Add(90 * day)} {
		id, err := s.NextCompanyID(ctx)
		if err != nil {
			tb.Fatalf("seed company %d: %v", i, err)
		}
		c, b, u := company(id, fmt.Sprintf("Certificado %d", i)), branch("001"), user(fmt.Sprintf("seed-cert-%d", id))
		c.CertificateExpiry = expiry
		if err := s.CreateCompany(ctx, &c, &b, &u); err != nil {
			tb.Fatalf("seed company %d: %v", i, err)
		}
	}
	want.CertificatesExpired, want.CertificatesWithin7d, want.CertificatesWithin30d = 1, 2, 3
	// The documents' company has its certificate a year or more away,
	// whatever now is, only if now is before then: keep it out.
	if f.Company.CertificateExpiry.Before(now.Add(30 * day)) {
		tb.Fatalf("seed: pass a now before %v", f.Company.CertificateExpiry.Add(-30*day))
	}
	return want
}
