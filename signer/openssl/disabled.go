//go:build !openssl || !cgo

package openssl

// Enabled says that this build signs with OpenSSL: it does not (build with
// the openssl tag and cgo for that).
const Enabled = false
