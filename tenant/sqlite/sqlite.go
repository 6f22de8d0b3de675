// Package sqlite is the embedded tenant.Store: one SQLite file in the data
// folder, read and written through modernc.org/sqlite (pure Go, no cgo). It
// is the default store for a single node and for trying the service.
//
// The file runs in WAL mode so that readers never wait for the writer. All
// writes go through one connection whose transactions begin IMMEDIATE: the
// write lock is taken when a transaction starts, never upgraded half way, so
// concurrent writers queue instead of failing with SQLITE_BUSY. Reads use a
// separate pool of read-only connections. Commits are synchronous (FULL): a
// committed row survives a power cut, which numbering documents needs. The
// schema is embedded as versioned .sql files and applied by Open.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"facturad/tenant"
)

// Options tune a Store. The zero value is ready to use.
type Options struct {
	// BusyTimeout is how long a connection waits for a lock held by another
	// process (a second facturad on the same file, a backup) before it
	// fails. Default 5s.
	BusyTimeout time.Duration
	// MaxReaders caps the read-only connections. Default 4.
	MaxReaders int
	// Now is the clock that stamps CreatedAt and UpdatedAt. Default
	// time.Now.
	Now func() time.Time
}

// Store is a tenant.Store on one SQLite file. It is safe for concurrent use.
type Store struct {
	write db // exactly one connection: writes are serialized here
	read  db // read-only connections
	now   func() time.Time

	stmts  readStmts  // the read queries, prepared once on the read pool
	wstmts writeStmts // the document writes, prepared on the write connection
	batch  *batcher   // group commit of the document writes

	registryPuts atomic.Uint64 // paces the deletes of forgotten registry rows
}

var _ tenant.Store = (*Store)(nil)

// Open opens (creating it when missing) the database file at path, applies
// the pending migrations and returns the Store. The folder must exist.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("open sqlite store: empty path")
	}
	if strings.ContainsAny(path, "?#") || path == ":memory:" {
		return nil, fmt.Errorf("open sqlite store: path %q must be a plain file name", path)
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.MaxReaders <= 0 {
		opts.MaxReaders = 4
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := privateFiles(path); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	busy := strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)

	wq := url.Values{}
	wq.Add("_pragma", "busy_timeout("+busy+")")
	wq.Add("_pragma", "journal_mode(WAL)")
	wq.Add("_pragma", "synchronous(FULL)")
	wq.Add("_pragma", "foreign_keys(1)")
	wq.Set("_txlock", "immediate")
	write, err := sql.Open("sqlite", path+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	s := &Store{write: db{write}, now: opts.Now}
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if err := migrate(ctx, write, opts.Now); err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}

	rq := url.Values{}
	rq.Add("_pragma", "busy_timeout("+busy+")")
	rq.Add("_pragma", "query_only(1)")
	read, err := sql.Open("sqlite", path+"?"+rq.Encode())
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	read.SetMaxOpenConns(opts.MaxReaders)
	read.SetMaxIdleConns(opts.MaxReaders)
	read.SetConnMaxIdleTime(0)
	s.read = db{read}
	if err := s.stmts.prepare(ctx, read); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite store %s: prepare: %w", path, err)
	}
	if err := s.wstmts.prepare(ctx, write); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite store %s: prepare: %w", path, err)
	}
	s.batch = newBatcher(write, s.wstmts.sp)
	return s, nil
}

// Ping reports whether the file can be read.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.read.PingContext(ctx); err != nil {
		return fmt.Errorf("ping sqlite store: %w", err)
	}
	return nil
}

// Close closes both pools.
func (s *Store) Close() error {
	var errs []error
	if s.batch != nil {
		s.batch.close()
	}
	errs = append(errs, s.stmts.close(), s.wstmts.close())
	if s.read.DB != nil {
		errs = append(errs, s.read.Close())
	}
	errs = append(errs, s.write.Close())
	return errors.Join(errs...)
}

// clock returns the store's time in UTC, cut to the microsecond that both
// stores keep.
func (s *Store) clock() time.Time {
	return s.now().UTC().Truncate(time.Microsecond)
}

// Timestamps are stored as fixed-width UTC text, so that they sort as text
// and keep microseconds.
const timeLayout = "2006-01-02T15:04:05.000000Z"

func formatTime(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format(timeLayout)
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t, nil
}

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

func parseNullTime(s sql.NullString) (time.Time, error) {
	if !s.Valid {
		return time.Time{}, nil
	}
	return parseTime(s.String)
}

// nullBytes stores an empty byte slice as NULL; it reads back as nil.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// nullID stores a zero reference as NULL.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// mapErr turns driver errors callers branch on into the tenant sentinels,
// keeping the original message.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return tenant.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %w", tenant.ErrConflict, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
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

// privateFiles makes the database file (and its -wal and -shm companions,
// which SQLite creates with the database file's mode) readable by the
// owner only, like the master key beside it: it holds sealed secrets and
// every tenant's documents. A missing file is created 0600; an existing
// one that others may read is narrowed.
func privateFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		return f.Close()
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("create the database file: %w", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, st.Mode().Perm()&0o700); err != nil {
				return fmt.Errorf("narrow the mode of %s: %w", p, err)
			}
		}
	}
	return nil
}
