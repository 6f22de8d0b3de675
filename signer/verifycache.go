package signer

import (
	"crypto/sha256"
	"crypto/x509"
	"sync"
	"time"
)

// VerifyCache keeps what verifying many documents of the same signers
// repeats: the KeyInfo certificates parsed from their DER, and the chains
// already built from a signing certificate to VerifyOptions.Roots. A
// tax-authority answer costs an X.509 parse and a chain verification (an
// RSA check of every link) without it; with it, a signer seen before costs
// a hash of its certificates and a check of each link's validity period at
// the signing time.
//
// A cached chain is reused only for the same signing certificate, the same
// KeyInfo certificates in the same order and the same Roots pool (by
// identity: a pool must not be changed once verifications use it), and
// only when every certificate of that chain is valid at the new signing
// time; anything else is verified in full. The zero value is not usable:
// call NewVerifyCache. It is safe for concurrent use.
//
// The certificates it hands out (VerifyResult.Certificate and Chain) are
// shared between verifications and must not be changed. Documents from
// anyone can fill it with certificates of their own, emptying it: that
// costs later verifications their speed, never their checks. Whatever a
// future VerifyOptions field changes in the chain building (key usages,
// intermediates) must become part of chainKey.
type VerifyCache struct {
	mu     sync.Mutex
	max    int
	certs  map[[sha256.Size]byte]*x509.Certificate
	chains map[chainKey][]*x509.Certificate
}

// DefaultVerifyCacheSize is NewVerifyCache's bound when given none.
const DefaultVerifyCacheSize = 1024

// chainKey names a chain verification: the roots it was built to, the
// intermediates it could use and the certificates KeyInfo offered (the
// signing one first).
type chainKey struct {
	roots, intermediates *x509.CertPool
	certs                [sha256.Size]byte
}

// NewVerifyCache returns a cache holding at most size certificates and as
// many chains (DefaultVerifyCacheSize when size ≤ 0). When full it is
// emptied and fills again: the certificates a service meets are few (the
// tax authority's signers), so a bound matters only against a flood of
// made-up ones.
func NewVerifyCache(size int) *VerifyCache {
	if size <= 0 {
		size = DefaultVerifyCacheSize
	}
	return &VerifyCache{
		max:    size,
		certs:  make(map[[sha256.Size]byte]*x509.Certificate),
		chains: make(map[chainKey][]*x509.Certificate),
	}
}

// parse returns the certificate of der, parsed once.
func (c *VerifyCache) parse(der []byte) (*x509.Certificate, error) {
	if c == nil {
		return x509.ParseCertificate(der)
	}
	k := sha256.Sum256(der)
	c.mu.Lock()
	cert, ok := c.certs[k]
	c.mu.Unlock()
	if ok {
		return cert, nil
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.certs) >= c.max {
		clear(c.certs)
	}
	c.certs[k] = cert
	c.mu.Unlock()
	return cert, nil
}

// key names the verification of signing with the KeyInfo certificates
// chain to roots, through intermediates.
func (*VerifyCache) key(roots, intermediates *x509.CertPool, signing *x509.Certificate, chain []*x509.Certificate) chainKey {
	h := sha256.New()
	for _, cert := range append([]*x509.Certificate{signing}, chain...) {
		d := sha256.Sum256(cert.Raw)
		h.Write(d[:])
	}
	k := chainKey{roots: roots, intermediates: intermediates}
	h.Sum(k.certs[:0])
	return k
}

// trusted reports whether the chain cached under k holds at t: every
// certificate in it valid then.
func (c *VerifyCache) trusted(k chainKey, t time.Time) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	chain, ok := c.chains[k]
	c.mu.Unlock()
	if !ok {
		return false
	}
	for _, cert := range chain {
		if t.Before(cert.NotBefore) || t.After(cert.NotAfter) {
			return false
		}
	}
	return true
}

// remember keeps a chain x509 verified under k.
func (c *VerifyCache) remember(k chainKey, chain []*x509.Certificate) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if len(c.chains) >= c.max {
		clear(c.chains)
	}
	c.chains[k] = chain
	c.mu.Unlock()
}
