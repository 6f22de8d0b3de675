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

// StateStore is what the state suite needs: a store to make companies,
// documents and received documents in, and the tenant.StateStore under
// test. Both adapters are one.
type StateStore interface {
	DocumentStore
	tenant.ReceivedStore
	tenant.StateStore
}

// RunState checks the tenant.StateStore contract as subtests: the counts
// of the state gauges over a seeded set, and the leases. open must return a
// fresh, empty, migrated store for each call and arrange its cleanup.
func RunState(t *testing.T, open func(t *testing.T) StateStore) {
	contract[StateStore]{
		{"ok/empty store", testStateEmpty},
		{"ok/unsettled documents per state and the oldest", testStateDocuments},
		{"ok/unsettled received documents' messages apart from documents", testStateReceived},
		{"ok/certificates expiring of active companies", testStateCertificates},
		{"ok/lease taken renewed and taken over after its end", testLeaseTakeover},
		{"ok/released lease is free at once", testLeaseRelease},
		{"ok/concurrent takers: one wins", testLeaseRace},
		{"error/lease arguments", testLeaseArgs},
	}.run(t, open)
}

// sameCounts fails the test when the counts per state and side differ.
func sameCounts(t *testing.T, what string, want, got map[tenant.Unsettled]int64) {
	t.Helper()
	if !maps.Equal(want, got) {
		t.Errorf("%s: counts %v, want %v", what, got, want)
	}
}

// counts builds the expected counts of issued documents: service and
// caller per state, in the order 00, 04, 05; received documents' messages
// none.
func counts(service, caller [3]int64) map[tenant.Unsettled]int64 {
	return countsOf(tenant.UnsettledDocument, service, caller)
}

// countsOf builds the expected counts: those of kind as counts says, every
// other kind's zero.
func countsOf(kind tenant.UnsettledKind, service, caller [3]int64) map[tenant.Unsettled]int64 {
	m := tenant.NewStoreState().Unsettled
	for i, e := range tenant.UnsettledStates {
		m[tenant.Unsettled{Kind: kind, Ambiente: tenant.AmbientePruebas, Estado: e, Waiting: tenant.WaitingService}] = service[i]
		m[tenant.Unsettled{Kind: kind, Ambiente: tenant.AmbientePruebas, Estado: e, Waiting: tenant.WaitingCaller}] = caller[i]
	}
	return m
}

// sameOldest fails the test unless the oldest row the service works on is
// want for kind (zero: none) and none for the other kind, in UTC.
func sameOldest(t *testing.T, what string, st tenant.StoreState, kind tenant.UnsettledKind, want time.Time) {
	t.Helper()
	for _, k := range tenant.UnsettledKinds {
		got := st.OldestServiceWaiting[k]
		w := time.Time{}
		if k == kind {
			w = want
		}
		if !got.Equal(w) {
			t.Errorf("%s: OldestServiceWaiting[%s] %v, want %v", what, k, got, w)
		}
		if !got.IsZero() && !isUTC(got) {
			t.Errorf("%s: OldestServiceWaiting[%s] %v is not UTC", what, k, got)
		}
	}
}

// stateNow is the "now" of the state tests.
var stateNow = time.Date(2026, 5, 6, 7, 8, 9, 123456000, time.UTC)

func testStateEmpty(t *testing.T, s StateStore) {
	st, err := s.StoreState(context.Background(), stateNow)
	mustNot(t, "StoreState", err)
	sameCounts(t, "empty store", counts([3]int64{}, [3]int64{}), st.Unsettled)
	sameOldest(t, "empty store", st, tenant.UnsettledDocument, time.Time{})
	if got := [3]int64{st.CertificatesWithin30d, st.CertificatesWithin7d, st.CertificatesExpired}; got != [3]int64{} {
		t.Errorf("certificates (30d, 7d, expired) = %v, want none", got)
	}
}

