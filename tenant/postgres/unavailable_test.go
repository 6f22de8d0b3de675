package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"facturad/tenant"
)

// TestClassify: the errors that mean the database cannot be used for now
// become *tenant.UnavailableError, keeping the cause in the chain; the
// others (a missing row, a constraint, a syntax error) stay as they are.
func TestClassify(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("company 3: %w", refused), true},
		{"stream cut", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"conn closed", pgconn.ErrConnClosed, true},
		{"deadline", fmt.Errorf("acquire: %w", context.DeadlineExceeded), true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"cannot connect now", &pgconn.PgError{Code: "57P03"}, true},
		{"connection exception", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"statement timeout", &pgconn.PgError{Code: "57014"}, true},
		{"no rows", pgx.ErrNoRows, false},
		{"unique violation", &pgconn.PgError{Code: uniqueViolation}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"other", errors.New("scan: wrong type"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.err)
			if errors.Is(got, tenant.ErrUnavailable) != tt.want {
				t.Fatalf("classify(%v) = %v; unavailable %v, want %v", tt.err, got, !tt.want, tt.want)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("classify(%v) lost the cause: %v", tt.err, got)
			}
			var ue *tenant.UnavailableError
			if tt.want && (!errors.As(got, &ue) || ue.RetryAfter() <= 0) {
				t.Errorf("classify(%v) = %v, want an *UnavailableError with a Retry-After", tt.err, got)
			}
		})
	}
	if classify(nil) != nil {
		t.Error("classify(nil) is not nil")
	}
}

// notSent is an error pgconn.SafeToRetry holds for: nothing reached the
// server (pgconn's own such errors are not exported).
type notSent struct{ error }

func (notSent) SafeToRetry() bool { return true }

// TestClassifyCommit: a COMMIT that failed is unavailable (may be made
// again) only when nothing was sent; a failure after it was sent leaves
// the outcome unknown (never unavailable); an answer of the server's (it
// rolled back) stays as it is.
func TestClassifyCommit(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	const (
		asIs = iota
		unavail
		unknown
	)
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"nothing sent", notSent{errors.New("conn busy")}, unavail},
		{"nothing sent, wrapped", fmt.Errorf("commit: %w", notSent{io.EOF}), unavail},
		{"connection reset", fmt.Errorf("commit: %w", reset), unknown},
		{"stream ended", io.EOF, unknown},
		{"stream cut", io.ErrUnexpectedEOF, unknown},
		{"conn closed", pgconn.ErrConnClosed, unknown},
		{"deadline", fmt.Errorf("commit: %w", context.DeadlineExceeded), unknown},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, unknown},
		{"connection exception", &pgconn.PgError{Code: "08006"}, unknown},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, asIs},
		{"deferred unique violation", &pgconn.PgError{Code: uniqueViolation}, asIs},
		{"rolled back", pgx.ErrTxCommitRollback, asIs},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := classifyCommit(tt.err)
			if !errors.Is(got, tt.err) {
				t.Errorf("classifyCommit(%v) lost the cause: %v", tt.err, got)
			}
			isUnavail, isUnknown := errors.Is(got, tenant.ErrUnavailable), errors.Is(got, tenant.ErrOutcomeUnknown)
			switch tt.want {
			case unavail:
				if !isUnavail || isUnknown {
					t.Errorf("classifyCommit(%v) = %v, want unavailable", tt.err, got)
				}
			case unknown:
				if isUnavail || !isUnknown {
					t.Errorf("classifyCommit(%v) = %v, want outcome unknown and not unavailable", tt.err, got)
				}
			case asIs:
				if got != tt.err {
					t.Errorf("classifyCommit(%v) = %v, want it as it is", tt.err, got)
				}
			}
		})
	}
	if classifyCommit(nil) != nil {
		t.Error("classifyCommit(nil) is not nil")
	}
}
