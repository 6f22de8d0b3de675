package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"facturad/tenant/seal"
	"facturad/tenant/sqlite"
)

// runBackup writes a consistent copy of the embedded store to --out while
// the service keeps running, and one of the built-in sandbox's state
// (sandbox.db) beside it when data_dir has one (sandboxBackupPath;
// decision 190). It reads only data_dir (found as the service finds it),
// database_url (refused, with the way to back up PostgreSQL, unless
// --sandbox: the store is not read then) and master_key (to say where the
// key lives), plus --out and --sandbox (commandSettings). Nothing is said
// written before every copy is.
//
// The master key is not copied: a backup that holds its key opens every
// certificate, PIN, password and webhook signing secret in it for whoever
// holds the file, so the key is kept, and backed up, apart from the data.
func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var (
		out         string
		sandboxOnly bool
	)
	c, err := loadConfig("backup", args, stdout, stderr, getenv, func(fs *commandFlags) {
		fs.StringVar(&out, "out", "", "file to write the backup to; it must not exist (- writes it to standard output, through a temporary file in data_dir). "+
			"When data_dir holds the built-in sandbox's state (sandbox.db), a file FILE.sandbox.sqlite (FILE less its .db) gets a copy of it, which must not exist either; standard output gets the store alone")
		fs.BoolVar(&sandboxOnly, "sandbox", false, "copy the built-in sandbox's state (data_dir/sandbox.db, or the --data-dir of facturad sandbox) alone to --out, for instance to standard output after a backup of the store with --out -; database_url may be set, the store is not read")
		fs.precheck = func(c Config) error {
			// --sandbox reads no store: a sandbox's folder may be backed
			// up from the environment of a service on PostgreSQL.
			if c.DatabaseURL != "" && !sandboxOnly {
				return fmt.Errorf("backup: %s is set: back up PostgreSQL with its own tools, "+
					"for example `pg_dump --format=custom --file=facturad.dump \"$DATABASE_URL\"` (see docs/operations.md), "+
					"and keep the master key apart from the dump", c.name("database_url"))
			}
			return nil
		}
	})
	if err != nil {
		return err
	}
	if out == "" {
		return errors.New("backup: --out FILE is required (a file that does not exist yet)")
	}
	notes := stdout
	if out == "-" {
		// The backup is the output: the notes go to stderr.
		notes = stderr
	}
	sb := sandboxStatePath(c)
	hasSandbox, err := fileExists(sb)
	if err != nil {
		return fmt.Errorf("backup: the built-in sandbox's state: %w", err)
	}
	if sandboxOnly {
		if !hasSandbox {
			return fmt.Errorf("backup --sandbox: %s does not exist: no sandbox keeps its state in %s", sb, c.DataDir)
		}
		if err := backupFile(ctx, c.DataDir, sb, out, stdout); err != nil {
			return err
		}
		fmt.Fprintf(notes, "backup written: %s (a consistent copy of the sandbox's state %s, integrity checked)\n", outName(out), sb)
		return nil
	}

	db := embeddedStorePath(c)
	if hasSandbox {
		// A facturad sandbox --data-dir folder holds no store.
		if ok, err := fileExists(db); err == nil && !ok {
			return fmt.Errorf("backup: %s does not exist: %s holds a sandbox's state alone, which `facturad backup --sandbox` copies", db, c.DataDir)
		}
	}
	sbOut := ""
	if hasSandbox && out != "-" {
		sbOut = sandboxBackupPath(out)
		if _, err := os.Lstat(sbOut); err == nil {
			return fmt.Errorf("backup: %s already exists (the copy of the built-in sandbox's state goes there); choose another name (a backup never replaces a file)", sbOut)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("backup: %w", err)
		}
	}
	if err := backupFile(ctx, c.DataDir, db, out, stdout); err != nil {
		return err
	}
	if sbOut != "" {
		// After the store: every document the store's copy says was sent
		// is in the sandbox's (decision 190).
		if err := sqlite.Backup(ctx, sb, sbOut); err != nil {
			// All or nothing: the store's copy alone would be taken for
			// the whole backup.
			if rerr := os.Remove(out); rerr != nil {
				return errors.Join(err, fmt.Errorf("backup: the copy of the built-in sandbox's state failed and %s, the store's copy, could not be removed: "+
					"delete it, it is not a whole backup: %w", out, rerr))
			}
			return fmt.Errorf("backup: the copy of the built-in sandbox's state failed, so nothing was written (the store's copy %s was removed): %w", out, err)
		}
	}
	// Only now that every copy is in place: a note printed before a later
	// copy failed would name a file that is gone.
	fmt.Fprintf(notes, "backup written: %s (a consistent copy of %s, integrity checked)\n", outName(out), db)
	switch {
	case sbOut != "":
		fmt.Fprintf(notes, "backup written: %s (a consistent copy of the built-in sandbox's state %s, integrity checked)\n", sbOut, sb)
	case hasSandbox:
		fmt.Fprintf(notes, "the built-in sandbox's state (%s) is not in standard output: `facturad backup --sandbox --out -` writes a copy of it\n", sb)
	}
	where := "FACTURAD_MASTER_KEY"
	if c.MasterKey == "" {
		where = filepath.Join(c.DataDir, seal.MasterKeyFile)
	}
	fmt.Fprintf(notes, "the master key (%s) is NOT in the backup: keep a copy of it apart from the backups; "+
		"without it the sealed certificates, PINs, passwords and webhook signing secrets cannot be opened, and with it anyone holding a backup can open them\n", where)
	return nil
}

