package storetest

import (
	"context"
	"fmt"
	"testing"

	"facturad/tenant"
)

// Bench measures the store operations on the paths that matter: the cold
// authentication lookup (APIUserByTokenHash, when no cache holds the
// credentials) and a company create (NextCompanyID + CreateCompany, as the
// Service calls them). open returns a fresh, empty store.
func Bench(b *testing.B, open func(testing.TB) tenant.Store) {
	b.Run("APIUserByTokenHash", func(b *testing.B) {
		s := open(b)
		ctx := context.Background()
		// A table with some users in it, looked up in turn.
		const users = 500
		hashes := make([][]byte, 0, users)
		for i := range users {
			c := createCompanyB(b, s, fmt.Sprintf("Bench %d", i))
			hashes = append(hashes, c.User.TokenHash)
		}
		b.ReportAllocs()
		b.ResetTimer()
		i := 0
		for b.Loop() {
			u, err := s.APIUserByTokenHash(ctx, hashes[i%users])
			if err != nil {
				b.Fatal(err)
			}
			if u.ID == 0 {
				b.Fatal("no user")
			}
			i++
		}
	})
	b.Run("CreateCompany", func(b *testing.B) {
		s := open(b)
		b.ReportAllocs()
		b.ResetTimer()
		i := 0
		for b.Loop() {
			createCompanyB(b, s, fmt.Sprintf("Bench %d", i))
			i++
		}
	})
}

// createCompanyB is createCompany for benchmarks.
func createCompanyB(b *testing.B, s tenant.Store, name string) created {
	ctx := context.Background()
	id, err := s.NextCompanyID(ctx)
	if err != nil {
		b.Fatalf("NextCompanyID: %v", err)
	}
	c, br, u := company(id, name), branch("001"), user(fmt.Sprintf("company-%d-user", id))
	if err := s.CreateCompany(ctx, &c, &br, &u); err != nil {
		b.Fatalf("CreateCompany %q: %v", name, err)
	}
	return created{c, br, u}
}
