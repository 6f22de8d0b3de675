package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"facturad/hacienda/sandbox"
	"facturad/hacienda/trust"
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

// TestDefaultAnswerTrust checks which trust each environment gets without
// and with settings: the national PKI and the Ministry for staging and
// production, a configured bundle and signer instead, none for a sandbox
// reached elsewhere.
func TestDefaultAnswerTrust(t *testing.T) {
	bundle := x509.NewCertPool()
	for _, tt := range []struct {
		env, signer  string
		roots        *x509.CertPool
		wantNational bool
		wantBundle   bool
		wantSigner   string
	}{
		{env: "production", wantNational: true, wantSigner: trust.MinistryIdentification},
		{env: "staging", wantNational: true, wantSigner: trust.MinistryIdentification},
		{env: "staging", roots: bundle, wantBundle: true, wantSigner: trust.MinistryIdentification},
		{env: "production", signer: "3101123456", wantNational: true, wantSigner: "3101123456"},
		{env: "production", signer: "any", wantNational: true},
		{env: "sandbox"},
		{env: "sandbox", signer: "3101123456", wantSigner: "3101123456"},
	} {
		c := DefaultConfig()
		c.HaciendaEnv, c.HaciendaAnswerSigner = tt.env, tt.signer
		got, err := defaultAnswerTrust(c, tt.roots)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := trust.NationalPKI()
		name := tt.env + "/" + tt.signer
		switch {
		case tt.wantNational && (got.roots != n.Roots || got.intermediates != n.Intermediates):
			t.Errorf("%s: not the national PKI", name)
		case tt.wantBundle && got.roots != bundle:
			t.Errorf("%s: not the configured bundle", name)
		case !tt.wantNational && !tt.wantBundle && got.roots != nil:
			t.Errorf("%s: roots where none were configured", name)
		}
		if got.signer != tt.wantSigner {
			t.Errorf("%s: signer %q, want %q", name, got.signer, tt.wantSigner)
		}
		if real := tt.env != "sandbox"; (got.suppliers == n) != real {
			t.Errorf("%s: suppliers checked against the national PKI: %v, want %v", name, got.suppliers == n, real)
		}
	}
}

// trustSandbox returns the flags that make a service of hacienda_env
// staging trust the answers of sb, a sandbox standing in for the tax
// authority, as staging trusts the tax authority's: its authority (in a
// bundle file) and its identification.
func trustSandbox(t *testing.T, sb *sandbox.TestServer) []string {
	t.Helper()
	return trustSandboxes(t, sb)
}

// sandboxService returns the flags of a service in staging whose tax
// authority is sb (its endpoints, trusted), with the end-to-end tests'
// bootstrap admin.
func sandboxService(t *testing.T, sb *sandbox.TestServer) []string {
	t.Helper()
	return append([]string{
		"--hacienda-env", "staging", "--hacienda-api-url", sb.APIURL, "--hacienda-token-url", sb.TokenURL,
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken},
		trustSandbox(t, sb)...)
}
