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

// AuthorizeDocument (a document's read) and ListCompany (a listing) are
// one rule: for every principal and company, a document of any branch of
// the company is readable exactly when the company's documents are
// listable, and a branch user's company is every branch's.
func TestDocumentReadsAndListingsAreOneRule(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	ctx := context.Background()
	reseller, _ := b.newReseller(t, "revendedor.reglas")
	otherReseller, _ := b.newReseller(t, "revendedor.otro")
	a := b.newCompany(t, reseller, "3101123456")
	o := b.newCompany(t, b.admin, "3101654321")
	ca := a.created.Company.ID
	branchB, _, err := b.svc.CreateBranch(ctx, a.user, ca, branchInput("002"))
	if err != nil {
		t.Fatal(err)
	}
	anotherBranchUser := a.user
	anotherBranchUser.BranchID = branchB.ID
	for _, tt := range []struct {
		name    string
		p       tenant.Principal
		company int64
		ok      bool
	}{
		{"ok/admin", b.admin, ca, true},
		{"ok/the owning reseller", reseller, ca, true},
		{"ok/a branch user of the company", a.user, ca, true},
		{"ok/a user of another branch of the company", anotherBranchUser, ca, true},
		{"error/another reseller", otherReseller, ca, false},
		{"error/another company's branch user", o.user, ca, false},
		{"error/a reseller, an admin's company", reseller, o.created.Company.ID, false},
		{"error/admin, a company that does not exist", b.admin, 1 << 40, false},
		{"error/no role", tenant.Principal{UserID: 1, CompanyID: ca}, ca, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			readErr := b.svc.AuthorizeDocument(ctx, tt.p, tt.company)
			got, listErr := b.svc.ListCompany(ctx, tt.p, tt.company)
			if tt.ok != (readErr == nil) || tt.ok != (listErr == nil) {
				t.Fatalf("read: %v, list: %v; want allowed %v for both", readErr, listErr, tt.ok)
			}
			if tt.ok && got != tt.company {
				t.Errorf("ListCompany = %d, want %d", got, tt.company)
			}
			if !tt.ok && (!errors.Is(readErr, tenant.ErrNotFound) || !errors.Is(listErr, tenant.ErrNotFound)) {
				t.Errorf("read: %v, list: %v; want tenant.ErrNotFound for both", readErr, listErr)
			}
		})
	}
}
