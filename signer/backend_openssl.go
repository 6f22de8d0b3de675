//go:build openssl && cgo

package signer

import (
	"crypto"
	"crypto/rsa"
	"fmt"

	"facturad/signer/openssl"
)

// RSABackend names what makes the RSA signatures of Cache.Sign: OpenSSL's
// libcrypto in this build (the openssl tag).
const RSABackend = "openssl"

// cacheKey is the key Cache signs with for a loaded key: a copy held by
// OpenSSL, which makes the same signatures as Go's crypto/rsa in about a
// third of its CPU time.
func cacheKey(k crypto.Signer) (crypto.Signer, error) {
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return k, nil
	}
	sk, err := openssl.New(rk)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupportedKey, err)
	}
	return sk, nil
}
