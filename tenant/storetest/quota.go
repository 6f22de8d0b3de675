package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/tenant"
)

// QuotaStore is what the quota and usage suite needs: the documents and
// the receiver's messages that are counted, and the tenant.UsageStore
// under test. Both adapters are all of them.
type QuotaStore interface {
	ReceivedStore
	tenant.UsageStore
}

// RunQuotas checks the monthly quota ReserveDocument enforces and the
// counts tenant.UsageStore reads (A.14) as subtests. open must return a
// fresh, empty, migrated store for each call whose clock is now.
func RunQuotas(t *testing.T, open func(t *testing.T, now func() time.Time) QuotaStore) {
	for _, tt := range []struct {
		name string
		fn   func(t *testing.T, s QuotaStore, c *Clock)
	}{
		{"ok/without a quota nothing is counted", testQuotaNone},
		{"error/beyond the quota: refused, no number taken", testQuotaReached},
		{"error/a caller's clave beyond the quota takes no number", testQuotaCallerClave},
		{"ok/a repeat of an id externo never counts", testQuotaRepeat},
		{"ok/a changed quota applies at once", testQuotaChanged},
		{"ok/a quota set later counts the month's documents", testQuotaSetLater},
		{"ok/months are Costa Rica calendar months", testQuotaMonths},
		{"ok/receiver's messages never count", testQuotaMessages},
		{"ok/a quota set and cleared while reserving refuses nothing below it", testQuotaToggled},
		{"ok/concurrent reservations number exactly the quota", func(t *testing.T, s QuotaStore, c *Clock) {
			raceQuota(t, []QuotaStore{s}, c.Now)
		}},
		{"ok/usage counts by type and estado per company", testUsageCounts},
		{"ok/usage selects by company, owner or all", testUsageSelection},
		{"error/usage of a missing company", testUsageMissing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClock(time.Date(2026, 3, 15, 18, 0, 0, 0, time.UTC))
			tt.fn(t, open(t, c.Now), c)
		})
	}
}

// RunQuotaReplicas checks that two stores on one database, as two
// replicas hold them, racing at a company's quota number exactly the
// quota between them. open returns both, fresh and migrated.
func RunQuotaReplicas(t *testing.T, open func(t *testing.T) (QuotaStore, QuotaStore)) {
	t.Run("ok/replicas racing at the quota number exactly the quota", func(t *testing.T) {
		a, b := open(t)
		raceQuota(t, []QuotaStore{a, b}, time.Now)
	})
}

// setQuota stores the company's quota (nil: none) and returns the company
// as stored.
func setQuota(t *testing.T, s QuotaStore, c tenant.Company, quota *int64) tenant.Company {
	t.Helper()
	c.CuotaMensual = quota
	mustNot(t, "UpdateCompany", s.UpdateCompany(context.Background(), &c, false))
	return c
}

func quotaOf(n int64) *int64 { return &n }

// wantQuota fails the test unless the reservation counted d as want says.
func wantQuota(t *testing.T, what string, d tenant.Document, want *tenant.QuotaUse) {
	t.Helper()
	switch {
	case want == nil && d.Quota != nil:
		t.Errorf("%s: counted %+v against a quota, want no count", what, *d.Quota)
	case want != nil && d.Quota == nil:
		t.Errorf("%s: not counted, want %+v", what, *want)
	case want != nil && *d.Quota != *want:
		t.Errorf("%s: counted %+v, want %+v", what, *d.Quota, *want)
	}
}

// wantRefused fails the test unless err is a *tenant.QuotaError with
// limit and used.
func wantRefused(t *testing.T, what string, err error, periodo string, limit, used int64) {
	t.Helper()
	var qe *tenant.QuotaError
	if !errors.As(err, &qe) || !errors.Is(err, tenant.ErrQuota) {
		t.Fatalf("%s: got error %v, want a *tenant.QuotaError", what, err)
	}
	want := tenant.QuotaUse{Periodo: periodo, Limit: limit, Used: used}
	if qe.QuotaUse != want {
		t.Errorf("%s: refused with %+v, want %+v", what, qe.QuotaUse, want)
	}
	if qe.Available() != 0 {
		t.Errorf("%s: %d available in a refusal", what, qe.Available())
	}
}

