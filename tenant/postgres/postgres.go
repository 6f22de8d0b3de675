// Package postgres is the production tenant.Store, on PostgreSQL through a
// pgx/v5 connection pool. Several replicas of the service share one
// database: ids come from sequences, the unique rules (user names, token
// digests, a company's branch codes) are constraints the database enforces,
// and migrations run under an advisory lock so that replicas starting
// together apply each one once.
//
// This is the only package of the module that imports pgx.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"facturad/tenant"
)

// Options tune a Store. The zero value uses the URL as it is.
type Options struct {
	// Schema, when set, is where every connection of the pool looks for and
	// Migrate creates the tables (it becomes the connections' search_path).
	// Empty keeps the server's search_path.
	Schema string
	// MaxConns caps the pool; 0 keeps pgx's default (or the URL's
	// pool_max_conns).
	MaxConns int32
	// Now is the clock that stamps CreatedAt and UpdatedAt. Default
	// time.Now.
	Now func() time.Time
}

// Store is a tenant.Store on PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool   pool // classifies its errors (unavailable.go)
	schema string
	now    func() time.Time

	registryPuts atomic.Uint64 // paces the deletes of forgotten registry rows
}

var _ tenant.Store = (*Store)(nil)

// Open connects to the database at url and checks that it answers. It does
// not migrate: call Migrate (or run `facturad migrate`) for that.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parse error may quote the URL, password included.
		return nil, errors.New("open postgres store: the database URL does not parse")
	}
	if opts.Schema != "" {
		if err := checkSchemaName(opts.Schema); err != nil {
			return nil, fmt.Errorf("open postgres store: %w", err)
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{opts.Schema}.Sanitize()
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	if err := p.Ping(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	return &Store{pool: pool{Pool: p}, schema: opts.Schema, now: opts.Now}, nil
}

// checkSchemaName accepts the names PostgreSQL keeps as they are.
func checkSchemaName(s string) error {
	if len(s) > 63 {
		return fmt.Errorf("schema name %q is longer than 63 bytes", s)
	}
	if strings.ContainsRune(s, 0) {
		return errors.New("schema name holds a NUL byte")
	}
	return nil
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping postgres store: %w", err)
	}
	return nil
}

// Close closes the pool, waiting for connections in use to come back.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// DropSchema drops the store's schema and everything in it. It exists for
// tests that give each run a schema of its own; it refuses a store opened
// without Options.Schema.
func (s *Store) DropSchema(ctx context.Context) error {
	if s.schema == "" {
		return errors.New("drop schema: the store was opened without a schema of its own")
	}
	if _, err := s.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s.schema}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("drop schema %s: %w", s.schema, err)
	}
	return nil
}

// clock returns the store's time in UTC, cut to the microsecond PostgreSQL
// keeps.
func (s *Store) clock() time.Time {
	return s.now().UTC().Truncate(time.Microsecond)
}

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func fromNullTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// nullBytes stores an empty byte slice as NULL; it reads back as nil.
func nullBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// nullText stores b as text, empty as NULL (a *string, which pgx sends as
// text, or a nil one).
func nullText(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	t := string(b)
	return &t
}

// nullID stores a zero reference as NULL.
func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// SQLSTATE codes the store maps to tenant errors.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

// mapErr turns the errors callers branch on into the tenant sentinels,
// keeping the original message.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return tenant.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case uniqueViolation:
			return fmt.Errorf("%w: %w", tenant.ErrConflict, err)
		case foreignKeyViolation:
			// The company or branch referred to does not exist.
			return fmt.Errorf("%w: %w", tenant.ErrNotFound, err)
		}
	}
	return err
}

// searchLimit is the most companies a search returns.
const searchLimit = 100

// likeContains returns a LIKE pattern (escape character '\') that matches
// s anywhere, with the wildcards in s taken literally.
func likeContains(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// PoolStats is a snapshot of the store's connection pool.
type PoolStats struct {
	AcquiredConns, IdleConns, TotalConns, MaxConns int32
	Acquires, EmptyAcquires, CanceledAcquires      int64
	AcquireWait                                    time.Duration
}

// PoolStats reads the pool's statistics now (for /metrics).
func (s *Store) PoolStats() PoolStats {
	st := s.pool.Stat()
	return PoolStats{
		AcquiredConns:    st.AcquiredConns(),
		IdleConns:        st.IdleConns(),
		TotalConns:       st.TotalConns(),
		MaxConns:         st.MaxConns(),
		Acquires:         st.AcquireCount(),
		EmptyAcquires:    st.EmptyAcquireCount(),
		CanceledAcquires: st.CanceledAcquireCount(),
		AcquireWait:      st.AcquireDuration(),
	}
}
