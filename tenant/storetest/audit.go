package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"facturad/tenant"
)

// RunAudit checks every behaviour of tenant.AuditStore as subtests. open
// must return a fresh, empty, migrated store for each call.
func RunAudit(t *testing.T, open func(t *testing.T) tenant.AuditStore) {
	contract[tenant.AuditStore]{
		{"ok/an entry reads back as recorded", testAuditRoundTrip},
		{"ok/newest first, then the later id", testAuditOrder},
		{"ok/pages walk every entry once, whatever is recorded meanwhile", testAuditPages},
		{"ok/companies apart; company 0 is the platform's", testAuditCompanies},
		{"ok/concurrent records get distinct growing ids", testAuditConcurrent},
		{"error/entries the log refuses", testAuditRefused},
		{"error/queries a store must not run", testAuditBadQueries},
	}.run(t, open)
}

var auditBase = time.Date(2026, 11, 21, 20, 3, 0, 123456000, time.UTC)

// auditEntry is an entry of company at base + minutes.
func auditEntry(company int64, minutes int, action string, fields ...string) tenant.AuditEntry {
	if fields == nil {
		fields = []string{}
	}
	return tenant.AuditEntry{
		At: auditBase.Add(time.Duration(minutes) * time.Minute), UserID: 41, Username: "contador.uno",
		RequestID: fmt.Sprintf("req-%d-%d", company, minutes), CompanyID: company, Action: action, Fields: fields,
	}
}

func recordAudit(t *testing.T, s tenant.AuditStore, e tenant.AuditEntry) tenant.AuditEntry {
	t.Helper()
	mustNot(t, "RecordAudit", s.RecordAudit(context.Background(), &e))
	if e.ID <= 0 {
		t.Fatalf("RecordAudit set id %d", e.ID)
	}
	return e
}

// auditPage reads a page of company's log after key (nil: the first).
func auditPage(t *testing.T, s tenant.AuditStore, company int64, after *tenant.ListKey, limit int) []tenant.AuditEntry {
	t.Helper()
	out, err := s.AuditLog(context.Background(), tenant.AuditQuery{CompanyID: company, After: after, Limit: limit})
	mustNot(t, "AuditLog", err)
	if out == nil {
		t.Fatal("AuditLog returned nil, not an empty page")
	}
	return out
}

func sameEntry(t *testing.T, got, want tenant.AuditEntry) {
	t.Helper()
	if !got.At.Equal(want.At) || !isUTC(got.At) || got.ID != want.ID || got.UserID != want.UserID || got.Username != want.Username ||
		got.RequestID != want.RequestID || got.CompanyID != want.CompanyID || got.Action != want.Action || !slices.Equal(got.Fields, want.Fields) {
		t.Errorf("read back\n %+v\nrecorded\n %+v", got, want)
	}
}

func testAuditRoundTrip(t *testing.T, s tenant.AuditStore) {
	entries := []tenant.AuditEntry{
		auditEntry(7, 0, tenant.AuditCompanyUpdate, "Certificado", "Clave", "ContrasenaHacienda", "RazonSocial"),
		auditEntry(7, 1, tenant.AuditTokenRotate), // no fields: an empty list, not null
		auditEntry(7, 2, tenant.AuditBranchCreate, "razonComercial", "sucursal", "Ñandú \"comillas\" ☃", `a\b`),
	}
	// The CLI's actor: no user id, the command's name.
	entries[2].UserID, entries[2].Username = 0, "facturad requeue"
	for i := range entries {
		entries[i] = recordAudit(t, s, entries[i])
		if i > 0 && entries[i].ID <= entries[i-1].ID {
			t.Errorf("id %d after %d: ids must grow", entries[i].ID, entries[i-1].ID)
		}
	}
	got := auditPage(t, s, 7, nil, 10)
	if len(got) != len(entries) {
		t.Fatalf("read %d entries, recorded %d", len(got), len(entries))
	}
	for i, e := range got {
		sameEntry(t, e, entries[len(entries)-1-i])
	}
}