// wantUse fails the test unless the store reads the company's quota use
// now as want.
func wantUse(t *testing.T, s QuotaStore, c *Clock, companyID int64, want *tenant.QuotaUse) {
	t.Helper()
	got, err := s.QuotaUse(context.Background(), companyID, c.Now())
	mustNot(t, "QuotaUse", err)
	switch {
	case want == nil && got != nil:
		t.Errorf("QuotaUse: %+v, want none", *got)
	case want != nil && (got == nil || *got != *want):
		t.Errorf("QuotaUse: %+v, want %+v", got, *want)
	}
}

func testQuotaNone(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	for i := range 3 {
		d := minimalDocument(f.Branch, fmt.Sprintf("libre-%d", i), "01", "00001")
		mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
		wantQuota(t, "a company without a quota", d, nil)
	}
	wantUse(t, s, c, f.Company.ID, nil)
}

func testQuotaReached(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	f.Company = setQuota(t, s, f.Company, quotaOf(3))
	// Any type, any branch, either environment counts.
	docs := []tenant.Document{
		minimalDocument(f.Branch, "a", "01", "00001"),
		minimalDocument(f.Branch2, "b", "04", "00001"),
		minimalDocument(f.Branch, "c", "01", "00002"), // a is the only one of its sequence
	}
	docs[1].Ambiente = tenant.AmbienteProduccion
	for i := range docs {
		mustNot(t, "ReserveDocument "+docs[i].IDExterno, s.ReserveDocument(ctx, &docs[i]))
		wantQuota(t, docs[i].IDExterno, docs[i], &tenant.QuotaUse{Periodo: "2026-03", Limit: 3, Used: int64(i + 1)})
		if docs[i].Quota.Available() != int64(2-i) {
			t.Errorf("%s: %d available, want %d", docs[i].IDExterno, docs[i].Quota.Available(), 2-i)
		}
	}
	wantUse(t, s, c, f.Company.ID, &tenant.QuotaUse{Periodo: "2026-03", Limit: 3, Used: 3})

	over := minimalDocument(f.Branch, "d", "01", "00001")
	err := s.ReserveDocument(ctx, &over)
	wantRefused(t, "the fourth document", err, "2026-03", 3, 3)
	if over.ID != 0 || over.Numero != 0 || over.Quota != nil {
		t.Errorf("a refused reservation set id %d, number %d, quota %v", over.ID, over.Numero, over.Quota)
	}
	_, err = s.DocumentByExternalID(ctx, f.Branch.ID, "d")
	wantErr(t, "the refused document", err, tenant.ErrNotFound)
	// Refused again, another type: still nothing counted.
	other := minimalDocument(f.Branch2, "e", "09", "00001")
	wantRefused(t, "another type", s.ReserveDocument(ctx, &other), "2026-03", 3, 3)
	wantUse(t, s, c, f.Company.ID, &tenant.QuotaUse{Periodo: "2026-03", Limit: 3, Used: 3})

	// The sequence did not move: with room again, the next number is the
	// one after the last document's of its sequence ("a").
	f.Company = setQuota(t, s, f.Company, quotaOf(4))
	mustNot(t, "ReserveDocument after raising the quota", s.ReserveDocument(ctx, &over))
	if over.Numero != 2 {
		t.Errorf("first number after the refusals %d, want 2 (refusals take no number)", over.Numero)
	}
	wantQuota(t, "after raising the quota", over, &tenant.QuotaUse{Periodo: "2026-03", Limit: 4, Used: 4})
	// Other companies are not limited by this one's quota.
	g := newDocFixture(t, s)
	free := minimalDocument(g.Branch, "a", "01", "00001")
	mustNot(t, "ReserveDocument for another company", s.ReserveDocument(ctx, &free))
}

