package tenant_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"facturad/tenant"
)

// TestAuditLogAccess: a company's log is read by the admin, the company's
// reseller and the company's own users; every other principal gets
// ErrNotFound, as for a company it cannot see. The platform's log
// (company 0) is the admin's only.
func TestAuditLogAccess(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for _, co := range []int64{w.a.created.ID, w.b.created.ID, w.c.created.ID, 0} {
		err := w.svc.RecordAudit(ctx, tenant.AuditEntry{UserID: 1, Username: "admin", RequestID: fmt.Sprint("r-", co),
			CompanyID: co, Action: tenant.AuditCompanyUpdate, Fields: []string{"RazonSocial"}})
		if err != nil {
			t.Fatalf("RecordAudit %d: %v", co, err)
		}
	}
	a, b, c := w.a.created.ID, w.b.created.ID, w.c.created.ID
	readers := map[int64][]string{
		a: {"admin", "r1", "userA"},
		b: {"admin", "r2", "userB"},
		c: {"admin", "userC"},
		0: {"admin"},
	}
	for co, allowed := range readers {
		for name, p := range w.principals {
			t.Run(fmt.Sprintf("company %d by %s", co, name), func(t *testing.T) {
				got, err := w.svc.AuditLog(ctx, p, co, tenant.AuditQuery{Limit: 10})
				if !slices.Contains(allowed, name) {
					if !errors.Is(err, tenant.ErrNotFound) {
						t.Errorf("got %d entries, %v; want ErrNotFound", len(got), err)
					}
					return
				}
				if err != nil || len(got) != 1 || got[0].CompanyID != co || got[0].RequestID != fmt.Sprint("r-", co) {
					t.Errorf("got %+v, %v", got, err)
				}
			})
		}
	}
	for _, id := range []int64{-1, 999999} {
		if _, err := w.svc.AuditLog(ctx, w.admin, id, tenant.AuditQuery{Limit: 10}); !errors.Is(err, tenant.ErrNotFound) {
			t.Errorf("company %d for the admin: %v, want ErrNotFound", id, err)
		}
	}
}

// TestRecordAuditCleansEntries: field names are kept as names only,
// sorted, once each, storable and bounded; the time defaults to the
// service's clock; an entry without an action is refused.
func TestRecordAuditCleansEntries(t *testing.T) {
	b := newBundle(t, bundleOpts{now: time.Date(2026, 11, 21, 20, 3, 0, 987654321, time.UTC)})
	ctx := context.Background()
	co := b.newCompany(t, b.admin, "3101000009")
	long := strings.Repeat("x", tenant.MaxAuditFieldLen+10)
	many := []string{"usuario", "Usuario", "usuario", "", "a\x00b", "mal\xffformado", long}
	for i := range tenant.MaxAuditFields + 5 {
		many = append(many, fmt.Sprintf("z%03d", i))
	}
	err := b.svc.RecordAudit(ctx, tenant.AuditEntry{UserID: 7, Username: "cajero\x07", RequestID: "req-1",
		CompanyID: co.created.ID, Action: tenant.AuditUserCreate, Fields: many})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.svc.AuditLog(ctx, b.admin, co.created.ID, tenant.AuditQuery{Limit: 10})
	if err != nil || len(got) != 1 {
		t.Fatalf("%+v, %v", got, err)
	}
	e := got[0]
	if !e.At.Equal(b.now.Truncate(time.Microsecond)) {
		t.Errorf("at %v, want the service's clock %v", e.At, b.now)
	}
	if e.Username != "cajero\uFFFD" {
		t.Errorf("user name %q", e.Username)
	}
	want := []string{"Usuario", "a\uFFFDb", "mal\uFFFDformado", "usuario", strings.Repeat("x", tenant.MaxAuditFieldLen), "z000"}
	if len(e.Fields) != tenant.MaxAuditFields || !slices.Equal(e.Fields[:len(want)], want) || !slices.IsSorted(e.Fields) {
		t.Errorf("fields %q", e.Fields)
	}
	if err := b.svc.RecordAudit(ctx, tenant.AuditEntry{CompanyID: co.created.ID}); err == nil {
		t.Error("an entry without an action was recorded")
	}
}
