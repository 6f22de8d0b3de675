package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"facturad/tenant/postgres"
	"facturad/tenant/storetest"
)

func TestArchiveStore(t *testing.T) {
	storetest.RunArchive(t, func(t *testing.T) storetest.ArchiveStore { return storetest.NewPostgresStore(t) })
}

// Two stores on one schema are two replicas: separate pools, one database.
func TestArchiveStoreReplicas(t *testing.T) {
	storetest.RunArchiveReplicas(t, func(t *testing.T) (storetest.ArchiveStore, storetest.ArchiveStore) {
		return storetest.NewPostgresReplicas(t, nil)
	})
}

// TestArchiveMigrationLocks upgrades a store from before the archive's
// migrations: 0009 adds only columns and gives up on a table another
// transaction holds rather than queue every read and write behind it,
// and 0010 skips the indexes an operator built concurrently beforehand.
func TestArchiveMigrationLocks(t *testing.T) {
	url := storetest.PostgresURL(t)
	ctx := context.Background()
	schema := storetest.UniqueName(t)
	dropSchema(t, url, schema)
	s, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	exec := func(c *pgx.Conn, q string) {
		t.Helper()
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(admin, "SET search_path TO "+pgx.Identifier{schema}.Sanitize())
	// Back to the schema before 0009: its columns (and with them the
	// indexes on them) dropped, neither migration recorded.
	for _, table := range []string{"documents", "received_documents"} {
		rows, err := admin.Query(ctx, `SELECT column_name FROM information_schema.columns
WHERE table_schema = $1 AND table_name = $2 AND (column_name LIKE 'archive%' OR column_name = 'parts_dropped_at')`, schema, table)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(cols) < 3 {
			t.Fatalf("%s's archive columns: %v, %v", table, cols, err)
		}
		for _, c := range cols {
			exec(admin, "ALTER TABLE "+table+" DROP COLUMN "+pgx.Identifier{c}.Sanitize())
		}
	}
	exec(admin, `DELETE FROM schema_migrations WHERE version IN (9, 10)`)

	// A long transaction reading documents holds a lock ALTER TABLE must
	// wait for.
	reader, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close(ctx)
	exec(reader, "SET search_path TO "+pgx.Identifier{schema}.Sanitize())
	exec(reader, "BEGIN")
	exec(reader, "SELECT count(*) FROM documents")
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	err = s.Migrate(mctx)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
		t.Fatalf("Migrate behind a long transaction after %s = %v, want a lock timeout (55P03)", time.Since(start), err)
	}
	exec(reader, "ROLLBACK")

	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate once the transaction ended: %v", err)
	}

	// An operator builds an index concurrently before 0010: the migration
	// finds it and makes the others.
	exec(admin, `DELETE FROM schema_migrations WHERE version = 10`)
	exec(admin, `DROP INDEX documents_unarchived, documents_archived_kept, received_unarchived, received_archived_kept`)
	exec(admin, `CREATE INDEX CONCURRENTLY documents_unarchived ON documents (id)
    WHERE archived_at IS NULL AND phase IN ('accepted', 'rejected')`)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate with documents_unarchived built beforehand: %v", err)
	}
	var n int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = $1
AND indexname IN ('documents_unarchived', 'documents_archived_kept', 'received_unarchived', 'received_archived_kept')`, schema).Scan(&n); err != nil || n != 4 {
		t.Errorf("archive indexes after the migration: %d, %v", n, err)
	}
}
