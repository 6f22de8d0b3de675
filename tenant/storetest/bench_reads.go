package storetest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"facturad/tenant"
)

// readFixture fills a store with companies of three branches each and
// returns their ids and token digests.
func readFixture(b *testing.B, s tenant.Store, companies int) (ids []int64, tokens [][]byte) {
	b.Helper()
	ctx := context.Background()
	for i := range companies {
		id, err := s.NextCompanyID(ctx)
		if err != nil {
			b.Fatal(err)
		}
		c := tenant.Company{ID: id, RazonSocial: fmt.Sprintf("Empresa %d", i), NumeroIdentificacion: fmt.Sprintf("3101%06d", id), Activo: true,
			SealedCertificate: make([]byte, 2048), CertificateVersion: 1}
		for j := range 3 {
			br := tenant.Branch{CompanyID: id, Sucursal: fmt.Sprintf("%03d", j+1), RazonComercial: "Sucursal", Activo: true}
			h := sha256.Sum256(fmt.Appendf(nil, "token %d %d", id, j))
			u := tenant.APIUser{Username: fmt.Sprintf("user-%d-%d", id, j), PasswordHash: "x", TokenHash: h[:], Role: tenant.RoleBranch, Activo: true}
			if j == 0 {
				err = s.CreateCompany(ctx, &c, &br, &u)
				tokens = append(tokens, h[:])
			} else {
				err = s.CreateBranch(ctx, &br, &u)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	return ids, tokens
}

// BenchReads measures the store's reads on the request paths (Branches,
// Company, CompanyBranch, APIUserByTokenHash), one query each, with a
// cancellable context as the gateway passes, over 200 companies of three
// branches. open returns a fresh, empty store. Each sub-benchmark also
// reports cpu-ns/op (see ReportCPU), which counts this process only.
func BenchReads(b *testing.B, open func(testing.TB) tenant.Store) {
	s := open(b)
	ids, tokens := readFixture(b, s, 200)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("Branches", func(b *testing.B) {
		b.ReportAllocs()
		defer ReportCPU(b)()
		i := 0
		for b.Loop() {
			bs, err := s.Branches(ctx, ids[i%len(ids)])
			if err != nil || len(bs) != 3 {
				b.Fatalf("%d branches: %v", len(bs), err)
			}
			i++
		}
	})
	b.Run("Company", func(b *testing.B) {
		b.ReportAllocs()
		defer ReportCPU(b)()
		i := 0
		for b.Loop() {
			c, err := s.Company(ctx, ids[i%len(ids)])
			if err != nil || c.ID == 0 {
				b.Fatal(err)
			}
			i++
		}
	})
	type pair struct{ company, branch int64 }
	var pairs []pair
	for _, id := range ids {
		bs, err := s.Branches(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		for _, br := range bs {
			pairs = append(pairs, pair{id, br.ID})
		}
	}
	companyBranch := func(pairs []pair) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			defer ReportCPU(b)()
			i := 0
			for b.Loop() {
				p := pairs[i%len(pairs)]
				c, br, err := s.CompanyBranch(ctx, p.company, p.branch)
				if err != nil || c.ID != p.company || br.ID != p.branch {
					b.Fatalf("company %d, branch %d: read company %d, branch %d: %v", p.company, p.branch, c.ID, br.ID, err)
				}
				i++
			}
		}
	}
	b.Run("CompanyBranch", companyBranch(pairs))
	// The first company's first branch (ids 1 and 1) in turn with
	// another: a value of 1 bound where another was, or the other way
	// round, is what made SQLite compile the read again (see the SQLite
	// store's qCompanyBranch).
	b.Run("CompanyBranchFirstInTurn", companyBranch([]pair{pairs[0], pairs[len(pairs)/2]}))
	b.Run("APIUserByTokenHash", func(b *testing.B) {
		b.ReportAllocs()
		defer ReportCPU(b)()
		i := 0
		for b.Loop() {
			u, err := s.APIUserByTokenHash(ctx, tokens[i%len(tokens)])
			if err != nil || u.ID == 0 {
				b.Fatal(err)
			}
			i++
		}
	})
}
