//go:build !openssl

package signer

import "crypto"

// RSABackend names what makes the RSA signatures of Cache.Sign: Go's
// crypto/rsa in this build. Built with the openssl tag (and cgo), it is
// "openssl" (package facturad/signer/openssl).
const RSABackend = "crypto/rsa"

// cacheKey is the key Cache signs with for a loaded key: the key itself.
func cacheKey(k crypto.Signer) crypto.Signer { return k }
