package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"facturad/signer"
)

// TestMkcertKeepsItsCA mints two certificates with one test CA, kept in a
// folder made at first use, which a sandbox can then trust.
func TestMkcertKeepsItsCA(t *testing.T) {
	dir := t.TempDir()
	caDir := filepath.Join(dir, "test-ca")
	var leaves [][]byte
	for i, id := range []string{"3101123456", "3101654321"} {
		var out bytes.Buffer
		p12 := filepath.Join(dir, id+".p12")
		if err := runMkcert([]string{"-id", id, "-pin", "1234", "-out", p12, "-ca-dir", caDir}, &out, &out); err != nil {
			t.Fatal(err)
		}
		if made := strings.Contains(out.String(), "made the test CA"); made != (i == 0) {
			t.Errorf("run %d says made=%v:\n%s", i, made, out.String())
		}
		if i == 0 {
			// The hint's commands are taken as written: each flag is
			// one its command has.
			ca := filepath.Join(caDir, "ca.pem")
			for _, cmd := range [][]string{{"serve", "--sandbox-trusted-ca", ca}, {"sandbox", "--trusted-ca", ca}} {
				if !strings.Contains(out.String(), "facturad "+strings.Join(cmd, " ")) {
					t.Errorf("the hint does not give `facturad %s`:\n%s", strings.Join(cmd, " "), out.String())
				}
				if err := run(context.Background(), append(cmd, "--help"), io.Discard, io.Discard, env(nil)); !errors.Is(err, flag.ErrHelp) {
					t.Errorf("facturad %s: %v", strings.Join(cmd, " "), err)
				}
			}
		}
		raw, err := os.ReadFile(p12)
		if err != nil {
			t.Fatal(err)
		}
		leaves = append(leaves, raw)
	}
	if fi, err := os.Stat(filepath.Join(caDir, "ca-key.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the CA key: %v %v", fi, err)
	}
	roots, err := loadTrustBundle(filepath.Join(caDir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	for i, raw := range leaves {
		c, err := signer.LoadPKCS12(raw, []byte("1234"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Leaf.Verify(x509VerifyOptions(roots)); err != nil {
			t.Errorf("certificate %d does not chain to the kept CA: %v", i, err)
		}
	}
	// A folder with half a CA is an error, not a new CA.
	if err := os.Remove(filepath.Join(caDir, "ca-key.pem")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runMkcert([]string{"-id", "3101123456", "-out", filepath.Join(dir, "x.p12"), "-ca-dir", caDir}, &out, &out); err == nil {
		t.Error("a CA folder without its key made a certificate")
	}
}
