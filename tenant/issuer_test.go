package tenant_test

import (
	"context"
	"errors"
	"testing"

	"facturad/tenant"
)

// Service.Issuer gives the pipeline a company and one of its branches: a
// branch of another company must never be paired with it (its documents
// would be numbered in the other company's sequence).
func TestIssuerRefusesAnotherCompanysBranch(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	ctx := context.Background()
	a := b.newCompany(t, b.admin, "3101123456")
	o := b.newCompany(t, b.admin, "3101654321")

	is, err := b.svc.Issuer(ctx, a.created.Company.ID, a.created.Branch.ID)
	if err != nil || is.Company.ID != a.created.Company.ID || is.Branch.ID != a.created.Branch.ID {
		t.Fatalf("own branch: %+v, %v", is, err)
	}
	for _, tt := range []struct {
		name              string
		company, branchID int64
	}{
		{"another company's branch", a.created.Company.ID, o.created.Branch.ID},
		{"the other way round", o.created.Company.ID, a.created.Branch.ID},
		{"a missing branch", a.created.Company.ID, 1 << 40},
	} {
		if _, err := b.svc.Issuer(ctx, tt.company, tt.branchID); !errors.Is(err, tenant.ErrNotFound) {
			t.Errorf("%s: err = %v, want tenant.ErrNotFound", tt.name, err)
		}
	}
}