func testQuotaCallerClave(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	f.Company = setQuota(t, s, f.Company, quotaOf(1))
	own := fullDocument(f.Branch, "propia", 1)
	mustNot(t, "ReserveDocument with a caller's clave", s.ReserveDocument(ctx, &own))
	wantQuota(t, "a caller's clave", own, &tenant.QuotaUse{Periodo: "2026-03", Limit: 1, Used: 1})

	second := fullDocument(f.Branch, "propia-2", 2)
	second.Numero, second.Consecutivo = 50, "00100007010000000050"
	second.Clave = second.Clave[:31] + "0000000050" + second.Clave[41:]
	wantRefused(t, "a second caller's clave", s.ReserveDocument(ctx, &second), "2026-03", 1, 1)
	// The refused number did not raise the sequence.
	f.Company = setQuota(t, s, f.Company, nil)
	d := minimalDocument(f.Branch, "siguiente", own.Tipo, own.Terminal)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	if d.Numero != own.Numero+1 {
		t.Errorf("next number %d, want %d: the refused clave's number moved the sequence", d.Numero, own.Numero+1)
	}
}

func testQuotaRepeat(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	f.Company = setQuota(t, s, f.Company, quotaOf(2))
	first := minimalDocument(f.Branch, "pedido-1", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &first))

	// Below the quota, a repeat is a conflict and counts nothing.
	again := minimalDocument(f.Branch, "pedido-1", "01", "00001")
	wantErr(t, "a repeat below the quota", s.ReserveDocument(ctx, &again), tenant.ErrConflict)
	wantUse(t, s, c, f.Company.ID, &tenant.QuotaUse{Periodo: "2026-03", Limit: 2, Used: 1})

	second := minimalDocument(f.Branch, "pedido-2", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &second))
	// At the quota, a repeat is still a conflict, not a refusal: the
	// caller replays the stored document.
	for _, id := range []string{"pedido-1", "pedido-2"} {
		again := minimalDocument(f.Branch, id, "04", "00002")
		err := s.ReserveDocument(ctx, &again)
		wantErr(t, "a repeat at the quota", err, tenant.ErrConflict)
		if errors.Is(err, tenant.ErrQuota) {
			t.Errorf("a repeat at the quota was refused by the quota: %v", err)
		}
	}
	// The same id_externo in another branch is another document.
	other := minimalDocument(f.Branch2, "pedido-1", "01", "00001")
	wantRefused(t, "the id in another branch", s.ReserveDocument(ctx, &other), "2026-03", 2, 2)
	wantUse(t, s, c, f.Company.ID, &tenant.QuotaUse{Periodo: "2026-03", Limit: 2, Used: 2})
}

func testQuotaChanged(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	n := 0
	reserve := func() (tenant.Document, error) {
		n++
		d := minimalDocument(f.Branch, fmt.Sprintf("doc-%d", n), "01", "00001")
		return d, s.ReserveDocument(ctx, &d)
	}
	f.Company = setQuota(t, s, f.Company, quotaOf(5))
	for range 4 {
		_, err := reserve()
		mustNot(t, "ReserveDocument", err)
	}
	// Lowered below what was numbered: the next is refused at once.
	f.Company = setQuota(t, s, f.Company, quotaOf(2))
	_, err := reserve()
	wantRefused(t, "below the numbered", err, "2026-03", 2, 4)
	f.Company = setQuota(t, s, f.Company, quotaOf(0))
	_, err = reserve()
	wantRefused(t, "a quota of 0", err, "2026-03", 0, 4)
	// Raised: the next is numbered and counted from what was numbered.
	f.Company = setQuota(t, s, f.Company, quotaOf(6))
	d, err := reserve()
	mustNot(t, "ReserveDocument after raising", err)
	wantQuota(t, "after raising", d, &tenant.QuotaUse{Periodo: "2026-03", Limit: 6, Used: 5})
	// Cleared: no limit, nothing counted.
	f.Company = setQuota(t, s, f.Company, nil)
	for range 3 {
		d, err := reserve()
		mustNot(t, "ReserveDocument without a quota", err)
		wantQuota(t, "without a quota", d, nil)
	}
	wantUse(t, s, c, f.Company.ID, nil)
	// Set again: the documents numbered while there was none count.
	f.Company = setQuota(t, s, f.Company, quotaOf(9))
	wantUse(t, s, c, f.Company.ID, &tenant.QuotaUse{Periodo: "2026-03", Limit: 9, Used: 8})
	d, err = reserve()
	mustNot(t, "ReserveDocument", err)
	wantQuota(t, "set again", d, &tenant.QuotaUse{Periodo: "2026-03", Limit: 9, Used: 9})
	_, err = reserve()
	wantRefused(t, "set again, at the quota", err, "2026-03", 9, 9)
}

