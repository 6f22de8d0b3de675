package signer

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"strings"
	"testing"
	"time"

	"facturad/signer/certmint"
)

func TestLoadPKCS12(t *testing.T) {
	t.Parallel()
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(0)})
	if err != nil {
		t.Fatal(err)
	}
	mint := func(t *testing.T, o certmint.Options) []byte {
		t.Helper()
		o.CA = ca
		if o.Key == nil {
			o.Key = certmint.TestKey(1)
		}
		if o.Name == "" {
			o.Name = "EMPRESA DE PRUEBA SOCIEDAD ANONIMA"
		}
		if o.TipoIdentificacion == "" {
			o.TipoIdentificacion, o.Identificacion = "02", "3101123456"
		}
		p12, err := certmint.Mint(o)
		if err != nil {
			t.Fatal(err)
		}
		return p12
	}
	modern := mint(t, certmint.Options{PIN: "1234"})
	legacy := mint(t, certmint.Options{PIN: "5678", Legacy: true})
	noChain := mint(t, certmint.Options{PIN: "1234", OmitChain: true})
	fisica := mint(t, certmint.Options{PIN: "0007", TipoIdentificacion: "01", Identificacion: "112345678", Name: "MARIA PEREZ SOTO"})

	tests := []struct {
		name      string
		p12       []byte
		pin       string
		wantErr   error
		wantID    string
		wantChain int
	}{
		{name: "ok/modern AES", p12: modern, pin: "1234", wantID: "3101123456", wantChain: 1},
		{name: "ok/legacy RC2 and 3DES", p12: legacy, pin: "5678", wantID: "3101123456", wantChain: 1},
		{name: "ok/no chain", p12: noChain, pin: "1234", wantID: "3101123456", wantChain: 0},
		{name: "ok/cedula fisica", p12: fisica, pin: "0007", wantID: "112345678", wantChain: 1},
		{name: "error/wrong PIN modern", p12: modern, pin: "9999", wantErr: ErrWrongPIN},
		{name: "error/wrong PIN legacy", p12: legacy, pin: "1234", wantErr: ErrWrongPIN},
		{name: "error/empty PIN", p12: modern, pin: "", wantErr: ErrWrongPIN},
		{name: "error/invalid UTF-8 PIN", p12: modern, pin: "\xff\xfe", wantErr: ErrWrongPIN},
		{name: "error/not PKCS12 text", p12: []byte("hello, this is not a certificate"), pin: "1234", wantErr: ErrNotPKCS12},
		{name: "error/not PKCS12 empty", p12: nil, pin: "1234", wantErr: ErrNotPKCS12},
		{name: "error/not PKCS12 truncated", p12: modern[:len(modern)/2], pin: "1234", wantErr: ErrNotPKCS12},
		{name: "error/not PKCS12 certificate DER", p12: ca.Cert.Raw, pin: "1234", wantErr: ErrNotPKCS12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadPKCS12(tt.p12, []byte(tt.pin))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if tt.pin != "" && strings.Contains(err.Error(), tt.pin) {
					t.Fatalf("error %q echoes the PIN", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			id, err := c.Identification()
			if err != nil {
				t.Fatal(err)
			}
			if id != tt.wantID {
				t.Errorf("Identification = %q, want %q", id, tt.wantID)
			}
			if len(c.Chain) != tt.wantChain {
				t.Errorf("len(Chain) = %d, want %d", len(c.Chain), tt.wantChain)
			}
			if tt.wantChain > 0 && !c.Chain[0].Equal(ca.Cert) {
				t.Error("Chain[0] is not the CA")
			}
			if err := c.Leaf.CheckSignatureFrom(ca.Cert); err != nil {
				t.Errorf("leaf not signed by CA: %v", err)
			}
		})
	}
}

func TestLoadPKCS12NoPrivateKey(t *testing.T) {
	t.Parallel()
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(0)})
	if err != nil {
		t.Fatal(err)
	}
	// A trust store: certificates only, no key bag.
	p12, err := pkcs12TrustStore(ca.Cert, "1234")
	if err != nil {
		t.Fatal(err)
	}
	_, err = LoadPKCS12(p12, []byte("1234"))
	if !errors.Is(err, ErrNoPrivateKey) {
		t.Fatalf("err = %v, want ErrNoPrivateKey", err)
	}
}

func TestCheckValidity(t *testing.T) {
	t.Parallel()
	nb := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	na := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &Certificate{Leaf: &x509.Certificate{NotBefore: nb, NotAfter: na}}
	for _, tt := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"ok/inside", nb.AddDate(1, 0, 0), true},
		{"ok/first instant", nb, true},
		{"ok/last instant", na, true},
		{"error/not yet valid", nb.Add(-time.Second), false},
		{"error/expired", na.Add(time.Second), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := c.CheckValidity(tt.at)
			if tt.ok != (err == nil) || (!tt.ok && !errors.Is(err, ErrCertificateExpired)) {
				t.Fatalf("CheckValidity(%s) = %v", tt.at, err)
			}
		})
	}
}

func TestParseIdentification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in   string
		tipo, want string
	}{
		{"ok/CPJ", "CPJ-3-101-123456", "02", "3101123456"},
		{"ok/CPF province padded", "CPF-01-1234-5678", "01", "112345678"},
		{"ok/CPF national PKI example", "CPF-01-1302-0487", "01", "113020487"},
		{"ok/CPF unpadded", "CPF-1-1234-5678", "01", "112345678"},
		{"ok/lower case prefix", "cpj-3-101-261506", "02", "3101261506"},
		{"ok/DIMEX 12", "DIMEX-155812345678", "03", "155812345678"},
		{"ok/DIDI 11", "DIDI-15581234567", "03", "15581234567"},
		{"ok/NITE", "NITE-3001234567", "04", "3001234567"},
		{"error/no prefix", "3101123456", "", ""},
		{"error/unknown prefix", "XYZ-3101123456", "", ""},
		{"error/CPJ short", "CPJ-3-101-12345", "", ""},
		{"error/CPF too long", "CPF-01-1234-56789", "", ""},
		{"error/letters", "CPJ-3-1O1-123456", "", ""},
		{"error/empty", "", "", ""},
		{"error/DIMEX leading zero", "DIMEX-055812345678", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := ParseIdentification(tt.in)
			if tt.want == "" {
				if !errors.Is(err, ErrNoIdentification) {
					t.Fatalf("ParseIdentification(%q) = %+v, %v; want ErrNoIdentification", tt.in, id, err)
				}
				return
			}
			if err != nil || id.Tipo != tt.tipo || id.Numero != tt.want {
				t.Fatalf("ParseIdentification(%q) = %+v, %v; want %s %s", tt.in, id, err, tt.tipo, tt.want)
			}
			// Round trip through the minting side.
			s, err := certmint.SubjectSerialNumber(id.Tipo, id.Numero)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseIdentification(s)
			if err != nil || back != id {
				t.Fatalf("round trip %q -> %q -> %+v, %v", tt.in, s, back, err)
			}
		})
	}
}

func TestIdentificationFromOU(t *testing.T) {
	t.Parallel()
	cert := &x509.Certificate{Subject: pkix.Name{OrganizationalUnit: []string{"DGT", "CPJ-3-101-654321"}}}
	id, err := CertificateIdentification(cert)
	if err != nil || id.Numero != "3101654321" {
		t.Fatalf("got %+v, %v", id, err)
	}
	if _, err := CertificateIdentification(&x509.Certificate{}); !errors.Is(err, ErrNoIdentification) {
		t.Fatalf("empty subject: err = %v", err)
	}
}
