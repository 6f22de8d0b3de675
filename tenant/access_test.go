package tenant_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"facturad/tenant"
	"facturad/tenant/storetest"
)

// readCounter counts the store reads the Service makes for a branch list.
type readCounter struct {
	tenant.Store
	companies, branches atomic.Int64
}

func (r *readCounter) Company(ctx context.Context, id int64) (tenant.Company, error) {
	r.companies.Add(1)
	return r.Store.Company(ctx, id)
}

func (r *readCounter) Branches(ctx context.Context, companyID int64) ([]tenant.Branch, error) {
	r.branches.Add(1)
	return r.Store.Branches(ctx, companyID)
}

// An admin's or a branch user's branch list is one store read: the
// principal alone decides whether the company may be seen, and the branch
// query answers ErrNotFound for a company that does not exist. A reseller's
// list still reads the company, for its owner. Every refusal is ErrNotFound.
func TestBranchesReads(t *testing.T) {
	rc := &readCounter{Store: storetest.NewSQLite(t)}
	b := newBundle(t, bundleOpts{store: rc})
	ctx := context.Background()
	r1, _ := b.newReseller(t, "reseller-one")
	r2, _ := b.newReseller(t, "reseller-two")
	a := b.newCompany(t, r1, "3101000001")
	c := b.newCompany(t, b.admin, "3101000003")
	const missing = 1 << 40
	// A branch user's principal naming a company that does not exist (its
	// company can never be removed, but the store must answer anyway).
	ghost := tenant.Principal{UserID: a.user.UserID, Username: a.user.Username, Role: tenant.RoleBranch, CompanyID: missing, BranchID: 1}
	odd := tenant.Principal{UserID: a.user.UserID, Username: "x", Role: tenant.Role("auditor"), CompanyID: a.created.ID}

	tests := []struct {
		name                string
		p                   tenant.Principal
		company             int64
		want                int // branches listed; -1 for ErrNotFound
		companies, branches int64
	}{
		{"ok/admin", b.admin, a.created.ID, 1, 0, 1},
		{"ok/admin on its own company", b.admin, c.created.ID, 1, 0, 1},
		{"ok/branch user", a.user, a.created.ID, 1, 0, 1},
		{"ok/branch user of the admin's company", c.user, c.created.ID, 1, 0, 1},
		{"ok/owner reseller", r1, a.created.ID, 1, 1, 1},
		{"error/admin on a missing company", b.admin, missing, -1, 0, 1},
		{"error/admin on id 0", b.admin, 0, -1, 0, 0},
		{"error/branch user on another company", a.user, c.created.ID, -1, 0, 0},
		{"error/branch user on a missing company", a.user, missing, -1, 0, 0},
		{"error/branch user whose company is missing", ghost, missing, -1, 0, 1},
		{"error/branch user without company", tenant.Principal{UserID: 9, Role: tenant.RoleBranch}, a.created.ID, -1, 0, 0},
		{"error/other reseller", r2, a.created.ID, -1, 1, 0},
		{"error/reseller on the admin's company", r1, c.created.ID, -1, 1, 0},
		{"error/reseller on a missing company", r1, missing, -1, 1, 0},
		{"error/unknown role", odd, a.created.ID, -1, 1, 0},
		{"error/no role", tenant.Principal{}, a.created.ID, -1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc.companies.Store(0)
			rc.branches.Store(0)
			bs, err := b.svc.Branches(ctx, tt.p, tt.company)
			switch {
			case tt.want < 0 && !errors.Is(err, tenant.ErrNotFound):
				t.Errorf("err = %v, want ErrNotFound", err)
			case tt.want >= 0 && err != nil:
				t.Errorf("err = %v", err)
			case tt.want >= 0 && len(bs) != tt.want:
				t.Errorf("%d branches, want %d", len(bs), tt.want)
			}
			for _, br := range bs {
				if br.CompanyID != tt.company {
					t.Errorf("branch %d of company %d listed for company %d", br.ID, br.CompanyID, tt.company)
				}
			}
			if got := rc.companies.Load(); got != tt.companies {
				t.Errorf("%d company reads, want %d", got, tt.companies)
			}
			if got := rc.branches.Load(); got != tt.branches {
				t.Errorf("%d branch list reads, want %d", got, tt.branches)
			}
		})
	}
}