func testQuotaSetLater(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	// Numbered last month and this month before the quota was set.
	c.Advance(-30 * 24 * time.Hour)
	last := minimalDocument(f.Branch, "febrero", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &last))
	c.Advance(30 * 24 * time.Hour)
	for i := range 3 {
		d := minimalDocument(f.Branch2, fmt.Sprintf("marzo-%d", i), "04", "00001")
		mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	}
	f.Company = setQuota(t, s, f.Company, quotaOf(4))
	d := minimalDocument(f.Branch, "marzo-3", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	wantQuota(t, "the first counted", d, &tenant.QuotaUse{Periodo: "2026-03", Limit: 4, Used: 4})
	d = minimalDocument(f.Branch, "marzo-4", "01", "00001")
	wantRefused(t, "beyond", s.ReserveDocument(ctx, &d), "2026-03", 4, 4)

	// A quota set where the month has more than it allows: refused from
	// the first reservation.
	g := newDocFixture(t, s)
	for i := range 3 {
		d := minimalDocument(g.Branch, fmt.Sprintf("g-%d", i), "01", "00001")
		mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	}
	g.Company = setQuota(t, s, g.Company, quotaOf(2))
	for i := range 2 {
		d := minimalDocument(g.Branch, fmt.Sprintf("g-over-%d", i), "01", "00001")
		wantRefused(t, "over from the start", s.ReserveDocument(ctx, &d), "2026-03", 2, 3)
	}
}

func testQuotaMonths(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	f.Company = setQuota(t, s, f.Company, quotaOf(2))
	// 23:59 on the 31st of January in Costa Rica is already February in
	// UTC: still January's.
	c.Advance(time.Date(2026, 2, 1, 5, 59, 0, 0, time.UTC).Sub(c.Now()))
	for i := range 2 {
		d := minimalDocument(f.Branch, fmt.Sprintf("enero-%d", i), "01", "00001")
		mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
		wantQuota(t, "January", d, &tenant.QuotaUse{Periodo: "2026-01", Limit: 2, Used: int64(i + 1)})
	}
	d := minimalDocument(f.Branch, "enero-2", "01", "00001")
	wantRefused(t, "January's third", s.ReserveDocument(ctx, &d), "2026-01", 2, 2)
	// Midnight in Costa Rica: a new month.
	c.Advance(time.Minute)
	mustNot(t, "ReserveDocument at midnight", s.ReserveDocument(ctx, &d))
	wantQuota(t, "February's first", d, &tenant.QuotaUse{Periodo: "2026-02", Limit: 2, Used: 1})
	wantUse(t, s, c, f.Company.ID, &tenant.QuotaUse{Periodo: "2026-02", Limit: 2, Used: 1})

	for _, m := range []struct {
		periodo string
		want    int64
	}{{"2025-12", 0}, {"2026-01", 2}, {"2026-02", 1}, {"2026-03", 0}} {
		month, err := tenant.ParsePeriodo(m.periodo)
		mustNot(t, "ParsePeriodo", err)
		u := usageOf(t, s, tenant.UsageQuery{CompanyID: f.Company.ID, Month: month})
		if u[f.Company.ID].Documentos.Total != m.want {
			t.Errorf("usage of %s: %d documents, want %d", m.periodo, u[f.Company.ID].Documentos.Total, m.want)
		}
	}
}

