package certmint

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

func TestMint(t *testing.T) {
	t.Parallel()
	ca, err := NewCA(CAOptions{Key: TestKey(0)})
	if err != nil {
		t.Fatal(err)
	}
	nb := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		o       Options
		serial  string
		org     string
		wantErr string
	}{
		{name: "ok/juridica", o: Options{TipoIdentificacion: "02", Identificacion: "3101123456", Name: "ACME SOCIEDAD ANONIMA", PIN: "1234"}, serial: "CPJ-3-101-123456", org: "PERSONA JURIDICA"},
		{name: "ok/fisica legacy", o: Options{TipoIdentificacion: "01", Identificacion: "112345678", Name: "ANA MORA", PIN: "4321", Legacy: true}, serial: "CPF-01-1234-5678", org: "PERSONA FISICA"},
		{name: "ok/dimex", o: Options{TipoIdentificacion: "03", Identificacion: "155812345678", Name: "JOHN DOE", PIN: "1111"}, serial: "DIMEX-155812345678", org: "PERSONA FISICA"},
		{name: "ok/generated PIN", o: Options{TipoIdentificacion: "04", Identificacion: "3001234567", Name: "X"}, serial: "NITE-3001234567", org: "PERSONA FISICA"},
		{name: "error/bad type", o: Options{TipoIdentificacion: "05", Identificacion: "123", Name: "X", PIN: "1"}, wantErr: "identification type"},
		{name: "error/short cedula", o: Options{TipoIdentificacion: "02", Identificacion: "310112345", Name: "X", PIN: "1"}, wantErr: "10 digits"},
		{name: "error/no name", o: Options{TipoIdentificacion: "02", Identificacion: "3101123456", PIN: "1"}, wantErr: "Name"},
		{name: "error/inverted validity", o: Options{TipoIdentificacion: "02", Identificacion: "3101123456", Name: "X", PIN: "1", NotBefore: nb, NotAfter: nb.Add(-time.Hour)}, wantErr: "NotAfter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.o.CA = ca
			tt.o.Key = TestKey(1)
			m, err := MintCertificate(tt.o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(m.PIN) != 4 || strings.Trim(m.PIN, "0123456789") != "" {
				t.Errorf("PIN %q is not 4 digits", m.PIN)
			}
			key, leaf, chain, err := pkcs12.DecodeChain(m.P12, m.PIN)
			if err != nil {
				t.Fatal(err)
			}
			if key == nil || len(chain) != 1 || !chain[0].Equal(ca.Cert) {
				t.Fatalf("decoded key %T, chain %d", key, len(chain))
			}
			s := leaf.Subject
			if s.SerialNumber != tt.serial || s.Organization[0] != tt.org || s.Country[0] != "CR" || s.CommonName != tt.o.Name {
				t.Errorf("subject = %s", s)
			}
			if err := leaf.CheckSignatureFrom(ca.Cert); err != nil {
				t.Error(err)
			}
			if leaf.SignatureAlgorithm != x509.SHA256WithRSA {
				t.Errorf("signature algorithm %s", leaf.SignatureAlgorithm)
			}
			pool := x509.NewCertPool()
			pool.AddCert(ca.Cert)
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
				t.Errorf("chain does not verify: %v", err)
			}
		})
	}
}

func TestTestKeyStable(t *testing.T) {
	t.Parallel()
	if TestKey(2) != TestKey(2+TestKeyPoolSize) {
		t.Fatal("TestKey is not stable per slot")
	}
	if TestKey(2).Equal(TestKey(3)) {
		t.Fatal("two slots share a key")
	}
}