func testStateDocuments(t *testing.T, s StateStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	next := stateNow.Add(time.Minute)
	states := []struct {
		name string
		st   tenant.State
		next time.Time // zero: no next attempt, the company must act
	}{
		// The oldest is settled, so it is not the oldest unsettled one.
		{"first-01", tenant.StateAccepted, time.Time{}},
		// Credentials refused: older than every document the service
		// works on, but left out of the oldest.
		{"second-05", tenant.StateNotSentYet, time.Time{}},
		{"third-04", tenant.StateSent, next},
		{"fourth-02", tenant.StateRejected, time.Time{}},
		{"fifth-03", tenant.StateError, time.Time{}},
		{"sixth-00", tenant.StatePending, time.Time{}}, // certificate expired
		{"seventh-05", tenant.StateNotSentYet, next},
		{"eighth-05", tenant.StateNotSentYet, next},
		{"ninth-04", tenant.StateSent, time.Time{}}, // no verdict: polling stopped
		{"tenth-00", tenant.StatePending, next},
		{"eleventh-01", tenant.StateAccepted, time.Time{}},
	}
	var docs []tenant.Document
	for i, x := range states {
		d := minimalDocument([]tenant.Branch{f.Branch, f.Branch2}[i%2], x.name, "01", "00001")
		d.NextAttemptAt = x.next
		d.Place(x.st)
		mustNot(t, "ReserveDocument "+x.name, s.ReserveDocument(ctx, &d))
		docs = append(docs, d)
		// Distinct creation times whatever the clock's resolution.
		time.Sleep(2 * time.Millisecond)
	}
	check := func(what string, service, caller [3]int64, oldest tenant.Document) {
		t.Helper()
		st, err := s.StoreState(ctx, stateNow)
		mustNot(t, "StoreState "+what, err)
		sameCounts(t, what, counts(service, caller), st.Unsettled)
		sameOldest(t, what+" ("+oldest.IDExterno+"'s creation)", st, tenant.UnsettledDocument, oldest.CreatedAt)
	}
	check("seeded", [3]int64{1, 1, 2}, [3]int64{1, 1, 1}, docs[2])

	// Settling the oldest the service works on moves the oldest to the
	// next one; the counts follow.
	d := docs[2]
	d.NextAttemptAt = time.Time{}
	d.Place(tenant.StateAccepted)
	mustNot(t, "SaveDocument third", s.SaveDocument(ctx, &d))
	check("after settling", [3]int64{1, 0, 2}, [3]int64{1, 1, 1}, docs[6])

	// A repeat of its request makes the refused 05 due again: it moves to
	// the service's side and is now the oldest.
	d = docs[1]
	d.NextAttemptAt = next
	mustNot(t, "SaveDocument second", s.SaveDocument(ctx, &d))
	check("after rescheduling", [3]int64{1, 0, 3}, [3]int64{1, 1, 0}, docs[1])

	// The service gives up on a 05: it moves to the caller's side.
	d = docs[6]
	d.NextAttemptAt = time.Time{}
	mustNot(t, "SaveDocument seventh", s.SaveDocument(ctx, &d))
	check("after giving up", [3]int64{1, 0, 2}, [3]int64{1, 1, 1}, docs[1])
}

