package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"facturad/tenant"
)

// db is one of the store's connection pools with the errors of its
// statements and transactions' starts classified: one that means the file
// cannot be used for now (classify) is wrapped as a
// *tenant.UnavailableError. With the write connection's transactions
// beginning IMMEDIATE, a lock another process holds past the busy timeout
// surfaces at BeginTx; a wait for the one write connection that outlives
// the caller's deadline surfaces at whichever call waited. Single-row
// reads (QueryRowContext, the prepared statements) keep *sql.Row, which
// the transactions share: their deadline is read by the gateway as the
// same temporary failure, and the read connections (WAL) take no lock a
// writer holds.
type db struct{ *sql.DB }

func (d db) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	r, err := d.DB.ExecContext(ctx, query, args...)
	return r, classify(err)
}

func (d db) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	r, err := d.DB.QueryContext(ctx, query, args...)
	return r, classify(err)
}

func (d db) BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error) {
	tx, err := d.DB.BeginTx(ctx, opts)
	return tx, classify(err)
}

// classify wraps err as a *tenant.UnavailableError when it means the
// database cannot be used for now, and returns it as it is otherwise.
func classify(err error) error {
	if err == nil || !unavailable(err) {
		return err
	}
	return tenant.Unavailable(err)
}

// unavailable reports whether err means "temporarily failing": the file
// locked past the busy timeout (SQLITE_BUSY, SQLITE_LOCKED and their
// extended codes), or the caller's deadline ran out waiting (for the one
// write connection, a batch, a lock).
func unavailable(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
		return false
	}
	return errors.Is(err, context.DeadlineExceeded)
}
