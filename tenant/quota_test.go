package tenant_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/tenant"
)

func TestParsePeriodo(t *testing.T) {
	for _, tt := range []struct {
		in         string
		start, end time.Time
	}{
		{"2026-01", time.Date(2026, 1, 1, 6, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 6, 0, 0, 0, time.UTC)},
		{"2026-12", time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 6, 0, 0, 0, time.UTC)},
		{"2000-02", time.Date(2000, 2, 1, 6, 0, 0, 0, time.UTC), time.Date(2000, 3, 1, 6, 0, 0, 0, time.UTC)},
		{"2099-12", time.Date(2099, 12, 1, 6, 0, 0, 0, time.UTC), time.Date(2100, 1, 1, 6, 0, 0, 0, time.UTC)},
	} {
		m, err := tenant.ParsePeriodo(tt.in)
		if err != nil || m.Periodo != tt.in || !m.Start.Equal(tt.start) || !m.End.Equal(tt.end) {
			t.Errorf("ParsePeriodo(%q) = %+v, %v; want [%v, %v)", tt.in, m, err, tt.start, tt.end)
		}
	}
	for _, in := range []string{"", "2026", "2026-1", "2026-13", "2026-00", "1999-12", "2100-01", "26-01-01",
		"2026/01", "+026-01", "2026-+1", "２０２６-01", "2026-01 ", "2026-01-01"} {
		_, err := tenant.ParsePeriodo(in)
		if fieldErrors(t, err)[tenant.FieldPeriodo] == nil {
			t.Errorf("ParsePeriodo(%q): %v, want an error on periodo", in, err)
		}
	}
}

func FuzzParsePeriodo(f *testing.F) {
	for _, s := range []string{"2026-01", "2099-12", "2026-13", "-2026-1", "2026-+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := tenant.ParsePeriodo(s)
		if err != nil {
			return
		}
		// What it accepts names the month it spans, in Costa Rica.
		if m.Periodo != s || tenant.MonthOf(m.Start) != m || tenant.MonthOf(m.End.Add(-time.Nanosecond)) != m {
			t.Fatalf("ParsePeriodo(%q) = %+v", s, m)
		}
	})
}

func TestMonthOf(t *testing.T) {
	for _, tt := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 2, 1, 5, 59, 59, 999999999, time.UTC), "2026-01"},
		{time.Date(2026, 2, 1, 6, 0, 0, 0, time.UTC), "2026-02"},
		{time.Date(2026, 1, 1, 0, 0, 0, 0, hacienda.CostaRica), "2026-01"},
		{time.Date(2025, 12, 31, 23, 59, 0, 0, hacienda.CostaRica), "2025-12"},
	} {
		if got := tenant.MonthOf(tt.at).Periodo; got != tt.want {
			t.Errorf("MonthOf(%v) = %s, want %s", tt.at, got, tt.want)
		}
	}
}

func TestQuotaError(t *testing.T) {
	var err error = &tenant.QuotaError{QuotaUse: tenant.QuotaUse{Periodo: "2026-03", Limit: 5, Used: 5}}
	if !errors.Is(err, tenant.ErrQuota) || errors.Is(err, tenant.ErrConflict) {
		t.Errorf("errors.Is: %v", err)
	}
	for _, tt := range []struct {
		u    tenant.QuotaUse
		want int64
	}{{tenant.QuotaUse{Limit: 5, Used: 2}, 3}, {tenant.QuotaUse{Limit: 5, Used: 5}, 0}, {tenant.QuotaUse{Limit: 2, Used: 7}, 0}} {
		if got := tt.u.Available(); got != tt.want {
			t.Errorf("%+v.Available() = %d, want %d", tt.u, got, tt.want)
		}
	}
}

// Usage is read by whoever may see the company; the list by the admin
// (every company) and a reseller (its own); a branch user has no list,
// and another tenant's company is not found.
func TestUsageAccess(t *testing.T) {
	ctx := context.Background()
	b := newBundle(t, bundleOpts{now: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)})
	r1, _ := b.newReseller(t, "reseller-one")
	r2, _ := b.newReseller(t, "reseller-two")
	a := b.newCompany(t, r1, "3101000001")
	c := b.newCompany(t, r2, "3101000002")
	own := b.newCompany(t, b.admin, "3101000003")

	for _, p := range []tenant.Principal{b.admin, r1, a.user} {
		u, err := b.svc.Usage(ctx, p, a.created.ID, "2026-02")
		if err != nil || u.CompanyID != a.created.ID || u.Periodo != "2026-02" || u.Documentos.Total != 0 {
			t.Errorf("%s: Usage = %+v, %v", p.Username, u, err)
		}
	}
	// The current Costa Rica month when none is named.
	if u, err := b.svc.Usage(ctx, a.user, a.created.ID, ""); err != nil || u.Periodo != "2026-03" {
		t.Errorf("Usage without a periodo = %+v, %v; want 2026-03", u, err)
	}
	for _, p := range []tenant.Principal{r2, c.user} {
		if _, err := b.svc.Usage(ctx, p, a.created.ID, "2026-02"); !errors.Is(err, tenant.ErrNotFound) {
			t.Errorf("%s reading another tenant's usage: %v", p.Username, err)
		}
	}
	if _, err := b.svc.Usage(ctx, b.admin, 987654, "2026-02"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("usage of a missing company: %v", err)
	}
	if _, err := b.svc.Usage(ctx, a.user, a.created.ID, "2026-2"); fieldErrors(t, err)[tenant.FieldPeriodo] == nil {
		t.Errorf("a malformed periodo: %v", err)
	}

	companies := func(p tenant.Principal) []int64 {
		t.Helper()
		periodo, us, err := b.svc.Usages(ctx, p, "2026-01")
		if err != nil || periodo != "2026-01" {
			t.Fatalf("%s: Usages = %s, %v", p.Username, periodo, err)
		}
		var ids []int64
		for _, u := range us {
			if u.Periodo != "2026-01" {
				t.Errorf("%s: usage of %s", p.Username, u.Periodo)
			}
			ids = append(ids, u.CompanyID)
		}
		return ids
	}
	if got := companies(b.admin); len(got) != 3 || got[0] != a.created.ID || got[1] != c.created.ID || got[2] != own.created.ID {
		t.Errorf("admin's list: %v", got)
	}
	if got := companies(r1); len(got) != 1 || got[0] != a.created.ID {
		t.Errorf("reseller's list: %v", got)
	}
	if _, _, err := b.svc.Usages(ctx, a.user, "2026-01"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("a branch user's list: %v", err)
	}
	if _, _, err := b.svc.Usages(ctx, r1, "enero"); fieldErrors(t, err)[tenant.FieldPeriodo] == nil {
		t.Errorf("a malformed periodo: %v", err)
	}
}
