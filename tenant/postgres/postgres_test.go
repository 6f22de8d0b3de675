package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
	"facturad/tenant/postgres"
	"facturad/tenant/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) tenant.Store { return storetest.NewPostgres(t) })
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, storetest.NewPostgres)
}

// dropSchema drops a schema made by a test that did not use
// storetest.NewPostgres.
func dropSchema(t *testing.T, url, schema string) {
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
}

// Replicas that start together all migrate; each migration is applied once.
func TestMigrateConcurrently(t *testing.T) {
	url := storetest.PostgresURL(t)
	ctx := context.Background()
	schema := storetest.UniqueName(t)
	dropSchema(t, url, schema)
	const replicas = 4
	stores := make([]*postgres.Store, replicas)
	for i := range stores {
		s, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	for i, s := range stores {
		wg.Go(func() { errs[i] = s.Migrate(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: Migrate: %v", i, err)
		}
	}
	// Again, on a migrated schema: nothing to do.
	if err := stores[0].Migrate(ctx); err != nil {
		t.Errorf("second Migrate: %v", err)
	}

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n, distinct int
	q := `SELECT count(*), count(DISTINCT version) FROM ` + pgx.Identifier{schema, "schema_migrations"}.Sanitize()
	if err := conn.QueryRow(ctx, q).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n == 0 || n != distinct {
		t.Errorf("schema_migrations holds %d rows for %d versions", n, distinct)
	}
	// Every replica works on the result.
	for i, s := range stores {
		storetest.AddCompany(t, s, fmt.Sprintf("Replica %d", i))
	}
	got, err := stores[0].SearchCompanies(ctx, tenant.CompanyQuery{NameKey: "replica"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != replicas {
		t.Errorf("search finds %d companies, want %d", len(got), replicas)
	}
}

func TestMigrateFunction(t *testing.T) {
	url := storetest.PostgresURL(t)
	ctx := context.Background()
	schema := storetest.UniqueName(t)
	dropSchema(t, url, schema)
	opts := postgres.Options{Schema: schema, MaxConns: 2}
	if err := postgres.Migrate(ctx, url, opts); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	s, err := postgres.Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := storetest.AddCompany(t, s, "Migrada")
	if _, err := s.Company(ctx, c.ID); err != nil {
		t.Errorf("Company: %v", err)
	}
}

// Stores on different schemas of one database see only their own data.
func TestSchemasAreIsolated(t *testing.T) {
	a, b := storetest.NewPostgres(t), storetest.NewPostgres(t)
	ctx := context.Background()
	ca := storetest.AddCompany(t, a, "Solo En A")
	cb := storetest.AddCompany(t, b, "Solo En B")
	if ca.ID != cb.ID {
		t.Errorf("each schema has its own id sequence: got %d and %d", ca.ID, cb.ID)
	}
	for name, s := range map[string]tenant.Store{"a": a, "b": b} {
		got, err := s.SearchCompanies(ctx, tenant.CompanyQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !strings.HasSuffix(got[0].RazonSocial, strings.ToUpper(name)) {
			t.Errorf("store %s sees %d companies: %+v", name, len(got), got)
		}
	}
}

func TestOpenErrorsHidePasswords(t *testing.T) {
	tests := []struct {
		name, url string
	}{
		{"error/url does not parse", "postgres://user:sekret-pw@host:notaport/db"},
		{"error/server unreachable", "postgres://user:sekret-pw@127.0.0.1:1/db?connect_timeout=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := postgres.Open(context.Background(), tt.url, postgres.Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if strings.Contains(err.Error(), "sekret-pw") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
	_, err := postgres.Open(context.Background(), "postgres://localhost/db", postgres.Options{Schema: strings.Repeat("s", 64)})
	if err == nil {
		t.Error("Open accepted a 64-byte schema name")
	}
}

func TestDropSchemaNeedsOwnSchema(t *testing.T) {
	url := storetest.PostgresURL(t)
	s, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.DropSchema(context.Background()); err == nil {
		t.Error("DropSchema without Options.Schema succeeded")
	}
}

func TestRekey(t *testing.T) {
	storetest.RunRekey(t, func(t *testing.T) storetest.RekeyStore { return storetest.NewPostgresStore(t) })
}

func TestRegistry(t *testing.T) {
	storetest.RunRegistry(t, func(t *testing.T, now func() time.Time) tenant.RegistryStore {
		return storetest.NewPostgresStoreWith(t, postgres.Options{Now: now})
	})
}

func TestAudit(t *testing.T) {
	storetest.RunAudit(t, func(t *testing.T) tenant.AuditStore { return storetest.NewPostgresStore(t) })
}
