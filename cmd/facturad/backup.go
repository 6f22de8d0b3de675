package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"facturad/tenant/seal"
	"facturad/tenant/sqlite"
)

// runBackup writes a consistent copy of the embedded store to --out while
// the service keeps running. It reads only data_dir (found as the service
// finds it), database_url (refused, with the way to back up PostgreSQL)
// and master_key (to say where the key lives), plus --out
// (commandSettings).
//
// The master key is not copied: a backup that holds its key opens every
// certificate, PIN, password and webhook signing secret in it for whoever
// holds the file, so the key is kept, and backed up, apart from the data.
func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var out string
	c, err := loadConfig("backup", args, stdout, stderr, getenv, func(fs *commandFlags) {
		fs.StringVar(&out, "out", "", "file to write the backup to; it must not exist (- writes it to standard output, through a temporary file in data_dir)")
		fs.precheck = func(c Config) error {
			if c.DatabaseURL != "" {
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
	db := embeddedStorePath(c)
	notes := stdout
	if out == "-" {
		// The backup is the output: the notes go to stderr.
		notes = stderr
		if err := backupToStream(ctx, c.DataDir, db, stdout); err != nil {
			return err
		}
		fmt.Fprintf(notes, "backup written to standard output (a consistent copy of %s, integrity checked)\n", db)
	} else {
		if err := sqlite.Backup(ctx, db, out); err != nil {
			return err
		}
		fmt.Fprintf(notes, "backup written: %s (a consistent copy of %s, integrity checked)\n", out, db)
	}
	where := "FACTURAD_MASTER_KEY"
	if c.MasterKey == "" {
		where = filepath.Join(c.DataDir, seal.MasterKeyFile)
	}
	fmt.Fprintf(notes, "the master key (%s) is NOT in the backup: keep a copy of it apart from the backups; "+
		"without it the sealed certificates, PINs, passwords and webhook signing secrets cannot be opened, and with it anyone holding a backup can open them\n", where)
	return nil
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
	copyPath := filepath.Join(tmp, "facturad.db")
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