func testAuditOrder(t *testing.T, s tenant.AuditStore) {
	// Recorded out of time order, three at one instant: newest time first,
	// then the later id among the entries of one instant.
	var want []tenant.AuditEntry
	for _, m := range []int{5, 1, 5, 9, 5, 0} {
		want = append(want, recordAudit(t, s, auditEntry(3, m, tenant.AuditUserCreate, "usuario")))
	}
	slices.SortFunc(want, func(a, b tenant.AuditEntry) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return int(b.ID - a.ID)
	})
	got := auditPage(t, s, 3, nil, tenant.MaxListLimit+1)
	if len(got) != len(want) {
		t.Fatalf("read %d entries, recorded %d", len(got), len(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID {
			t.Errorf("entry %d is id %d, want %d", i, got[i].ID, want[i].ID)
		}
	}
}

func testAuditPages(t *testing.T, s tenant.AuditStore) {
	var want []tenant.AuditEntry
	for i := range 23 {
		// Pairs share an instant, so that pages end inside a tie.
		want = append(want, recordAudit(t, s, auditEntry(5, i/2, tenant.AuditWebhookCreate, "url", "eventos")))
	}
	slices.Reverse(want) // ids grow with the time here
	for _, size := range []int{1, 2, 5, 23, 24} {
		t.Run(fmt.Sprintf("size %d", size), func(t *testing.T) {
			var got []int64
			var after *tenant.ListKey
			for pages := 0; ; pages++ {
				if pages > 30 {
					t.Fatal("the walk does not end")
				}
				page := auditPage(t, s, 5, after, size)
				if len(page) > size {
					t.Fatalf("a page of %d entries for a limit of %d", len(page), size)
				}
				for _, e := range page {
					got = append(got, e.ID)
				}
				if len(page) < size {
					break
				}
				k := page[len(page)-1].ListKey()
				after = &k
				if pages == 1 {
					// Entries recorded during the walk are newer than
					// every place it has reached: it never meets them.
					recordAudit(t, s, auditEntry(5, 100+pages, tenant.AuditWebhookDelete))
				}
			}
			if len(got) != len(want) {
				t.Fatalf("the walk met %d entries, want %d", len(got), len(want))
			}
			for i, e := range want {
				if got[i] != e.ID {
					t.Fatalf("the walk met %v, want the ids of the %d entries newest first", got, len(want))
				}
			}
		})
		// Forget the entries the walk recorded for the next size: they
		// are the newest, and the walks start after them.
		want = auditPage(t, s, 5, nil, tenant.MaxListLimit+1)
	}
	// A cursor past the oldest entry is an empty page, not an error.
	oldest := want[len(want)-1].ListKey()
	if page := auditPage(t, s, 5, &oldest, 10); len(page) != 0 {
		t.Errorf("after the oldest entry: %d entries", len(page))
	}
}

func testAuditCompanies(t *testing.T, s tenant.AuditStore) {
	a := recordAudit(t, s, auditEntry(11, 0, tenant.AuditCompanyCreate, "RazonSocial"))
	b := recordAudit(t, s, auditEntry(12, 0, tenant.AuditCompanyCreate, "RazonSocial"))
	p := recordAudit(t, s, auditEntry(0, 0, tenant.AuditAdminReset, "contrasena", "apiToken"))
	for _, tt := range []struct {
		company int64
		want    tenant.AuditEntry
	}{{11, a}, {12, b}, {0, p}} {
		got := auditPage(t, s, tt.company, nil, 10)
		if len(got) != 1 {
			t.Fatalf("company %d: %d entries, want 1", tt.company, len(got))
		}
		sameEntry(t, got[0], tt.want)
	}
	if got := auditPage(t, s, 13, nil, 10); len(got) != 0 {
		t.Errorf("a company without entries: %d entries", len(got))
	}
}

func testAuditConcurrent(t *testing.T, s tenant.AuditStore) {
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				e := auditEntry(9, w*each+i, tenant.AuditUserUpdate, "activo")
				if err := s.RecordAudit(context.Background(), &e); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent RecordAudit: %v", err)
	}
	got := auditPage(t, s, 9, nil, tenant.MaxListLimit+1)
	seen := map[int64]bool{}
	for _, e := range got {
		seen[e.ID] = true
	}
	if len(got) != writers*each || len(seen) != writers*each {
		t.Errorf("%d entries with %d distinct ids, want %d", len(got), len(seen), writers*each)
	}
}

func testAuditRefused(t *testing.T, s tenant.AuditStore) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		edit func(*tenant.AuditEntry)
	}{
		{"no time", func(e *tenant.AuditEntry) { e.At = time.Time{} }},
		{"no action", func(e *tenant.AuditEntry) { e.Action = "" }},
		{"negative company", func(e *tenant.AuditEntry) { e.CompanyID = -1 }},
		{"negative user", func(e *tenant.AuditEntry) { e.UserID = -1 }},
	} {
		e := auditEntry(4, 0, tenant.AuditBranchUpdate, "sucursal")
		tt.edit(&e)
		if err := s.RecordAudit(ctx, &e); err == nil {
			t.Errorf("%s: recorded as id %d", tt.name, e.ID)
		}
	}
	if got := auditPage(t, s, 4, nil, 10); len(got) != 0 {
		t.Errorf("refused entries were kept: %+v", got)
	}
}

func testAuditBadQueries(t *testing.T, s tenant.AuditStore) {
	ctx := context.Background()
	for _, q := range []tenant.AuditQuery{
		{CompanyID: 1, Limit: 0},
		{CompanyID: 1, Limit: tenant.MaxListLimit + 2},
		{CompanyID: -1, Limit: 10},
		{CompanyID: 1, Limit: 10, After: &tenant.ListKey{At: auditBase}},
	} {
		if _, err := s.AuditLog(ctx, q); err == nil {
			t.Errorf("AuditLog ran %+v", q)
		}
	}
}
