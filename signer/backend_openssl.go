//go:build openssl

package signer

import (
	"crypto"
	"crypto/rsa"

	"facturad/signer/openssl"
)

// RSABackend names what makes the RSA signatures of Cache.Sign: OpenSSL's
// libcrypto in this build (the openssl tag).
const RSABackend = "openssl"

// cacheKey is the key Cache signs with for a loaded key: a copy held by
// OpenSSL, which makes the same signatures as Go's crypto/rsa in about a
// quarter of its CPU time. Should OpenSSL refuse the key (it takes every
// RSA key crypto/rsa does; only running out of memory would do it), the
// key itself signs: the signatures are the same, and a document is not
// refused for the library that computes them.
func cacheKey(k crypto.Signer) crypto.Signer {
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return k
	}
	sk, err := openssl.New(rk)
	if err != nil {
		return k
	}
	return sk
}
