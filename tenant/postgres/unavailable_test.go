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
