package signer

import (
	"bytes"
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"facturad/signer/certmint"
)

// signAt signs smallDoc with m's key and chain at t.
func signAt(t *testing.T, m *certmint.Minted, at time.Time) []byte {
	t.Helper()
	out, err := Sign(smallDoc, m.Key, []*x509.Certificate{m.Leaf, m.CA.Cert}, PolicyV44, WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVerifyCache: a cached chain saves the parse and the chain building
// of a signer seen before, and never lets through what a verification
// without the cache refuses: another pool of roots, a signer from another
// authority, a signing time at which a link of the cached chain was not
// valid.
func TestVerifyCache(t *testing.T) {
	t.Parallel()
	// An authority that expires before the certificates it issued.
	caEnd := goldenTime.AddDate(0, 6, 0)
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(7), NotBefore: goldenTime.AddDate(-1, 0, 0), NotAfter: caEnd})
	if err != nil {
		t.Fatal(err)
	}
	other, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(8), NotBefore: goldenTime.AddDate(-1, 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	mint := func(ca *certmint.CA, key int) *certmint.Minted {
		m, err := certmint.MintCertificate(certmint.Options{
			TipoIdentificacion: "02", Identificacion: "3101123456", Name: "EMPRESA DE PRUEBA", PIN: "1234",
			NotBefore: goldenTime.AddDate(-1, 0, 0), NotAfter: goldenTime.AddDate(2, 0, 0), CA: ca, Key: certmint.TestKey(key),
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	trusted, stranger := mint(ca, 1), mint(other, 2)
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	otherRoots := x509.NewCertPool()
	otherRoots.AddCert(other.Cert)

	good := signAt(t, trusted, goldenTime)
	cache := NewVerifyCache(0)
	for i := range 2 {
		if _, err := VerifyWith(good, VerifyOptions{Roots: roots, Cache: cache}); err != nil {
			t.Fatalf("verification %d with the cache: %v", i+1, err)
		}
	}
	if len(cache.chains) != 1 || len(cache.certs) != 2 {
		t.Fatalf("cache holds %d chains and %d certificates, want 1 and 2", len(cache.chains), len(cache.certs))
	}

	tests := []struct {
		name  string
		doc   []byte
		roots *x509.CertPool
	}{
		{"error/the cached signer against other roots", good, otherRoots},
		{"error/a signer of another authority", signAt(t, stranger, goldenTime), roots},
		// The leaf is still valid then; the authority of the cached chain is not.
		{"error/signed after the cached chain's authority expired", signAt(t, trusted, caEnd.Add(time.Hour)), roots},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errCached := VerifyWith(tc.doc, VerifyOptions{Roots: tc.roots, Cache: cache})
			_, errFresh := VerifyWith(tc.doc, VerifyOptions{Roots: tc.roots})
			if errFresh == nil {
				t.Fatal("the case verifies without the cache: it tests nothing")
			}
			if !errors.Is(errCached, ErrInvalidSignature) {
				t.Errorf("with the cache: err = %v, want ErrInvalidSignature like without it (%v)", errCached, errFresh)
			}
		})
	}
}

// TestVerifyCacheBound: a full cache is emptied rather than grown.
func TestVerifyCacheBound(t *testing.T) {
	t.Parallel()
	c := NewVerifyCache(2)
	for i := range 3 {
		m := mintP12(t, i+1, goldenTime.AddDate(-1, 0, 0), goldenTime.AddDate(1, 0, 0), "1234")
		if _, err := c.parse(m.Leaf.Raw); err != nil {
			t.Fatal(err)
		}
		if len(c.certs) > 2 {
			t.Fatalf("after %d certificates the cache holds %d, bound 2", i+1, len(c.certs))
		}
	}
	if _, err := c.parse([]byte("not DER")); err == nil {
		t.Error("a certificate that does not parse was taken")
	}
}

// TestVerifyParsed: a document read once verifies as VerifyWith does, and
// its content stays readable afterwards.
func TestVerifyParsed(t *testing.T) {
	t.Parallel()
	m := mintP12(t, 3, goldenTime.AddDate(-1, 0, 0), goldenTime.AddDate(1, 0, 0), "1234")
	good := signAt(t, m, goldenTime)
	p, err := Parse(append([]byte("\xef\xbb\xbf"), good...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyParsed(p, VerifyOptions{}); err != nil {
		t.Fatalf("VerifyParsed: %v", err)
	}
	if !bytes.Equal(p.Bytes(), good) {
		t.Error("Bytes is not the document read, without its byte-order mark")
	}
	if a := p.Root().FindElement("A"); a == nil || a.Text() != "1" {
		t.Errorf("content after verification: %v", a)
	}
	tampered := []byte(string(good[:len(good)-len("</Doc>")]) + "<B/></Doc>")
	p, err = Parse(tampered)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyParsed(p, VerifyOptions{}); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("tampered: err = %v", err)
	}
	if _, err := Parse([]byte("<a>")); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("not XML: err = %v", err)
	}
}
