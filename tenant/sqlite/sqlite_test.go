package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"facturad/tenant"
	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) tenant.Store { return storetest.NewSQLite(t) })
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, storetest.NewSQLite)
}

func TestReopenKeepsDataAndIDs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "facturad.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := storetest.AddCompany(t, s, "Persistente")
	reserved, err := s.NextCompanyID(ctx) // reserved, never used
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	got, err := s.Company(ctx, first.ID)
	if err != nil {
		t.Fatalf("company after reopen: %v", err)
	}
	if got.RazonSocial != "Persistente" {
		t.Errorf("company after reopen: %+v", got)
	}
	next, err := s.NextCompanyID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if next <= reserved {
		t.Errorf("after reopen NextCompanyID = %d, not past the reserved %d", next, reserved)
	}

	// Each migration is recorded once, however often the file is opened.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, distinct int
	if err := db.QueryRow(`SELECT count(*), count(DISTINCT version) FROM schema_migrations`).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n == 0 || n != distinct {
		t.Errorf("schema_migrations holds %d rows for %d versions", n, distinct)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
}

// Two stores on one file stand for two processes: their writers wait for
// each other instead of failing with SQLITE_BUSY.
func TestTwoStoresOnOneFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "facturad.db")
	var stores []*sqlite.Store
	for range 2 {
		s, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	ids := make(chan int64, 40)
	for w := range 4 {
		s := stores[w%2]
		wg.Go(func() {
			for i := range 10 {
				id, err := s.NextCompanyID(ctx)
				if err != nil {
					errs <- err
					return
				}
				h := sha256.Sum256(fmt.Appendf(nil, "%d-%d", w, i))
				c := tenant.Company{ID: id, RazonSocial: fmt.Sprintf("W%d-%d", w, i), NumeroIdentificacion: fmt.Sprintf("3101%06d", id)}
				b := tenant.Branch{Sucursal: "001"}
				u := tenant.APIUser{Username: fmt.Sprintf("w%d-%d", w, i), TokenHash: h[:], Role: tenant.RoleBranch}
				if err := s.CreateCompany(ctx, &c, &b, &u); err != nil {
					errs <- err
					return
				}
				ids <- id
			}
		})
	}
	wg.Wait()
	close(errs)
	close(ids)
	for err := range errs {
		t.Errorf("writer: %v", err)
	}
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 40 {
		t.Errorf("%d companies created, want 40", len(seen))
	}
	got, err := stores[0].SearchCompanies(ctx, tenant.CompanyQuery{NameKey: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 40 {
		t.Errorf("search sees %d companies, want 40", len(got))
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path string
	}{
		{"error/empty path", ""},
		{"error/memory", ":memory:"},
		{"error/query in the name", filepath.Join(dir, "a.db?mode=ro")},
		{"error/missing folder", filepath.Join(dir, "missing", "a.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := sqlite.Open(context.Background(), tt.path, sqlite.Options{})
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded", tt.path)
			}
		})
	}
}

func TestRekey(t *testing.T) {
	storetest.RunRekey(t, func(t *testing.T) storetest.RekeyStore { return storetest.NewSQLiteStore(t) })
}

func TestRegistry(t *testing.T) {
	storetest.RunRegistry(t, func(t *testing.T, now func() time.Time) tenant.RegistryStore {
		return storetest.NewSQLiteStoreWith(t, sqlite.Options{Now: now})
	})
}

func TestAudit(t *testing.T) {
	storetest.RunAudit(t, func(t *testing.T) tenant.AuditStore { return storetest.NewSQLiteStore(t) })
}
