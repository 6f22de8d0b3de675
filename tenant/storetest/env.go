package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"facturad/deploy/testenv"
	"facturad/tenant"
	"facturad/tenant/postgres"
	"facturad/tenant/sqlite"
)

// The test environment's variables, set by the project's test command.
const (
	EnvDatabaseURL     = "TEST_DATABASE_URL"
	EnvRedisURL        = "TEST_REDIS_URL"
	EnvRequireServices = testenv.RequireServicesVar
)

// RequireServices reports whether TEST_REQUIRE_SERVICES asks tests to fail,
// not skip, when a service they need is missing; a value that is neither
// on nor off fails the test (testenv.RequireServices).
func RequireServices(t testing.TB) bool {
	t.Helper()
	return testenv.RequireServices(t)
}

// Missing ends the test because a service it needs is not configured: a
// failure when TEST_REQUIRE_SERVICES is on, a skip otherwise.
func Missing(t testing.TB, what string) {
	t.Helper()
	if RequireServices(t) {
		t.Fatalf("%s is required (%s is on) but not configured", what, EnvRequireServices)
		return
	}
	t.Skipf("%s not configured; skipping (set %s=1 to make this a failure)", what, EnvRequireServices)
}

// PostgresURL returns TEST_DATABASE_URL, or ends the test as Missing says.
// A TEST_REQUIRE_SERVICES that is neither on nor off fails the test even
// when the URL is set.
func PostgresURL(t testing.TB) string {
	t.Helper()
	RequireServices(t)
	u := os.Getenv(EnvDatabaseURL)
	if u == "" {
		Missing(t, "PostgreSQL ("+EnvDatabaseURL+")")
	}
	return u
}

// RedisURL returns TEST_REDIS_URL, or ends the test as Missing says. Tests
// share the server: isolate keys with a prefix such as UniqueName(t).
func RedisURL(t testing.TB) string {
	t.Helper()
	RequireServices(t)
	u := os.Getenv(EnvRedisURL)
	if u == "" {
		Missing(t, "Redis ("+EnvRedisURL+")")
	}
	return u
}

// UniqueName returns a fresh lower-case identifier ("t_" and 16 hex digits)
// usable as a PostgreSQL schema name or a Redis key prefix.
func UniqueName(t testing.TB) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("unique name: %v", err)
	}
	return "t_" + hex.EncodeToString(b[:])
}

// NewSQLite opens a fresh, migrated SQLite store in a file under
// t.TempDir(), closed when the test ends.
func NewSQLite(t testing.TB) tenant.Store {
	t.Helper()
	return NewSQLiteStore(t)
}

// NewSQLiteStore is NewSQLite with the concrete type, for tests that need
// more than the contract.
func NewSQLiteStore(t testing.TB) *sqlite.Store {
	t.Helper()
	return NewSQLiteStoreWith(t, sqlite.Options{})
}

// NewSQLiteStoreWith is NewSQLiteStore opened with o (a clock of the
// test's, say).
func NewSQLiteStoreWith(t testing.TB, o sqlite.Options) *sqlite.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "facturad.db")
	s, err := sqlite.Open(context.Background(), path, o)
	if err != nil {
		t.Fatalf("open sqlite store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close sqlite store: %v", err)
		}
	})
	return s
}

// NewPostgres opens a store on TEST_DATABASE_URL in a schema of its own,
// migrated, and drops the schema when the test ends. Without the variable
// the test skips or fails as PostgresURL says.
func NewPostgres(t testing.TB) tenant.Store {
	t.Helper()
	return NewPostgresStore(t)
}

// NewPostgresStore is NewPostgres with the concrete type.
func NewPostgresStore(t testing.TB) *postgres.Store {
	t.Helper()
	return NewPostgresStoreWith(t, postgres.Options{})
}

// NewPostgresStoreWith is NewPostgresStore opened with o (a clock of the
// test's, say); its Schema is always a fresh one, and its pool has 4
// connections unless o says otherwise.
func NewPostgresStoreWith(t testing.TB, o postgres.Options) *postgres.Store {
	t.Helper()
	url := PostgresURL(t)
	ctx := context.Background()
	o.Schema = UniqueName(t)
	if o.MaxConns == 0 {
		// Tests share the server with many others: keep each pool small.
		o.MaxConns = 4
	}
	s, err := postgres.Open(ctx, url, o)
	if err != nil {
		t.Fatalf("open postgres store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.DropSchema(context.Background()); err != nil {
			t.Errorf("drop test schema: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("close postgres store: %v", err)
		}
	})
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate postgres store: %v", err)
	}
	return s
}

// NewPostgresReplicas opens two stores on one fresh schema of
// TEST_DATABASE_URL, as two replicas of the service hold them: two pools,
// one database. Both migrate, as replicas starting together do (the first
// applies the migrations, the other finds nothing to do), and the schema
// is dropped when the test ends. configure, when not nil, sets replica i's
// options beyond the schema (its clock, its pool's size, 4 by default).
func NewPostgresReplicas(t testing.TB, configure func(i int, o *postgres.Options)) (*postgres.Store, *postgres.Store) {
	t.Helper()
	url := PostgresURL(t)
	schema := UniqueName(t)
	ctx := context.Background()
	var stores [2]*postgres.Store
	for i := range stores {
		o := postgres.Options{MaxConns: 4}
		if configure != nil {
			configure(i, &o)
		}
		o.Schema = schema
		s, err := postgres.Open(ctx, url, o)
		if err != nil {
			t.Fatalf("open replica %d: %v", i, err)
		}
		stores[i] = s
	}
	t.Cleanup(func() {
		if err := stores[0].DropSchema(context.Background()); err != nil {
			t.Errorf("drop test schema: %v", err)
		}
		for _, s := range stores {
			s.Close()
		}
	})
	for i, s := range stores {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate replica %d: %v", i, err)
		}
	}
	return stores[0], stores[1]
}

// NewSQLiteReplicas opens two stores on one file under t.TempDir(), as two
// processes sharing it hold them, closed when the test ends. configure,
// when not nil, sets store i's options (its clock).
func NewSQLiteReplicas(t testing.TB, configure func(i int, o *sqlite.Options)) (*sqlite.Store, *sqlite.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "facturad.db")
	var stores [2]*sqlite.Store
	for i := range stores {
		var o sqlite.Options
		if configure != nil {
			configure(i, &o)
		}
		s, err := sqlite.Open(context.Background(), path, o)
		if err != nil {
			t.Fatalf("open store %d: %v", i, err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close store %d: %v", i, err)
			}
		})
		stores[i] = s
	}
	return stores[0], stores[1]
}