func testQuotaMessages(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	f.Company = setQuota(t, s, f.Company, quotaOf(1))
	d := minimalDocument(f.Branch, "unico", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	// At the quota, the company still answers its suppliers.
	for i, tipo := range []string{"05", "06", "07"} {
		clave := fmt.Sprintf("506221126003101123456001000010100000%05d1%08d", i+1, i+1)
		r := receivedDocument(f.Branch, fmt.Sprintf("msg-%d", i), clave, tipo)
		mustNot(t, "ReserveReceived at the quota", s.ReserveReceived(ctx, &r))
	}
	wantUse(t, s, c, f.Company.ID, &tenant.QuotaUse{Periodo: "2026-03", Limit: 1, Used: 1})
	u := usageOf(t, s, tenant.UsageQuery{CompanyID: f.Company.ID, Month: tenant.MonthOf(c.Now())})
	if got := u[f.Company.ID]; got.Documentos.Total != 1 || got.Mensajes.Total != 3 {
		t.Errorf("usage: %d documents and %d messages, want 1 and 3", got.Documentos.Total, got.Mensajes.Total)
	}
}

// testQuotaToggled sets and clears a company's quota, far above what it
// numbers, again and again while reservations run: each quota set where
// there was none makes the month's count again under reservations waiting
// on it, none of which may be refused or fail for it; once nothing is in
// flight, a quota set anew counts every document.
func testQuotaToggled(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	const workers, each, limit = 4, 40, 1000
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		company := f.Company
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			company.CuotaMensual = nil
			if i%2 == 0 {
				company.CuotaMensual = quotaOf(limit)
			}
			if err := s.UpdateCompany(ctx, &company, false); err != nil {
				t.Errorf("UpdateCompany: %v", err)
				return
			}
		}
	})
	var reserving sync.WaitGroup
	for w := range workers {
		reserving.Go(func() {
			for i := range each {
				b := f.Branch
				if w%2 == 1 {
					b = f.Branch2
				}
				d := minimalDocument(b, fmt.Sprintf("toggle-%d-%d", w, i), "01", "00001")
				if err := s.ReserveDocument(ctx, &d); err != nil {
					t.Errorf("ReserveDocument %s: %v", d.IDExterno, err)
				}
			}
		})
	}
	reserving.Wait()
	close(done)
	wg.Wait()
	// Counted afresh now that nothing is in flight: every document.
	f.Company = setQuota(t, s, f.Company, nil)
	f.Company = setQuota(t, s, f.Company, quotaOf(limit))
	wantUse(t, s, c, f.Company.ID, &tenant.QuotaUse{Periodo: "2026-03", Limit: limit, Used: workers * each})
	d := minimalDocument(f.Branch, "after", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	wantQuota(t, "after the changes", d, &tenant.QuotaUse{Periodo: "2026-03", Limit: limit, Used: workers*each + 1})
}

