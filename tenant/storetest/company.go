package storetest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"facturad/hacienda/registry"
	"facturad/tenant"
)

// AddCompany creates an active company named name in s, with one branch
// (001) and one branch user, its identification number and username
// derived from the id the store hands out, and returns the company.
func AddCompany(t testing.TB, s tenant.Store, name string) tenant.Company {
	t.Helper()
	ctx := context.Background()
	id, err := s.NextCompanyID(ctx)
	if err != nil {
		t.Fatalf("NextCompanyID: %v", err)
	}
	h := sha256.Sum256(fmt.Appendf(nil, "token %s %d", name, id))
	c := tenant.Company{ID: id, RazonSocial: name, Activo: true, NumeroIdentificacion: fmt.Sprintf("3101%06d", id)}
	b := tenant.Branch{Sucursal: "001", Activo: true}
	u := tenant.APIUser{Username: fmt.Sprintf("user-%s-%d", name, id), TokenHash: h[:], Role: tenant.RoleBranch, Activo: true}
	if err := s.CreateCompany(ctx, &c, &b, &u); err != nil {
		t.Fatalf("CreateCompany: %v", err)
	}
	return c
}

// testValidacionesRegistro: each value of the company's registry checks is
// written by create and update and read back by every read of a company;
// the schema refuses any other, keeping the stored value.
func testValidacionesRegistro(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	for _, v := range []string{"", string(registry.PolicyRefuse), string(registry.PolicyWarn), string(registry.PolicyOff)} {
		t.Run("value "+fmt.Sprintf("%q", v), func(t *testing.T) {
			id, err := s.NextCompanyID(ctx)
			mustNot(t, "NextCompanyID", err)
			c, b, u := company(id, fmt.Sprintf("Validaciones %q S.A.", v)), branch("001"), user(fmt.Sprintf("validaciones-%d", id))
			c.ValidacionesRegistro = v
			mustNot(t, "CreateCompany", s.CreateCompany(ctx, &c, &b, &u))
			read := func(what string, want string) {
				t.Helper()
				for name, g := range everyCompanyRead(t, s, id, b.ID) {
					if g.ValidacionesRegistro != want {
						t.Errorf("%s: %s reads %q, want %q", what, name, g.ValidacionesRegistro, want)
					}
				}
			}
			read("after create", v)

			// Updated to each other value and back.
			for _, w := range []string{string(registry.PolicyOff), "", string(registry.PolicyRefuse), v} {
				upd, err := s.Company(ctx, id)
				mustNot(t, "Company", err)
				upd.ValidacionesRegistro = w
				mustNot(t, "UpdateCompany", s.UpdateCompany(ctx, &upd, false))
				if upd.ValidacionesRegistro != w {
					t.Errorf("UpdateCompany read back %q, want %q", upd.ValidacionesRegistro, w)
				}
				read(fmt.Sprintf("after an update to %q", w), w)
			}

			for _, bad := range []string{"REFUSE", "strict", " off", "refuse "} {
				upd, err := s.Company(ctx, id)
				mustNot(t, "Company", err)
				upd.ValidacionesRegistro = bad
				if err := s.UpdateCompany(ctx, &upd, false); err == nil {
					t.Errorf("UpdateCompany stored validaciones_registro %q", bad)
				}
				read(fmt.Sprintf("after a refused update to %q", bad), v)
			}
			bad := company(0, "Mala S.A.")
			bad.ID, err = s.NextCompanyID(ctx)
			mustNot(t, "NextCompanyID", err)
			bad.ValidacionesRegistro = "always"
			bb, bu := branch("001"), user(fmt.Sprintf("mala-%d", bad.ID))
			if err := s.CreateCompany(ctx, &bad, &bb, &bu); err == nil {
				t.Error("CreateCompany stored validaciones_registro \"always\"")
			}
		})
	}
}

// everyCompanyRead reads the company id through every read of a company
// (Company, SearchCompanies by id, CompanyBranch with branchID), by the
// read's name.
func everyCompanyRead(t *testing.T, s tenant.Store, id, branchID int64) map[string]tenant.Company {
	t.Helper()
	ctx := context.Background()
	got, err := s.Company(ctx, id)
	mustNot(t, "Company", err)
	found, err := s.SearchCompanies(ctx, tenant.CompanyQuery{CompanyID: id})
	mustNot(t, "SearchCompanies", err)
	withBranch, _, err := s.CompanyBranch(ctx, id, branchID)
	mustNot(t, "CompanyBranch", err)
	if len(found) != 1 {
		t.Fatalf("search by id found %d companies", len(found))
	}
	return map[string]tenant.Company{"Company": got, "SearchCompanies": found[0], "CompanyBranch": withBranch}
}
