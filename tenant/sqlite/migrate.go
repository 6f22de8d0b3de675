package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

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
	qCreateMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
) STRICT`
	qMigrationApplied = `SELECT count(*) FROM schema_migrations WHERE version = ?`
	qRecordMigration  = `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`
)

// migrate applies the migrations not yet recorded in schema_migrations, each
// in its own transaction with its record. The transactions begin IMMEDIATE,
// so two processes opening the same file apply each migration once.
func migrate(ctx context.Context, db *sql.DB, now func() time.Time) error {
	ms, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := db.ExecContext(ctx, qCreateMigrationsTable); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	for _, m := range ms {
		if err := applyMigration(ctx, db, m, now); err != nil {
			return fmt.Errorf("migrate: %s: %w", m.Name, err)
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db *sql.DB, m migration.Migration, now func() time.Time) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	var n int
	if err := tx.QueryRowContext(ctx, qMigrationApplied, m.Version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return tx.Rollback()
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, qRecordMigration, m.Version, m.Name, formatTime(now())); err != nil {
		return err
	}
	return tx.Commit()
}

// ignoreDone drops the error of rolling back a finished transaction.
func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}
