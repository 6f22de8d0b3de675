package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

// TestBackupWhileWriting copies the store while another connection keeps
// creating companies: the copy opens as a store, passes the integrity
// check, holds every company created before the copy began, and is private.
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "facturad.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 20 {
		storetest.AddCompany(t, s, fmt.Sprintf("antes-%d", i))
	}

	var stop atomic.Bool
	var created atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			storetest.AddCompany(t, s, fmt.Sprintf("durante-%d", i))
			created.Add(1)
		}
	})
	for created.Load() < 5 {
		runtime.Gosched()
	}
	out := filepath.Join(t.TempDir(), "copy.db")
	err = sqlite.Backup(ctx, path, out)
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}

	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %#o, want 0600", st.Mode().Perm())
	}
	if err := sqlite.IntegrityCheck(ctx, out); err != nil {
		t.Errorf("backup: %v", err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*tmp*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	restored, err := sqlite.Open(ctx, out, sqlite.Options{})
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer restored.Close()
	for id := int64(1); id <= 20; id++ {
		c, err := restored.Company(ctx, id)
		if err != nil {
			t.Fatalf("company %d in the backup: %v", id, err)
		}
		if !strings.HasPrefix(c.RazonSocial, "antes-") {
			t.Errorf("company %d in the backup is %q", id, c.RazonSocial)
		}
	}
}

func TestBackupRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "facturad.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	existing := filepath.Join(dir, "existing.db")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, path, out, want string
	}{
		{"error/existing file is kept", path, existing, "already exists"},
		{"error/missing database", filepath.Join(dir, "missing.db"), filepath.Join(dir, "a.db"), "no such file"},
		{"error/missing folder", path, filepath.Join(dir, "nope", "a.db"), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sqlite.Backup(ctx, tt.path, tt.out)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Backup = %v, want an error with %q", err, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("the existing file was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Errorf("a backup of a missing database created it")
	}
}

// TestBackupOddNames writes backups whose names hold the characters that
// end or escape a URI path: each backup is the file named, it is the one
// checked, and no other file appears beside it.
func TestBackupOddNames(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "facturad.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.AddCompany(t, s, "raro")
	plainDir := t.TempDir() // named after this test, so without odd characters

	for i, name := range []string{"a?mode=memory.db", "b#frag.db", "c%41.db", "d%3F e.db", "f?g#h%2541.db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, name)
			if err := sqlite.Backup(ctx, path, out); err != nil {
				t.Fatalf("Backup: %v", err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].Name() != name {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Fatalf("folder holds %q, want only %q", names, name)
			}
			if err := sqlite.IntegrityCheck(ctx, out); err != nil {
				t.Errorf("IntegrityCheck: %v", err)
			}
			// A restore copies the backup to the store's own name.
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			plain := filepath.Join(plainDir, fmt.Sprintf("restored-%d.db", i))
			if err := os.WriteFile(plain, b, 0o600); err != nil {
				t.Fatal(err)
			}
			restored, err := sqlite.Open(ctx, plain, sqlite.Options{})
			if err != nil {
				t.Fatalf("open the backup: %v", err)
			}
			defer restored.Close()
			if c, err := restored.Company(ctx, 1); err != nil || c.RazonSocial != "raro" {
				t.Errorf("company 1 in the backup = %+v, %v", c, err)
			}
		})
	}
}

// TestIntegrityCheckOddNames checks that the file named is the one read:
// a damaged file whose name holds "?", "#" or "%" fails the check rather
// than some other (empty, healthy) file passing it.
func TestIntegrityCheckOddNames(t *testing.T) {
	for _, name := range []string{"x?y.db", "x#y.db", "x%41.db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(strings.Repeat("not a database ", 300)), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := sqlite.IntegrityCheck(context.Background(), p); err == nil {
				t.Fatal("IntegrityCheck of a damaged file = nil, want an error")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("the check created files: %d entries in the folder", len(entries))
			}
		})
	}
}
