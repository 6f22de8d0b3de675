package postgres

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"

	"facturad/tenant/migration"
)

// migrationFiles holds the schema, one file per version, named
// NNNN_what.sql with the same numbers and names as the other store's
// (docs/design/stores.md, "Migrations"). A change is a new file; applied
// files never change.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

const (
	qAdvisoryLock          = `SELECT pg_advisory_lock($1)`
	qAdvisoryUnlock        = `SELECT pg_advisory_unlock($1)`
	qCreateMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    bigint      PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)`
	qAppliedMigrations = `SELECT version FROM schema_migrations`
	qRecordMigration   = `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`
)

// Migrate opens the database at url, applies the pending migrations and
// closes it: the `facturad migrate` subcommand.
func Migrate(ctx context.Context, url string, opts Options) error {
	s, err := Open(ctx, url, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Migrate(ctx)
}

// Migrate applies the migrations not yet recorded in schema_migrations, each
// in its own transaction together with its record. It holds a session
// advisory lock (one per schema) meanwhile, so that replicas starting at
// once wait for each other and apply every migration exactly once. With
// Options.Schema it first creates that schema.
func (s *Store) Migrate(ctx context.Context) (err error) {
	ms, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()

	key := lockKey(s.schema)
	if _, err := conn.Exec(ctx, qAdvisoryLock, key); err != nil {
		return fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	defer func() {
		// Unlock even when ctx is done; a broken connection drops the lock
		// with the session anyway.
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), qAdvisoryUnlock, key); uerr != nil && err == nil {
			err = fmt.Errorf("migrate: release the migration lock: %w", uerr)
		}
	}()

	if s.schema != "" {
		if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{s.schema}.Sanitize()); err != nil {
			return fmt.Errorf("migrate: create schema %s: %w", s.schema, err)
		}
	}
	if _, err := conn.Exec(ctx, qCreateMigrationsTable); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	rows, err := conn.Query(ctx, qAppliedMigrations)
	if err != nil {
		return fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	applied := make(map[int64]bool, len(versions))
	for _, v := range versions {
		applied[v] = true
	}
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// No arguments: pgx sends the file with the simple protocol, so
			// it may hold several statements.
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, qRecordMigration, m.Version, m.Name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate: %s: %w", m.Name, err)
		}
	}
	return nil
}

// lockKey is the advisory lock key of a schema's migrations: schemas
// migrate independently, replicas on one schema one at a time.
func lockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("facturad migrations\x00" + schema))
	return int64(h.Sum64())
}
