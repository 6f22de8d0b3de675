//go:build unix

package signer

import (
	"crypto/rsa"
	"testing"

	"facturad/signer/benchcpu"
)

// BenchmarkSignVsRawRSA alternates one signature of the 10-line invoice
// with one raw RSA-2048 signature and compares the process CPU time each
// used. CPU time, unlike wall time, does not grow when other jobs share
// the machine, so the ratio it reports (x-raw-rsa) is stable where the
// ns/op of separate benchmarks are not.
//
// "full" parses and canonicalizes the document; "canonical" signs with
// WithCanonicalInput (the example is indented but canonical, so it takes
// the fast path).
func BenchmarkSignVsRawRSA(b *testing.B) {
	doc := tenLineInvoice(b)
	key, chain := fixture(b).Key, fixtureChain(b)
	for _, bc := range []struct {
		name string
		opts []Option
	}{
		{"full", nil},
		{"canonical", []Option{WithCanonicalInput()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchcpu.CompareWithRawRSA(b, "sign", func() {
				if _, err := Sign(doc, key, chain, PolicyV44, bc.opts...); err != nil {
					b.Fatal(err)
				}
			}, key.(*rsa.PrivateKey))
		})
	}
}
