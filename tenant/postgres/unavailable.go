package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"facturad/tenant"
)

// pool is the connection pool with every error it returns classified: one
// that means the database is unreachable or failing for now (classify) is
// wrapped as a *tenant.UnavailableError, so that whatever store call meets
// it, the caller can tell a blip from a fault. The store's queries all go
// through it (and through the transactions and rows it hands out).
type pool struct{ *pgxpool.Pool }

func (p pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := p.Pool.Exec(ctx, sql, args...)
	return tag, classify(err)
}

func (p pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	r, err := p.Pool.Query(ctx, sql, args...)
	if err != nil {
		return r, classify(err)
	}
	return rows{r}, nil
}

func (p pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return row{p.Pool.QueryRow(ctx, sql, args...)}
}

// Begin is what pgx.BeginFunc calls: the transaction it returns
// classifies its errors too, its Commit's included.
func (p pool) Begin(ctx context.Context) (pgx.Tx, error) {
	t, err := p.Pool.Begin(ctx)
	if err != nil {
		return nil, classify(err)
	}
	return tx{Tx: t}, nil
}

// tx is a transaction whose errors are classified. nested is a savepoint
// (a transaction begun in one): its Commit only releases the savepoint,
// and the outcome is decided by the outer Commit.
type tx struct {
	pgx.Tx
	nested bool
}

func (t tx) Begin(ctx context.Context) (pgx.Tx, error) {
	inner, err := t.Tx.Begin(ctx)
	if err != nil {
		return nil, classify(err)
	}
	return tx{Tx: inner, nested: true}, nil
}

// Commit classifies a COMMIT's failure with classifyCommit; a savepoint's
// release like any other statement.
func (t tx) Commit(ctx context.Context) error {
	if t.nested {
		return classify(t.Tx.Commit(ctx))
	}
	return classifyCommit(t.Tx.Commit(ctx))
}

func (t tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := t.Tx.Exec(ctx, sql, args...)
	return tag, classify(err)
}

func (t tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	r, err := t.Tx.Query(ctx, sql, args...)
	if err != nil {
		return r, classify(err)
	}
	return rows{r}, nil
}

func (t tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return row{t.Tx.QueryRow(ctx, sql, args...)}
}

// rows classifies the error that ends an iteration.
type rows struct{ pgx.Rows }

func (r rows) Err() error { return classify(r.Rows.Err()) }

// row classifies a single-row query's error, which Scan returns.
type row struct{ pgx.Row }

func (r row) Scan(dest ...any) error { return classify(r.Row.Scan(dest...)) }

// classify wraps err as a *tenant.UnavailableError when it means the
// database cannot be used for now, and returns it as it is otherwise (a
// constraint, a missing row, a bug).
func classify(err error) error {
	if err == nil || !unavailable(err) {
		return err
	}
	return tenant.Unavailable(err)
}

// classifyCommit classifies the failure of a COMMIT. Only when pgconn says
// nothing was sent (SafeToRetry) is the transaction surely not committed,
// and the failure a *tenant.UnavailableError (the call may be made again
// as it is). Any other failure that would be unavailable (the connection
// broke or closed, the stream ended, the deadline ran out, the server
// shut down or dropped the connection while the COMMIT was on its way)
// leaves the outcome unknown: the server may have committed before its
// answer was lost, so it is a *tenant.OutcomeUnknownError. An error the
// server answered the COMMIT with (a serialization failure, a deferred
// constraint) means it rolled back, and stays as it is.
func classifyCommit(err error) error {
	switch {
	case err == nil:
		return nil
	case pgconn.SafeToRetry(err):
		return tenant.Unavailable(err)
	case unavailable(err):
		return tenant.OutcomeUnknown(err)
	}
	return err
}

// unavailable reports whether err means "unreachable or temporarily
// failing": no connection could be made or the one in use broke
// (pgconn.ConnectError, a network error, the connection closed under the
// query, an unexpected end of the stream), the call timed out (the pool
// gave no connection in time, a deadline ran out), pgconn says nothing
// was sent so the call can be made again (SafeToRetry), or the server
// says so: a connection exception (SQLSTATE class 08), the server shutting
// down or starting (57P01–57P03), too many connections (53300), a
// statement cancelled by its timeout (57014).
func unavailable(err error) bool {
	if errors.Is(err, pgx.ErrNoRows) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"):
			return true
		case pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", pe.Code == "53300", pe.Code == "57014":
			return true
		}
		return false
	}
	var (
		ce *pgconn.ConnectError
		ne net.Error
	)
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
