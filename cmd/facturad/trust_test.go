package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"facturad/hacienda/sandbox"
)

func TestLoadTrustBundle(t *testing.T) {
	s, err := sandbox.DefaultAnswerSigner()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pem")
	ca := s.Root()
	if err := os.WriteFile(good, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := loadTrustBundle(""); p != nil || err != nil {
		t.Errorf("no path: %v %v", p, err)
	}
	p, err := loadTrustBundle(good)
	if err != nil || p == nil {
		t.Fatalf("good bundle: %v", err)
	}
	if _, err := s.Chain[0].Verify(x509VerifyOptions(p)); err != nil {
		t.Errorf("the sandbox's answer certificate does not chain to the loaded bundle: %v", err)
	}
	for _, bad := range []string{junk, filepath.Join(dir, "missing.pem")} {
		if _, err := loadTrustBundle(bad); err == nil || !strings.Contains(err.Error(), "trust bundle") {
			t.Errorf("%s: %v, want an error naming the trust bundle", filepath.Base(bad), err)
		}
	}
}

func x509VerifyOptions(roots *x509.CertPool) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
}
