//go:build openssl && !cgo

package openssl

// The openssl tag asks for OpenSSL's signatures, which need cgo: without
// it (CGO_ENABLED=0, or no C compiler found), the build stops here rather
// than quietly signing with crypto/rsa. Build with CGO_ENABLED=1 and gcc.
var _ = theOpensslTagNeedsCgoSetCGO_ENABLED1AndInstallGcc
