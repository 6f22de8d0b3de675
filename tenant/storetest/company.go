package storetest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

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
