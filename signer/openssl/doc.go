// Package openssl signs with OpenSSL's libcrypto instead of Go's crypto/rsa:
// an optional backend for the one RSA-2048 signature every document needs,
// which OpenSSL computes in about a quarter of the CPU time.
//
// It is built only with the openssl build tag, and then needs cgo (and
// libcrypto's headers, Debian's libssl-dev); a build with the tag and
// without cgo fails rather than falling back:
//
//	CGO_ENABLED=1 go build -tags openssl ./cmd/facturad
//
// Without the tag the package is empty, and the service signs with Go's
// crypto/rsa, as it does by default. See docs/design/signer.md.
package openssl