// backupFile writes a checked copy of the SQLite file db to out, or to
// stdout when out is "-".
func backupFile(ctx context.Context, dataDir, db, out string, stdout io.Writer) error {
	if out == "-" {
		return backupToStream(ctx, dataDir, db, stdout)
	}
	return sqlite.Backup(ctx, db, out)
}

// outName is how the notes name where a backup went.
func outName(out string) string {
	if out == "-" {
		return "standard output"
	}
	return out
}

// sandboxBackupPath is where a backup to out puts its copy of the built-in
// sandbox's state: out less a final .db, then .sandbox.sqlite
// (facturad-20260101.db gives facturad-20260101.sandbox.sqlite). It does
// not end in .db, so that a script taking the newest facturad-*.db for the
// store's backup never takes the sandbox's.
func sandboxBackupPath(out string) string {
	return strings.TrimSuffix(out, ".db") + sandboxBackupSuffix
}

// sandboxBackupSuffix ends the name of a backup's copy of the sandbox's
// state (sandboxBackupPath).
const sandboxBackupSuffix = ".sandbox.sqlite"

// fileExists reports whether path exists; an error other than its
// absence is returned.
func fileExists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, err
	}
}

// backupToStream writes a checked backup of db to w. The copy is made in a
// private folder inside dataDir (the one place a container with a
// read-only root file system can write as much as the store), checked,
// streamed and removed: for a container with no shell, where
// `kubectl exec … facturad backup --out - > FILE` is the way out.
func backupToStream(ctx context.Context, dataDir, db string, w io.Writer) (err error) {
	if _, err := os.Stat(db); err != nil {
		return fmt.Errorf("backup: database: %w", err)
	}
	tmp, err := os.MkdirTemp(dataDir, ".backup-")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer func() {
		if rerr := os.RemoveAll(tmp); rerr != nil && err == nil {
			err = fmt.Errorf("backup: remove temporary copy: %w", rerr)
		}
	}()
	copyPath := filepath.Join(tmp, filepath.Base(db))
	if err := sqlite.Backup(ctx, db, copyPath); err != nil {
		return err
	}
	f, err := os.Open(copyPath)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("backup: write to standard output: %w", err)
	}
	return nil
}
