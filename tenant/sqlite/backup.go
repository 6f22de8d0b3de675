package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Backup writes a consistent copy of the database file at path to out
// while other processes keep reading and writing it.
//
// The copy is SQLite's VACUUM INTO, run in one read transaction on a
// read-only connection of its own: it sees one committed state (the WAL
// included) and never blocks the writer. It goes to a temporary file
// beside out (created 0600 before SQLite writes to it), is checked with
// PRAGMA integrity_check, synced, and only then linked to out, which must
// not exist: an existing file is refused, never replaced. The folder is
// synced last, so a backup reported done survives a power cut.
//
// The copy holds every row, sealed secrets included, but not the master key
// that opens them: that lives apart from the data.
func Backup(ctx context.Context, path, out string) (err error) {
	if path == "" || out == "" {
		return errors.New("backup: empty path")
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("backup: database: %w", err)
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("backup: %s already exists; choose another name (a backup never replaces a file)", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %w", err)
	}

	// The temporary name is in out's folder, so that the final link is
	// within one file system, and private from its first byte.
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tmpName := tmp.Name()
	defer func() {
		if rerr := os.Remove(tmpName); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = fmt.Errorf("backup: remove temporary file: %w", rerr)
		}
	}()
	if err := errors.Join(tmp.Chmod(0o600), tmp.Close()); err != nil {
		return fmt.Errorf("backup: %w", err)
	}

	if err := vacuumInto(ctx, path, tmpName); err != nil {
		return err
	}
	if err := integrityCheck(ctx, tmpName); err != nil {
		return err
	}
	if err := syncFile(tmpName); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	// A hard link fails when out exists, where a rename would replace it.
	if err := os.Link(tmpName, out); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("backup: %s already exists; choose another name (a backup never replaces a file)", out)
		}
		return fmt.Errorf("backup: %w", err)
	}
	if err := syncFile(filepath.Dir(out)); err != nil {
		return fmt.Errorf("backup: sync folder: %w", err)
	}
	return nil
}

// vacuumInto copies the database at path into the empty file dst.
func vacuumInto(ctx context.Context, path, dst string) error {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(5000)")
	dsn, err := fileURI(path, q)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("backup: open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return fmt.Errorf("backup: copy %s: %w", path, err)
	}
	return nil
}

// IntegrityCheck runs PRAGMA integrity_check on the database file at path
// (opened read-only) and returns an error listing what it found unless the
// answer is "ok".
func IntegrityCheck(ctx context.Context, path string) error {
	return integrityCheck(ctx, path)
}

func integrityCheck(ctx context.Context, path string) error {
	dsn, err := fileURI(path, url.Values{"mode": {"ro"}})
	if err != nil {
		return fmt.Errorf("integrity check %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("integrity check %s: %w", path, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("integrity check %s: %w", path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("integrity check %s: %w", path, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check %s: %w", path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("integrity check %s: %s", path, strings.Join(problems, "; "))
	}
	return nil
}

// fileURI returns the SQLite URI of the file at path with the parameters
// q. The path is made absolute and escaped, so that a name holding "?",
// "#" or "%" names that very file rather than ending the path early or
// being decoded into another name.
func fileURI(path string, q url.Values) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), OmitHost: true, RawQuery: q.Encode()}
	return u.String(), nil
}

// syncFile flushes a file or folder to stable storage.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	serr := f.Sync()
	if errors.Is(serr, syscall.EINVAL) {
		serr = nil // some file systems do not sync folders
	}
	return errors.Join(serr, f.Close())
}
