package certopen

import (
	"crypto/x509"
	"errors"
	"testing"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"facturad/signer/certmint"
	"facturad/tenant"
)

func TestOpenCertificate(t *testing.T) {
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02", Identificacion: "3101123456", Name: "EMPRESA", PIN: "1234",
		Key: certmint.TestKey(0), NotAfter: time.Now().Add(48 * time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	trustOnly, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{m.Leaf}, "1234")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		p12     []byte
		pin     string
		wantErr error
	}{
		{name: "ok/right PIN", p12: m.P12, pin: "1234"},
		{name: "error/wrong PIN", p12: m.P12, pin: "9999", wantErr: tenant.ErrCertificatePIN},
		{name: "error/no private key", p12: trustOnly, pin: "1234", wantErr: tenant.ErrCertificateNoKey},
		{name: "error/not a PKCS#12", p12: []byte("not a certificate"), pin: "1234", wantErr: tenant.ErrCertificateFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := Opener{}.OpenCertificate(tt.p12, []byte(tt.pin))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info.Identification != "3101123456" {
				t.Errorf("identification %q", info.Identification)
			}
			if !info.NotAfter.Equal(m.Leaf.NotAfter) || !info.NotBefore.Equal(m.Leaf.NotBefore) {
				t.Errorf("validity %v–%v, want %v–%v", info.NotBefore, info.NotAfter, m.Leaf.NotBefore, m.Leaf.NotAfter)
			}
		})
	}
}
