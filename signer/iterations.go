package signer

import (
	"encoding/asn1"
	"errors"
	"fmt"
)

// MaxPKCS12Iterations caps the key-derivation iterations a PKCS#12 file may
// ask for (its MAC, and each PBES1/PBKDF2 encryption in it). Real files use
// 2,048 (OpenSSL, the tax authority's own tool) to 10,000 (Windows);
// 200,000 leaves room for a careful issuer while a file cannot make one
// upload, or each load into a certificate cache, cost seconds of CPU (a
// file declaring 2^26 took 14.7 s to refuse). The count is read from the
// file's structure before any derivation is done.
const MaxPKCS12Iterations = 200_000

// ErrTooCostly: the file asks for more key-derivation iterations than
// MaxPKCS12Iterations.
var ErrTooCostly = errors.New("signer: the PKCS#12 file asks for too many key-derivation iterations")

// checkIterations refuses a PKCS#12 file whose MAC or encryption asks for
// more than MaxPKCS12Iterations iterations. It walks the DER structure
// without decrypting anything (the encrypted parts are opaque to it, and
// the counts are outside them), so its cost is bounded by the file's size.
// A file it cannot walk is left to the decoder to refuse.
func checkIterations(der []byte) error {
	w := iterWalk{budget: 20_000}
	w.walk(der, 0)
	if w.max > MaxPKCS12Iterations {
		return fmt.Errorf("%w: %d, at most %d", ErrTooCostly, w.max, MaxPKCS12Iterations)
	}
	return nil
}

// iterWalk records the largest iteration count found: every INTEGER that
// directly follows an OCTET STRING in a SEQUENCE. That is the shape of
// MacData (digest, salt, iterations), PBEParameter (salt, iterations) and
// PBKDF2-params (salt, iterationCount, ...); no other structure of a
// PKCS#12 file (certificates, key info, attributes) has it.
type iterWalk struct {
	max    uint64
	budget int // elements left to visit: a hostile file cannot make the walk long
}

const (
	tagInteger     = 2
	tagOctetString = 4
)

func (w *iterWalk) walk(b []byte, depth int) {
	if depth > 24 {
		return
	}
	var prevOctets bool
	for len(b) > 0 && w.budget > 0 {
		w.budget--
		var v asn1.RawValue
		rest, err := asn1.Unmarshal(b, &v)
		if err != nil {
			return
		}
		b = rest
		universal := v.Class == asn1.ClassUniversal
		switch {
		case universal && v.Tag == tagInteger && prevOctets:
			w.count(v.Bytes)
		case v.IsCompound:
			w.walk(v.Bytes, depth+1)
		case universal && v.Tag == tagOctetString && len(v.Bytes) > 0 && v.Bytes[0] == 0x30:
			// Content wrapped in an OCTET STRING (the authenticated
			// safe, a SafeContents, a bag's certificate) is DER again.
			w.walk(v.Bytes, depth+1)
		}
		prevOctets = universal && v.Tag == tagOctetString
	}
}

// count records a non-negative INTEGER; one too long for 64 bits counts
// as the largest.
func (w *iterWalk) count(b []byte) {
	if len(b) == 0 || b[0]&0x80 != 0 {
		return // negative: not a count
	}
	for len(b) > 1 && b[0] == 0 {
		b = b[1:]
	}
	if len(b) > 8 {
		w.max = ^uint64(0)
		return
	}
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	w.max = max(w.max, n)
}