// raceQuota has workers on every store reserve documents of one company,
// two branches and two types, far beyond its quota, all at once: exactly
// the quota are numbered, every other reservation is refused by the quota,
// and each sequence holds 1..n without a gap. now is the stores' clock.
func raceQuota(t *testing.T, stores []QuotaStore, now func() time.Time) {
	ctx := context.Background()
	f := newDocFixture(t, stores[0])
	const quota, workers, each = 25, 6, 10
	f.Company = setQuota(t, stores[0], f.Company, quotaOf(quota))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		numbered []tenant.Document
		refused  int
	)
	for si, s := range stores {
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					b, tipo := f.Branch, "01"
					if (w+i)%2 == 1 {
						b = f.Branch2
					}
					if i%3 == 0 {
						tipo = "04"
					}
					d := minimalDocument(b, fmt.Sprintf("race-%d-%d-%d", si, w, i), tipo, "00001")
					err := s.ReserveDocument(ctx, &d)
					mu.Lock()
					switch {
					case err == nil:
						numbered = append(numbered, d)
					case errors.Is(err, tenant.ErrQuota):
						refused++
					default:
						t.Errorf("ReserveDocument %s: %v", d.IDExterno, err)
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	total := len(stores) * workers * each
	if len(numbered) != quota || refused != total-quota {
		t.Fatalf("%d numbered and %d refused of %d, want %d and %d", len(numbered), refused, total, quota, total-quota)
	}
	counts := map[int64]int64{}
	seqs := map[string][]tenant.Document{}
	for _, d := range numbered {
		counts[d.Quota.Used]++
		k := fmt.Sprintf("%d/%s", d.BranchID, d.Tipo)
		seqs[k] = append(seqs[k], d)
	}
	for used := int64(1); used <= quota; used++ {
		if counts[used] != 1 {
			t.Errorf("%d reservations were told %d of the quota used, want 1", counts[used], used)
		}
	}
	for k, docs := range seqs {
		t.Run(k, func(t *testing.T) { checkConsecutive(t, docs, len(docs)) })
	}
	for _, s := range stores {
		got, err := s.QuotaUse(ctx, f.Company.ID, now())
		mustNot(t, "QuotaUse", err)
		if got == nil || got.Used != quota {
			t.Errorf("QuotaUse after the race: %+v, want %d used", got, quota)
		}
	}
}

// usageOf reads the usage q selects through the store, per company.
func usageOf(t *testing.T, s QuotaStore, q tenant.UsageQuery) map[int64]tenant.Usage {
	t.Helper()
	ctx := context.Background()
	ids, err := s.UsageCompanies(ctx, q)
	mustNot(t, "UsageCompanies", err)
	rows, err := s.UsageRows(ctx, q)
	mustNot(t, "UsageRows", err)
	out := map[int64]tenant.Usage{}
	for _, id := range ids {
		out[id] = tenant.Usage{CompanyID: id}
	}
	for _, r := range rows {
		u, ok := out[r.CompanyID]
		if !ok {
			t.Errorf("a usage row of company %d, which the query did not select", r.CompanyID)
			continue
		}
		cs := &u.Documentos
		if r.Message {
			cs = &u.Mensajes
			if r.Tipo != "" {
				t.Errorf("a message's row with type %q", r.Tipo)
			}
		}
		cs.Total += r.N
		if r.Tipo != "" {
			if cs.PorTipo == nil {
				cs.PorTipo = map[string]int64{}
			}
			cs.PorTipo[r.Tipo] += r.N
		}
		if cs.PorEstado == nil {
			cs.PorEstado = map[string]int64{}
		}
		cs.PorEstado[r.Estado] += r.N
		out[r.CompanyID] = u
	}
	return out
}

func testUsageCounts(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	other := newDocFixture(t, s)
	reserve := func(b tenant.Branch, id, tipo string, phase tenant.Phase, estado tenant.State) {
		t.Helper()
		d := minimalDocument(b, id, tipo, "00001")
		d.Phase, d.Estado = phase, estado
		mustNot(t, "ReserveDocument "+id, s.ReserveDocument(ctx, &d))
	}
	// Last month's and next month's do not count.
	c.Advance(-20 * 24 * time.Hour)
	reserve(f.Branch, "antes", "01", tenant.PhaseAccepted, tenant.StateAccepted)
	c.Advance(20 * 24 * time.Hour)
	reserve(f.Branch, "a", "01", tenant.PhaseAccepted, tenant.StateAccepted)
	reserve(f.Branch, "b", "01", tenant.PhaseAccepted, tenant.StateAccepted)
	reserve(f.Branch2, "c", "01", tenant.PhaseSubmitted, tenant.StateSent)
	reserve(f.Branch2, "d", "04", tenant.PhaseAccepted, tenant.StateAccepted)
	reserve(f.Branch, "e", "03", tenant.PhaseRejected, tenant.StateRejected)
	reserve(f.Branch, "f", "09", tenant.PhaseNumbered, tenant.StatePending)
	reserve(other.Branch, "x", "01", tenant.PhaseAccepted, tenant.StateAccepted)
	for i, tipo := range []string{"05", "05", "07"} {
		clave := fmt.Sprintf("506221126003101123456001000010100000%05d1%08d", i+1, i+1)
		r := receivedDocument(f.Branch, fmt.Sprintf("msg-%d", i), clave, tipo)
		mustNot(t, "ReserveReceived", s.ReserveReceived(ctx, &r))
	}
	c.Advance(20 * 24 * time.Hour)
	reserve(f.Branch, "despues", "01", tenant.PhaseAccepted, tenant.StateAccepted)

	u := usageOf(t, s, tenant.UsageQuery{CompanyID: f.Company.ID, Month: tenant.MonthOf(time.Date(2026, 3, 15, 0, 0, 0, 0, hacienda.CostaRica))})
	got := u[f.Company.ID]
	if got.Documentos.Total != 6 {
		t.Errorf("documents: %d, want 6", got.Documentos.Total)
	}
	if want := map[string]int64{"01": 3, "04": 1, "03": 1, "09": 1}; !maps.Equal(got.Documentos.PorTipo, want) {
		t.Errorf("documents by type: %v, want %v", got.Documentos.PorTipo, want)
	}
	if want := map[string]int64{"01": 3, "04": 1, "02": 1, "00": 1}; !maps.Equal(got.Documentos.PorEstado, want) {
		t.Errorf("documents by estado: %v, want %v", got.Documentos.PorEstado, want)
	}
	if want := map[string]int64{"00": 3}; got.Mensajes.Total != 3 || !maps.Equal(got.Mensajes.PorEstado, want) {
		t.Errorf("messages: %d, by estado %v, want 3, %v", got.Mensajes.Total, got.Mensajes.PorEstado, want)
	}
	if len(got.Mensajes.PorTipo) != 0 {
		t.Errorf("messages by type: %v, want none", got.Mensajes.PorTipo)
	}
	if len(u) != 1 {
		t.Errorf("usage of one company answered %d", len(u))
	}
}

func testUsageSelection(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	mk := func(name string, owner int64, docs int) created {
		t.Helper()
		co := createCompany(t, s, name, owner)
		for i := range docs {
			d := minimalDocument(co.Branch, fmt.Sprintf("%s-%d", name, i), "01", "00001")
			mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
		}
		return co
	}
	a := mk("A", 7, 2)
	b := mk("B", 8, 1)
	idle := mk("C", 7, 0)
	d := mk("D", 0, 3)
	m := tenant.MonthOf(c.Now())
	ids := func(q tenant.UsageQuery) []int64 {
		t.Helper()
		got, err := s.UsageCompanies(ctx, q)
		mustNot(t, "UsageCompanies", err)
		return got
	}
	seven, none := int64(7), int64(99)
	for _, tt := range []struct {
		name string
		q    tenant.UsageQuery
		want map[int64]int64 // company → documents
	}{
		{"all", tenant.UsageQuery{Month: m}, map[int64]int64{a.Company.ID: 2, b.Company.ID: 1, idle.Company.ID: 0, d.Company.ID: 3}},
		{"owner", tenant.UsageQuery{OwnerID: &seven, Month: m}, map[int64]int64{a.Company.ID: 2, idle.Company.ID: 0}},
		{"owner of none", tenant.UsageQuery{OwnerID: &none, Month: m}, map[int64]int64{}},
		{"company", tenant.UsageQuery{CompanyID: b.Company.ID, Month: m}, map[int64]int64{b.Company.ID: 1}},
		{"idle company", tenant.UsageQuery{CompanyID: idle.Company.ID, Month: m}, map[int64]int64{idle.Company.ID: 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(tt.q)
			for i := 1; i < len(got); i++ {
				if got[i-1] >= got[i] {
					t.Errorf("companies %v not in order", got)
				}
			}
			u := usageOf(t, s, tt.q)
			counts := map[int64]int64{}
			for id, x := range u {
				counts[id] = x.Documentos.Total
			}
			if !maps.Equal(counts, tt.want) {
				t.Errorf("documents per company %v, want %v", counts, tt.want)
			}
		})
	}
}

func testUsageMissing(t *testing.T, s QuotaStore, c *Clock) {
	ctx := context.Background()
	_, err := s.QuotaUse(ctx, 424242, c.Now())
	wantErr(t, "QuotaUse of a missing company", err, tenant.ErrNotFound)
	ids, err := s.UsageCompanies(ctx, tenant.UsageQuery{CompanyID: 424242, Month: tenant.MonthOf(c.Now())})
	mustNot(t, "UsageCompanies", err)
	if len(ids) != 0 {
		t.Errorf("a missing company selected: %v", ids)
	}
}
