package tenant_test

import (
	"context"
	"errors"
	"testing"

	"facturad/tenant"
	"facturad/tenant/storetest"
)

// TestServiceOnPostgres runs the main paths of the Service on the
// PostgreSQL store, so that both stores are known to serve it: bootstrap,
// ownership, isolation, certificate replacement, cached authentication and
// its invalidation.
func TestServiceOnPostgres(t *testing.T) {
	b := newBundle(t, bundleOpts{store: storetest.NewPostgres(t)})
	ctx := context.Background()
	if _, created, err := b.svc.EnsureAdmin(ctx, "", "", ""); err != nil || created {
		t.Fatalf("second EnsureAdmin = %v, %v", created, err)
	}
	r1, _ := b.newReseller(t, "reseller-one")
	r2, _ := b.newReseller(t, "reseller-two")
	a := b.newCompany(t, r1, "3101000001")
	bb := b.newCompany(t, r2, "3101000002")

	cs, err := b.svc.SearchCompanies(ctx, r1, "ÑANDU")
	if err != nil || len(cs) != 1 || cs[0].ID != a.created.ID {
		t.Fatalf("reseller search = %v, %v", cs, err)
	}
	for _, p := range []tenant.Principal{r2, bb.user} {
		if _, err := b.svc.Company(ctx, p, a.created.ID); !errors.Is(err, tenant.ErrNotFound) {
			t.Fatalf("%s reading another tenant's company: %v", p.Username, err)
		}
		if _, _, err := b.svc.CreateBranch(ctx, p, a.created.ID, branchInput("005")); !errors.Is(err, tenant.ErrNotFound) {
			t.Fatalf("%s creating a branch in another tenant's company: %v", p.Username, err)
		}
	}
	d, err := b.svc.Company(ctx, a.user, a.created.ID)
	if err != nil || d.SecretsShown || len(d.CertificatePIN) != 0 || d.CertificateVersion != 1 {
		t.Fatalf("own company = %+v, %v", d.CertificateVersion, err)
	}
	if d, err := b.svc.Company(ctx, r1, a.created.ID); err != nil || string(d.CertificatePIN) != "1234" {
		t.Fatalf("the owning reseller's read: %v", err)
	}
	_, cr2, err := b.svc.CreateBranch(ctx, a.user, a.created.ID, branchInput("002"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.svc.CreateBranch(ctx, a.user, a.created.ID, branchInput("002")); fieldErrors(t, err)["sucursal"] == nil {
		t.Fatal("duplicate sucursal accepted")
	}
	b.login(t, cr2)
	b.hasher.verifies.Store(0)
	b.login(t, cr2)
	if n := b.hasher.verifies.Load(); n != 0 {
		t.Fatalf("warm path ran the slow hash %d times", n)
	}
	in := companyInput(t, "3101000001")
	in.Certificate, in.CertificatePIN = nil, nil
	in.Activo = "N"
	if _, err := b.svc.UpdateCompany(ctx, r1, a.created.ID, in); err != nil {
		t.Fatal(err)
	}
	for _, cr := range []tenant.Credentials{a.creds, cr2} {
		if _, err := b.svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); !errors.Is(err, tenant.ErrUnauthenticated) {
			t.Fatalf("user of a deactivated company: %v", err)
		}
	}
	b.login(t, bb.creds)
}
