package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"facturad/tenant"
	"facturad/tenant/migration"
)

// TestUsernameScopeMigration opens a file written before user names were
// scoped per company and checks that the rebuilt users table keeps every
// user, its id, and the id sequence (no id is given out twice).
func TestUsernameScopeMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, qCreateMigrationsTable); err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	for _, m := range ms {
		if m.Version >= 6 {
			break
		}
		if err := applyMigration(ctx, db, m, now); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
	}
	insert := func(name string, role tenant.Role) {
		t.Helper()
		h := sha256.Sum256([]byte(name))
		_, err := db.ExecContext(ctx, `INSERT INTO api_users (username, password_hash, token_hash, role, activo, created_at)
VALUES (?, 'hash', ?, ?, 1, '2026-01-02T03:04:05.000000Z')`, name, h[:], string(role))
		if err != nil {
			t.Fatalf("insert %s: %v", name, err)
		}
	}
	insert("admin", tenant.RoleAdmin)
	insert("revendedor", tenant.RoleReseller)
	insert("borrado", tenant.RoleReseller)
	if _, err := db.ExecContext(ctx, `DELETE FROM api_users WHERE username = 'borrado'`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("open the old file: %v", err)
	}
	defer s.Close()
	for i, name := range []string{"admin", "revendedor"} {
		u, err := s.APIUserByUsername(ctx, 0, name)
		if err != nil {
			t.Fatalf("%s after the migration: %v", name, err)
		}
		if u.ID != int64(i+1) {
			t.Errorf("%s has id %d after the migration, want %d", name, u.ID, i+1)
		}
	}
	h := sha256.Sum256([]byte("nuevo"))
	u := tenant.APIUser{Username: "nuevo", PasswordHash: "hash", TokenHash: h[:], Role: tenant.RoleReseller, Activo: true}
	if err := s.CreateAPIUser(ctx, &u); err != nil {
		t.Fatal(err)
	}
	if u.ID != 4 {
		t.Errorf("a new user after the migration got id %d, want 4 (3 was given out before)", u.ID)
	}
	dup := tenant.APIUser{Username: "admin", PasswordHash: "hash", TokenHash: []byte("another token digest of 32 bytes"), Role: tenant.RoleReseller, Activo: true}
	if err := s.CreateAPIUser(ctx, &dup); err == nil {
		t.Error("a second operator named admin was created after the migration")
	}
}
