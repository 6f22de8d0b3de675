package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"facturad/hacienda/sandbox"
	"facturad/hacienda/sandbox/sqlitestate"
	"facturad/signer/certmint"
	"facturad/tenant/seal"
	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

// acked is a document the service acknowledged, and when the answer came.
type acked struct {
	id, clave, consecutivo string
	at                     time.Time
}

// TestBackupUnderLoadRestores takes a backup of the embedded store while
// clients keep sending documents to the service (another process), then
// restores it into a fresh data folder with the same master key and starts
// the service on it: every document acknowledged before the backup began is
// there with its clave and numbering, and the copy passes the integrity
// check.
func TestBackupUnderLoadRestores(t *testing.T) {
	notQuick(t, "a load drill")
	dir := t.TempDir()
	args := []string{"--data-dir", dir,
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken}
	svc := startChild(t, nil, args...)
	admin := apiClient{t: t, base: "http://" + svc.api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, admin, ca, "3101123456")
	body := sendRequests(t, "bk")[0]

	var (
		mu      sync.Mutex
		done    []acked
		stop    atomic.Bool
		wg      sync.WaitGroup
		seq     atomic.Int64
		failure atomic.Value
	)
	hc := &http.Client{Timeout: 30 * time.Second}
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				id := fmt.Sprintf("bk-%05d", seq.Add(1))
				b := bytes.Replace(body, []byte(`"bk-0"`), []byte(`"`+id+`"`), 1)
				status, _, answer, err := branch.try(hc, branch.base, "POST", "/api/documents/v4", "application/json", b)
				if err != nil || status != 200 {
					failure.CompareAndSwap(nil, fmt.Sprintf("send %s: %d %v %s", id, status, err, answer))
					return
				}
				var d document
				if err := json.Unmarshal(answer, &d); err != nil || len(d.Clave) != 50 {
					failure.CompareAndSwap(nil, fmt.Sprintf("send %s: %v %s", id, err, answer))
					return
				}
				mu.Lock()
				done = append(done, acked{id: id, clave: d.Clave, consecutivo: d.Consecutivo, at: time.Now()})
				mu.Unlock()
			}
		})
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(done) }
	for deadline := time.Now().Add(60 * time.Second); count() < 20; {
		if time.Now().After(deadline) || failure.Load() != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("only %d documents sent before the backup: %v", count(), failure.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}

	out := filepath.Join(t.TempDir(), "facturad-backup.db")
	began := time.Now()
	var printed bytes.Buffer
	err = run(context.Background(), []string{"backup", "--data-dir", dir, "--out", out}, &printed, io.Discard, func(string) string { return "" })
	ended := time.Now()
	if err != nil {
		stop.Store(true)
		wg.Wait()
		t.Fatalf("backup: %v", err)
	}
	// Keep sending a little after the copy, then stop.
	for afterwards := count(); count() < afterwards+20 && time.Since(ended) < 30*time.Second && failure.Load() == nil; {
		time.Sleep(20 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if f := failure.Load(); f != nil {
		t.Fatal(f)
	}
	svc.kill()
	if !strings.Contains(printed.String(), "master key") || !strings.Contains(printed.String(), "NOT in the backup") {
		t.Errorf("backup output does not warn about the master key:\n%s", printed.String())
	}

	var before, during, after int
	for _, d := range done {
		switch {
		case d.at.Before(began):
			before++
		case d.at.Before(ended):
			during++
		default:
			after++
		}
	}
	t.Logf("acknowledged %d documents before the backup, %d during it (%v), %d after it",
		before, during, ended.Sub(began).Round(time.Millisecond), after)

	// Restore: the copy as the database of a fresh folder, the same key.
	if err := sqlite.IntegrityCheck(context.Background(), out); err != nil {
		t.Fatalf("backup: %v", err)
	}
	restored := t.TempDir()
	copyFile(t, out, filepath.Join(restored, "facturad.db"))
	copyFile(t, filepath.Join(dir, seal.MasterKeyFile), filepath.Join(restored, seal.MasterKeyFile))
	again := startChild(t, nil, "--data-dir", restored,
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
	branch.base = "http://" + again.api
	found := 0
	for _, d := range done {
		status, _, answer, err := branch.try(hc, branch.base, "GET", "/api/documents/"+d.clave+"/v4", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !d.at.Before(began) {
			if status == 200 {
				found++
			}
			continue
		}
		var got document
		if status != 200 || json.Unmarshal(answer, &got) != nil {
			t.Errorf("%s (acknowledged before the backup): %d %s", d.id, status, answer)
			continue
		}
		if got.IDExterno != d.id || got.Consecutivo != d.consecutivo || got.Estado == "" {
			t.Errorf("%s restored as %+v, acknowledged with clave %s consecutivo %s", d.id, got, d.clave, d.consecutivo)
		}
	}
	// Those acknowledged once the copy had begun may or may not be in it.
	t.Logf("of the %d acknowledged after the backup began, %d are in it", during+after, found)
	if status, answer := branch.do("POST", "/api/documents/v4", "application/json",
		bytes.Replace(body, []byte(`"bk-0"`), []byte(`"after-restore"`), 1)); status != 200 {
		t.Errorf("send on the restored store: %d %s", status, answer)
	}
}

// TestBackupRefuses checks what the backup command will not do.
func TestBackupRefuses(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.db")
	if err := os.WriteFile(existing, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, "facturad.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"error/no out", []string{"--data-dir", dir}, "--out FILE is required"},
		{"error/existing out", []string{"--data-dir", dir, "--out", existing}, "already exists"},
		{"error/postgres", []string{"--database-url", "postgres://db/facturad", "--master-key", masterKey(t), "--out", filepath.Join(dir, "x")}, "pg_dump"},
		{"error/postgres without a master key", []string{"--database-url", "postgres://db/facturad", "--out", filepath.Join(dir, "x")}, "pg_dump"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), append([]string{"backup"}, tt.args...), io.Discard, io.Discard, func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("backup = %v, want an error with %q", err, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep" {
		t.Errorf("the existing file was changed")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestBackupToStandardOutput takes a backup with --out -: standard output
// is the database alone (the notes go to stderr), it holds the store's
// companies and passes the integrity check, and the temporary copy in
// data_dir is gone afterwards.
func TestBackupToStandardOutput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "facturad.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"uno", "dos"} {
		storetest.AddCompany(t, s, name)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var out, notes bytes.Buffer
	if err := run(ctx, []string{"backup", "--data-dir", dir, "--out", "-"}, &out, &notes, func(string) string { return "" }); err != nil {
		t.Fatalf("backup --out -: %v\n%s", err, notes.String())
	}
	if !bytes.HasPrefix(out.Bytes(), []byte("SQLite format 3\x00")) {
		t.Fatalf("standard output does not start with a SQLite header: %q", out.Bytes()[:min(32, out.Len())])
	}
	if !strings.Contains(notes.String(), "master key") || !strings.Contains(notes.String(), "standard output") {
		t.Errorf("notes on stderr:\n%s", notes.String())
	}
	for _, name := range dirEntries(t, dir) {
		if strings.HasPrefix(name, ".backup-") {
			t.Errorf("temporary copy left in data_dir: %s", name)
		}
	}

	restored := filepath.Join(t.TempDir(), "facturad.db")
	if err := os.WriteFile(restored, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sqlite.IntegrityCheck(ctx, restored); err != nil {
		t.Fatal(err)
	}
	r, err := sqlite.Open(ctx, restored, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for id, want := range map[int64]string{1: "uno", 2: "dos"} {
		if c, err := r.Company(ctx, id); err != nil || c.RazonSocial != want {
			t.Errorf("company %d in the backup = %q, %v; want %q", id, c.RazonSocial, err, want)
		}
	}
}

// TestBackupCopiesTheSandbox: a backup of a running service's data folder,
// whose built-in sandbox has accepted an invoice, holds the sandbox's
// state beside the store; restored into a fresh folder (the store's copy
// as facturad.db, the sandbox's as sandbox.db, the same master key), the
// built-in sandbox still answers the invoice's status and accepts a credit
// note about it.
func TestBackupCopiesTheSandbox(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--log-level", "info", "--sandbox-processing-delay", "0",
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken}
	svc := startChild(t, nil, append([]string{"--data-dir", dir}, args...)...)
	branch, fe, bodies := acceptedInvoice(t, svc.api, "bksb")

	out := filepath.Join(t.TempDir(), "facturad-backup.db")
	sbOut := filepath.Join(filepath.Dir(out), "facturad-backup.sandbox.sqlite")
	var printed bytes.Buffer
	if err := run(context.Background(), []string{"backup", "--data-dir", dir, "--out", out}, &printed, io.Discard, func(string) string { return "" }); err != nil {
		t.Fatalf("backup: %v", err)
	}
	svc.kill()
	if !strings.Contains(printed.String(), "backup written: "+sbOut) {
		t.Errorf("the backup does not say where the sandbox's state went:\n%s", printed.String())
	}
	for _, f := range []string{out, sbOut} {
		if err := sqlite.IntegrityCheck(context.Background(), f); err != nil {
			t.Fatalf("backup: %v", err)
		}
	}

	restored := t.TempDir()
	copyFile(t, out, filepath.Join(restored, "facturad.db"))
	copyFile(t, sbOut, filepath.Join(restored, "sandbox.db"))
	copyFile(t, filepath.Join(dir, seal.MasterKeyFile), filepath.Join(restored, seal.MasterKeyFile))
	again := startChild(t, nil, append([]string{"--data-dir", restored}, args...)...)
	branch.base = "http://" + again.api
	if code, estado := sandboxStatus(t, again, fe.Clave); code != 200 || estado != "aceptado" {
		t.Errorf("the restored sandbox's status of the invoice accepted before the backup: %d %q", code, estado)
	}
	var nc document
	branch.json("POST", "/api/documents/v4", referTo(bodies[2], fe.Clave), 200, &nc)
	if got := branch.checkUntilVerdict(nc.Clave, ""); got.Estado != "01" {
		t.Errorf("a credit note about the invoice accepted before the backup: %+v", got)
	}
}

// TestBackupSandboxFiles checks where each form of the backup command puts
// the sandbox's state of a data folder (data_dir/sandbox.db), and what it
// refuses: --out FILE writes FILE.sandbox.sqlite (FILE less its .db) beside FILE, --out - the
// store alone (and says how to get the rest), --sandbox the sandbox's
// state alone; a folder without one gets no such file.
func TestBackupSandboxFiles(t *testing.T) {
	ctx := context.Background()
	withSandbox, storeOnly := t.TempDir(), t.TempDir()
	for _, dir := range []string{withSandbox, storeOnly} {
		s, err := sqlite.Open(ctx, filepath.Join(dir, "facturad.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		storetest.AddCompany(t, s, "uno")
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	keptSandbox(t, withSandbox, "50601")

	// isStore and isSandbox check a copy: the store's company, or the
	// sandbox's document.
	isStore := func(t *testing.T, path string) {
		t.Helper()
		r, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if c, err := r.Company(ctx, 1); err != nil || c.RazonSocial != "uno" {
			t.Errorf("%s: company 1 = %q, %v; want the store's copy", path, c.RazonSocial, err)
		}
	}
	isSandbox := func(t *testing.T, path string) {
		t.Helper()
		r, err := sqlitestate.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if recs, err := r.Load(ctx); err != nil || len(recs) != 1 || recs[0].Key != "50601" {
			t.Errorf("%s: %+v, %v; want the sandbox's document", path, recs, err)
		}
	}
	const (
		stdout = "-"
		file   = "b.db"
	)
	tests := []struct {
		name string
		dir  string
		args []string
		// files are what the run leaves in its output folder, each with its
		// check; "-" is standard output.
		files map[string]func(*testing.T, string)
		note  string
	}{
		{"ok/file", withSandbox, []string{"--out", file},
			map[string]func(*testing.T, string){file: isStore, "b.sandbox.sqlite": isSandbox}, "b.sandbox.sqlite (a consistent copy of the built-in sandbox's state"},
		{"ok/file without .db", withSandbox, []string{"--out", "b"},
			map[string]func(*testing.T, string){"b": isStore, "b.sandbox.sqlite": isSandbox}, "b.sandbox.sqlite"},
		{"ok/standard output", withSandbox, []string{"--out", stdout},
			map[string]func(*testing.T, string){stdout: isStore}, "`facturad backup --sandbox --out -` writes a copy of it"},
		{"ok/sandbox to standard output", withSandbox, []string{"--sandbox", "--out", stdout},
			map[string]func(*testing.T, string){stdout: isSandbox}, "backup written: standard output (a consistent copy of the sandbox's state"},
		{"ok/sandbox to a file", withSandbox, []string{"--sandbox", "--out", file},
			map[string]func(*testing.T, string){file: isSandbox}, "a consistent copy of the sandbox's state"},
		{"ok/no sandbox", storeOnly, []string{"--out", file},
			map[string]func(*testing.T, string){file: isStore}, "the master key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outDir := t.TempDir()
			args := []string{"backup", "--data-dir", tt.dir}
			for i, a := range tt.args {
				if i > 0 && tt.args[i-1] == "--out" && a != stdout {
					a = filepath.Join(outDir, a)
				}
				args = append(args, a)
			}
			var out, notes bytes.Buffer
			if err := run(ctx, args, &out, &notes, func(string) string { return "" }); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, notes.String())
			}
			if check, ok := tt.files[stdout]; ok {
				f := filepath.Join(outDir, "stdout.db")
				if err := os.WriteFile(f, out.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
				check(t, f)
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			} else {
				notes.Write(out.Bytes())
			}
			want := len(tt.files)
			if _, ok := tt.files[stdout]; ok {
				want--
			}
			if got := dirEntries(t, outDir); len(got) != want {
				t.Errorf("files written: %v, want %d", got, want)
			}
			for name, check := range tt.files {
				if name != stdout {
					check(t, filepath.Join(outDir, name))
				}
			}
			if !strings.Contains(notes.String(), tt.note) {
				t.Errorf("notes do not say %q:\n%s", tt.note, notes.String())
			}
			if tt.dir == storeOnly && (strings.Contains(notes.String(), "sandbox's state") || strings.Contains(notes.String(), "sandbox.db")) {
				t.Errorf("notes speak of a sandbox the folder has not:\n%s", notes.String())
			}
		})
	}

	t.Run("error/the sandbox's copy exists", func(t *testing.T) {
		outDir := t.TempDir()
		existing := filepath.Join(outDir, "b.sandbox.sqlite")
		if err := os.WriteFile(existing, []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
		err := run(ctx, []string{"backup", "--data-dir", withSandbox, "--out", filepath.Join(outDir, "b.db")}, io.Discard, io.Discard, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), "b.sandbox.sqlite already exists") {
			t.Fatalf("backup = %v, want an error saying b.sandbox.sqlite exists", err)
		}
		if got := dirEntries(t, outDir); len(got) != 1 {
			t.Errorf("files in the output folder: %v, want the existing one alone", got)
		}
		if b, _ := os.ReadFile(existing); string(b) != "keep" {
			t.Errorf("the existing file was changed")
		}
	})
	t.Run("error/a sandbox's folder without --sandbox", func(t *testing.T) {
		dir, outDir := t.TempDir(), t.TempDir()
		only, err := sqlitestate.Open(ctx, filepath.Join(dir, "sandbox.db"))
		if err != nil {
			t.Fatal(err)
		}
		if err := only.Close(); err != nil {
			t.Fatal(err)
		}
		err = run(ctx, []string{"backup", "--data-dir", dir, "--out", filepath.Join(outDir, "b.db")}, io.Discard, io.Discard, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), "facturad backup --sandbox") {
			t.Fatalf("backup = %v, want an error pointing at --sandbox", err)
		}
		if got := dirEntries(t, outDir); len(got) != 0 {
			t.Errorf("files written: %v", got)
		}
	})
	t.Run("error/--sandbox without a sandbox", func(t *testing.T) {
		outDir := t.TempDir()
		err := run(ctx, []string{"backup", "--data-dir", storeOnly, "--sandbox", "--out", filepath.Join(outDir, "b.db")}, io.Discard, io.Discard, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), "sandbox.db does not exist") {
			t.Fatalf("backup = %v, want an error saying there is no sandbox.db", err)
		}
		if got := dirEntries(t, outDir); len(got) != 0 {
			t.Errorf("files written: %v", got)
		}
	})
}

// TestBackupSandboxFails: when the sandbox's copy fails (its file is no
// database), the store's copy, already taken, is removed, the command
// fails saying nothing was written, and no note says a backup was.
func TestBackupSandboxFails(t *testing.T) {
	ctx := context.Background()
	dir, outDir := t.TempDir(), t.TempDir()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "facturad.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.AddCompany(t, s, "uno")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sandbox.db"), bytes.Repeat([]byte("not a database "), 512), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, notes bytes.Buffer
	err = run(ctx, []string{"backup", "--data-dir", dir, "--out", filepath.Join(outDir, "b.db")}, &out, &notes, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("backup = %v, want an error saying nothing was written", err)
	}
	if got := dirEntries(t, outDir); len(got) != 0 {
		t.Errorf("files left in the output folder: %v, want none", got)
	}
	if all := out.String() + notes.String(); strings.Contains(all, "backup written") {
		t.Errorf("a failed backup says one was written:\n%s", all)
	}
}

// TestSandboxBackupPath checks the name of the sandbox's copy beside a
// backup FILE: never one a facturad-*.db pattern of store backups matches.
func TestSandboxBackupPath(t *testing.T) {
	tests := []struct{ out, want string }{
		{"facturad-20260101T000000.db", "facturad-20260101T000000.sandbox.sqlite"},
		{"/backups/facturad.db", "/backups/facturad.sandbox.sqlite"},
		{"b", "b.sandbox.sqlite"},
		{"b.sqlite", "b.sqlite.sandbox.sqlite"},
		{"b.db.db", "b.db.sandbox.sqlite"},
	}
	for _, tt := range tests {
		got := sandboxBackupPath(tt.out)
		if got != tt.want {
			t.Errorf("sandboxBackupPath(%q) = %q, want %q", tt.out, got, tt.want)
		}
		if strings.HasSuffix(got, ".db") {
			t.Errorf("sandboxBackupPath(%q) = %q ends in .db, as a store's backup", tt.out, got)
		}
		if ok, _ := filepath.Match("facturad-*.db", filepath.Base(got)); ok {
			t.Errorf("sandboxBackupPath(%q) = %q matches facturad-*.db", tt.out, got)
		}
	}
}

// TestBackupSandboxWithDatabaseURL: --sandbox copies a sandbox's folder
// (one without a store) although database_url is set, from the variable or
// the flag, as in the environment of a service on PostgreSQL (which has a
// master key): the store is not read. Without --sandbox the same settings
// are still refused.
func TestBackupSandboxWithDatabaseURL(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	keptSandbox(t, dir, "50602")
	const pg = "postgres://facturad@db/facturad"
	tests := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"variable", nil, map[string]string{"FACTURAD_DATABASE_URL": pg, "FACTURAD_MASTER_KEY": masterKey(t)}},
		{"flag", []string{"--database-url", pg, "--master-key", masterKey(t)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "sb.sqlite")
			args := append([]string{"backup", "--sandbox", "--data-dir", dir, "--out", out}, tt.args...)
			var notes bytes.Buffer
			if err := run(ctx, args, &notes, &notes, env(tt.env)); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			r, err := sqlitestate.Open(ctx, out)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if recs, err := r.Load(ctx); err != nil || len(recs) != 1 || recs[0].Key != "50602" {
				t.Errorf("the copy holds %+v, %v; want the sandbox's document", recs, err)
			}
			if !strings.Contains(notes.String(), "backup written: "+out) {
				t.Errorf("notes do not say where the copy went:\n%s", notes.String())
			}

			args = append([]string{"backup", "--data-dir", dir, "--out", filepath.Join(outDir, "store.db")}, tt.args...)
			if err := run(ctx, args, io.Discard, io.Discard, env(tt.env)); err == nil || !strings.Contains(err.Error(), "pg_dump") {
				t.Errorf("without --sandbox: %v, want the refusal pointing at pg_dump", err)
			}
		})
	}
}

// keptSandbox makes dir a sandbox's folder whose sandbox.db has received
// the document key. The file is left open until the test ends: a backup
// copies it live, its WAL included.
func keptSandbox(t *testing.T, dir, key string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlitestate.Open(ctx, filepath.Join(dir, "sandbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Receive(ctx, sandbox.Record{Key: key, Doc: []byte(`{}`), XML: []byte("<x/>")}, nil); err != nil {
		t.Fatal(err)
	}
}