// testStateReceived: the company's messages on received documents are
// counted under their own kind, as documents are (per state and side, the
// oldest the service works on), and never mixed with the documents'.
func testStateReceived(t *testing.T, s StateStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	next := stateNow.Add(time.Minute)
	// An issued document in 05 the service works on, older than every
	// message: it stays the documents' oldest, never the messages'.
	d := minimalDocument(f.Branch, "issued-05", "01", "00001")
	d.NextAttemptAt = next
	d.Place(tenant.StateNotSentYet)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	time.Sleep(2 * time.Millisecond)
	states := []struct {
		name string
		st   tenant.State
		next time.Time // zero: no next attempt, the company must act
	}{
		{"m-01", tenant.StateAccepted, time.Time{}},
		{"m-05-caller", tenant.StateNotSentYet, time.Time{}}, // credentials refused
		{"m-04", tenant.StateSent, next},
		{"m-02", tenant.StateRejected, time.Time{}},
		{"m-05", tenant.StateNotSentYet, next},
		{"m-00-caller", tenant.StatePending, time.Time{}}, // certificate expired
		{"m-00", tenant.StatePending, next},
		{"m-05-b", tenant.StateNotSentYet, next},
	}
	var rs []tenant.ReceivedDocument
	for i, x := range states {
		r := dueReceived([]tenant.Branch{f.Branch, f.Branch2}[i%2], x.name, i+1, x.st, x.next)
		mustNot(t, "ReserveReceived "+x.name, s.ReserveReceived(ctx, &r))
		rs = append(rs, r)
		time.Sleep(2 * time.Millisecond)
	}
	check := func(what string, service, caller [3]int64, oldest tenant.ReceivedDocument) {
		t.Helper()
		st, err := s.StoreState(ctx, stateNow)
		mustNot(t, "StoreState "+what, err)
		want := countsOf(tenant.UnsettledReceived, service, caller)
		want[tenant.Unsettled{Kind: tenant.UnsettledDocument, Ambiente: tenant.AmbientePruebas, Estado: tenant.StateNotSentYet, Waiting: tenant.WaitingService}] = 1
		sameCounts(t, what, want, st.Unsettled)
		if got := st.OldestServiceWaiting[tenant.UnsettledReceived]; !got.Equal(oldest.CreatedAt) || !isUTC(got) {
			t.Errorf("%s: the messages' oldest %v, want %v (%s's creation, UTC)", what, got, oldest.CreatedAt, oldest.IDExterno)
		}
		if got := st.OldestServiceWaiting[tenant.UnsettledDocument]; !got.Equal(d.CreatedAt) {
			t.Errorf("%s: the documents' oldest %v, want %v", what, got, d.CreatedAt)
		}
	}
	check("seeded", [3]int64{1, 1, 2}, [3]int64{1, 0, 1}, rs[2])

	// Accepting the oldest message the service works on moves the oldest
	// to the next one.
	r := rs[2]
	r.NextAttemptAt = time.Time{}
	r.Place(tenant.StateAccepted)
	mustNot(t, "SaveReceived m-04", s.SaveReceived(ctx, &r))
	check("after settling", [3]int64{1, 0, 2}, [3]int64{1, 0, 1}, rs[4])

	// Credentials corrected: the refused 05 is due again, and the oldest.
	r = rs[1]
	r.NextAttemptAt = next
	mustNot(t, "SaveReceived m-05-caller", s.SaveReceived(ctx, &r))
	check("after rescheduling", [3]int64{1, 0, 3}, [3]int64{1, 0, 0}, rs[1])
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
func takeLease(t *testing.T, s StateStore, name, holder string, ttl time.Duration) bool {
	t.Helper()
	ok, err := s.TakeLease(context.Background(), name, holder, ttl)
	mustNot(t, "TakeLease "+holder, err)
	return ok
}

// leaseTTL is the lease length of the lease tests: leases run on the
// store's clock, so the tests wait for real. Long enough that a statement
// on a loaded machine stays well inside its margins.
const leaseTTL = 1200 * time.Millisecond

func testLeaseTakeover(t *testing.T, s StateStore) {
	steps := []struct {
		holder string
		sleep  time.Duration // before the step
		want   bool
	}{
		{"a", 0, true},                 // free: a holds it until 1.2s
		{"b", 0, false},                // a holds it
		{"a", leaseTTL / 2, true},      // renewal at 0.6s: until 1.8s
		{"b", leaseTTL * 3 / 4, false}, // 1.5s: past the first end, the renewal counts
		{"b", leaseTTL / 2, true},      // 2.1s: over, taken over until 3.3s
		{"a", 0, false},                // a lost it
		{"b", 0, true},
	}
	for i, st := range steps {
		time.Sleep(st.sleep)
		if got := takeLease(t, s, "state", st.holder, leaseTTL); got != st.want {
			t.Errorf("step %d: %s takes = %v, want %v", i, st.holder, got, st.want)
		}
	}
	// Another name is another lease.
	if !takeLease(t, s, "other", "a", leaseTTL) {
		t.Error("a could not take a free lease of another name")
	}
}

func testLeaseRelease(t *testing.T, s StateStore) {
	ctx := context.Background()
	if !takeLease(t, s, "state", "a", time.Minute) {
		t.Fatal("a could not take a free lease")
	}
	// Releasing what one does not hold changes nothing.
	mustNot(t, "ReleaseLease by b", s.ReleaseLease(ctx, "state", "b"))
	if takeLease(t, s, "state", "b", time.Minute) {
		t.Fatal("b took a's lease after releasing it without holding it")
	}
	mustNot(t, "ReleaseLease by a", s.ReleaseLease(ctx, "state", "a"))
	if !takeLease(t, s, "state", "b", time.Minute) {
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
				ok, err := s.TakeLease(context.Background(), name, holder, time.Minute)
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
		ttl                 time.Duration
	}{
		{"error/zero length", "state", "a", 0},
		{"error/negative length", "state", "a", -time.Second},
		{"error/under a microsecond", "state", "a", time.Nanosecond},
		{"error/empty name", "", "a", time.Second},
		{"error/empty holder", "state", "", time.Second},
	}
	for _, tt := range tests {
		ok, err := s.TakeLease(ctx, tt.lease, tt.holder, tt.ttl)
		if err == nil || ok {
			t.Errorf("%s: TakeLease = %v, %v; want an error", tt.name, ok, err)
		}
	}
	// None of them took it.
	if !takeLease(t, s, "state", "b", time.Second) {
		t.Error("a refused TakeLease left the lease taken")
	}
}

// SeedState fills s with a known set for the state gauges, as of now, and
// returns the StoreState it must read: two companies of documents in every
// state (5 unsettled: two 00, one 04, two 05, of which one 00 and one 05
// wait for their company, with no next attempt, and the others for the
// service), three messages on received documents (01; 04 for the service;
// 05 for the company), and companies whose certificates expired (1),
// expire within 7 days (2) or within 30 days (3 in all). The oldest
// unsettled document waits for its company, so it is not the oldest the
// service works on.
// Other packages' tests use it to check what they export.
func SeedState(tb testing.TB, s StateStore, now time.Time) tenant.StoreState {
	tb.Helper()
	ctx := context.Background()
	f := newDocFixture(tb, s)
	want := tenant.NewStoreState()
	states := []struct {
		st     tenant.State
		caller bool
	}{{"01", false}, {"05", true}, {"04", false}, {"02", false}, {"00", true}, {"03", false}, {"05", false}, {"00", false}, {"01", false}}
	for i, x := range states {
		d := minimalDocument([]tenant.Branch{f.Branch, f.Branch2}[i%2], fmt.Sprintf("seed-%d-%s", i, x.st), "01", "00001")
		d.Place(x.st)
		if !x.caller {
			d.NextAttemptAt = now.Add(time.Minute)
		}
		if err := s.ReserveDocument(ctx, &d); err != nil {
			tb.Fatalf("seed document %d: %v", i, err)
		}
		w := tenant.WaitingService
		if x.caller {
			w = tenant.WaitingCaller
		}
		k := tenant.Unsettled{Kind: tenant.UnsettledDocument, Ambiente: tenant.AmbientePruebas, Estado: x.st, Waiting: w}
		if _, ok := want.Unsettled[k]; ok {
			want.Unsettled[k]++
			if w == tenant.WaitingService && want.OldestServiceWaiting[k.Kind].IsZero() {
				want.OldestServiceWaiting[k.Kind] = d.CreatedAt
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	// The company's messages on received documents: one accepted, one 04
	// the service polls, one 05 whose credentials were refused.
	for i, x := range []struct {
		st   tenant.State
		next time.Time
	}{{"01", time.Time{}}, {"04", now.Add(time.Minute)}, {"05", time.Time{}}} {
		r := dueReceived(f.Branch, fmt.Sprintf("seed-received-%d-%s", i, x.st), i+1, x.st, x.next)
		if err := s.ReserveReceived(ctx, &r); err != nil {
			tb.Fatalf("seed received document %d: %v", i, err)
		}
		w := tenant.WaitingService
		if x.next.IsZero() {
			w = tenant.WaitingCaller
		}
		k := tenant.Unsettled{Kind: tenant.UnsettledReceived, Ambiente: tenant.AmbientePruebas, Estado: x.st, Waiting: w}
		if _, ok := want.Unsettled[k]; ok {
			want.Unsettled[k]++
			if w == tenant.WaitingService && want.OldestServiceWaiting[k.Kind].IsZero() {
				want.OldestServiceWaiting[k.Kind] = r.CreatedAt
			}
		}
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
