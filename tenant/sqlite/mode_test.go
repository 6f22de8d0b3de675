package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The database file and its -wal and -shm companions hold sealed secrets
// and every tenant's documents: owner only, like the master key.
func TestFilesArePrivate(t *testing.T) {
	ctx := context.Background()
	for _, existing := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "facturad.db")
		if existing {
			// A file left readable by an earlier version is narrowed.
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// A write makes the WAL and its index exist.
		if _, err := s.write.ExecContext(ctx, `CREATE TABLE mode_probe (x INTEGER)`); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatalf("existing %v: %v", existing, err)
			}
			if m := st.Mode().Perm(); m&0o077 != 0 {
				t.Errorf("existing %v: %s has mode %v, want no access for group or others", existing, filepath.Base(p), m)
			}
		}
		s.Close()
	}
}
