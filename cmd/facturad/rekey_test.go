package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"facturad/signer/certmint"
	"facturad/tenant/seal"
	"facturad/tenant/sqlite"
)

// TestRekeyEndToEnd rotates the master key of a running service: a company
// with a certificate and a generated API user, created under the old key,
// keeps working while replicas run with both keys, through an online
// rekey, and after a restart with the new key alone.
func TestRekeyEndToEnd(t *testing.T) {
	notQuick(t, "an end-to-end drill (the Quick start runs one)")
	t.Run("embedded", func(t *testing.T) { rekeyEndToEnd(t, nil) })
	t.Run("postgres", func(t *testing.T) { rekeyEndToEnd(t, []string{"--database-url", postgresSchema(t)}) })
}

// rekeyEndToEnd runs the rotation on the store that storeArgs select.
func rekeyEndToEnd(t *testing.T, storeArgs []string) {
	dir := t.TempDir()
	oldKey, newKey := masterKey(t), masterKey(t)
	admin := append([]string{"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken}, storeArgs...)
	noEnv := func(string) string { return "" }

	_, api, _, stop := startService(t, dir, append([]string{"--master-key", oldKey}, admin...)...)
	adminClient := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, adminClient, ca, "3101123456")
	bodies := sendRequests(t, "rk")
	send := func(id string) string {
		t.Helper()
		var d document
		branch.json("POST", "/api/documents/v4", bytes.Replace(bodies[0], []byte(`"rk-0"`), []byte(`"`+id+`"`), 1), 200, &d)
		if len(d.Clave) != 50 || (d.Estado != "04" && d.Estado != "01") {
			t.Fatalf("send %s: %+v", id, d)
		}
		return d.Clave
	}
	first := send("under-old-key")
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Rolling: the new key with the old one as previous.
	_, api, _, stop = startService(t, dir, append([]string{"--master-key", newKey, "--master-key-previous", oldKey}, admin...)...)
	branch.base = "http://" + api
	send("while-rotating")

	// The rekey runs while the service serves.
	var out bytes.Buffer
	rekey := append([]string{"rekey", "--data-dir", dir, "--master-key", newKey, "--master-key-previous", oldKey}, storeArgs...)
	if err := run(context.Background(), rekey, &out, io.Discard, noEnv); err != nil {
		t.Fatalf("rekey: %v\n%s", err, out.String())
	}
	// One company and the four derived keys.
	if !strings.Contains(out.String(), "5 rows re-wrapped under the new master key, 0 already under it, 0 failed; companies seen: 1, stored keys seen: 4, webhooks seen: 0") {
		t.Errorf("rekey output:\n%s", out.String())
	}
	send("after-rekey")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(context.Background(), rekey, &out, io.Discard, noEnv); err != nil {
		t.Fatalf("second rekey: %v", err)
	}
	if !strings.Contains(out.String(), "0 rows re-wrapped under the new master key, 5 already under it") {
		t.Errorf("second rekey output:\n%s", out.String())
	}

	// The new key alone: the generated API user still authenticates (its
	// password's HMAC key did not change) and documents still sign.
	_, api, _, stop = startService(t, dir, append([]string{"--master-key", newKey}, admin...)...)
	defer stop()
	branch.base = "http://" + api
	var d document
	branch.json("GET", "/api/documents/"+first+"/v4", nil, 200, &d)
	if d.IDExterno != "under-old-key" {
		t.Errorf("read after the rotation: %+v", d)
	}
	send("new-key-only")

	// The old key alone no longer opens anything: the service refuses to
	// start rather than fail every signature.
	err = run(context.Background(), append([]string{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
		"--data-dir", dir, "--master-key", oldKey}, storeArgs...), io.Discard, io.Discard, noEnv)
	if err == nil || !strings.Contains(err.Error(), "derived keys") {
		t.Errorf("serve with the old key alone = %v, want a refusal naming the derived keys", err)
	}
}

// TestRekeyRefuses checks the settings and the store a rekey needs, and
// that a refused rekey leaves data_dir as it found it: no master.key, no
// store, no folder.
func TestRekeyRefuses(t *testing.T) {
	const key = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	newKey, oldKey := masterKey(t), masterKey(t)
	// A store the service never ran on: the schema, no company, no key.
	empty := t.TempDir()
	s, err := sqlite.Open(context.Background(), filepath.Join(empty, "facturad.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The old key in master.key, as the embedded store keeps it.
	withKeyFile := t.TempDir()
	if err := os.WriteFile(filepath.Join(withKeyFile, seal.MasterKeyFile), []byte(oldKey), 0o600); err != nil {
		t.Fatal(err)
	}
	mistyped := filepath.Join(t.TempDir(), "mistyped")

	tests := []struct {
		name string
		dir  string
		args []string
		want string
	}{
		{"error/no previous key", t.TempDir(), []string{"--master-key", key}, "FACTURAD_MASTER_KEY_PREVIOUS is not set: set --master-key to the new key"},
		{"error/previous is current", t.TempDir(), []string{"--master-key", key, "--master-key-previous", key}, "--master-key-previous: is the same as --master-key"},
		{"error/previous not a key", t.TempDir(), []string{"--master-key-previous", "c2hvcnQ="}, "exactly 32 bytes"},
		{"error/no master key", t.TempDir(), []string{"--master-key-previous", oldKey}, "FACTURAD_MASTER_KEY is not set"},
		{"error/master.key is not read", withKeyFile, []string{"--master-key-previous", oldKey}, "FACTURAD_MASTER_KEY is not set"},
		{"error/no store", t.TempDir(), []string{"--master-key", newKey, "--master-key-previous", oldKey}, "facturad.db: no such file"},
		{"error/mistyped data dir", mistyped, []string{"--master-key", newKey, "--master-key-previous", oldKey}, "no such file"},
		{"error/store never served", empty, []string{"--master-key", newKey, "--master-key-previous", oldKey}, "no company and no stored key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := dirEntries(t, tt.dir)
			var out bytes.Buffer
			err := run(context.Background(), append([]string{"rekey", "--data-dir", tt.dir}, tt.args...), &out, io.Discard, func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("rekey = %v, want an error with %q", err, tt.want)
			}
			if strings.Contains(out.String(), "done") {
				t.Errorf("a refused rekey printed:\n%s", out.String())
			}
			if after := dirEntries(t, tt.dir); !slices.Equal(before, after) {
				t.Errorf("data_dir held %q before the rekey and %q after", before, after)
			}
		})
	}
}

// dirEntries lists the names in dir, nil when dir does not exist.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
