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

// applyMigration applies m in a transaction of its own, with foreign keys
// off: SQLite changes a table it cannot ALTER by building a new one and
// dropping the old (the procedure its documentation gives), which would
// otherwise delete or re-point the rows that refer to it. Every foreign
// key is checked before the commit: a migration that breaks one is rolled
// back.
func applyMigration(ctx context.Context, db *sql.DB, m migration.Migration, now func() time.Time) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The pragma is a no-op inside a transaction: it is set on the
	// connection before, and put back after, whatever happens.
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	defer func() {
		if _, perr := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`); perr != nil {
			err = errors.Join(err, perr)
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
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
	if err := checkForeignKeys(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, qRecordMigration, m.Version, m.Name, formatTime(now())); err != nil {
		return err
	}
	return tx.Commit()
}

// checkForeignKeys fails when a row refers to one that does not exist.
func checkForeignKeys(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int64
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return err
		}
		return fmt.Errorf("row %d of %s refers to a missing row of %s", rowid.Int64, table, parent)
	}
	return rows.Err()
}

// ignoreDone drops the error of rolling back a finished transaction.
func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}
