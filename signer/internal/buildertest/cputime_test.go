//go:build unix

package buildertest

import (
	"crypto/rsa"
	"testing"

	"facturad/signer"
	"facturad/signer/benchcpu"
)

// BenchmarkSignBuiltVsRawRSA alternates one signature of the builder's
// 10-line invoice with one raw RSA-2048 signature and reports the ratio of
// the process CPU time they used (x-raw-rsa), which stays meaningful on a
// machine shared with other jobs. "full" parses and canonicalizes the
// document; "canonical" signs as the pipeline does, with
// WithCanonicalInput.
func BenchmarkSignBuiltVsRawRSA(b *testing.B) {
	doc := builtInvoice(b)
	key, chain := fixture(b)
	for _, bc := range []struct {
		name string
		opts []signer.Option
	}{
		{"full", nil},
		{"canonical", []signer.Option{signer.WithCanonicalInput()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchcpu.CompareWithRawRSA(b, "sign", func() {
				if _, err := signer.Sign(doc, key, chain, signer.PolicyV44, bc.opts...); err != nil {
					b.Fatal(err)
				}
			}, key.(*rsa.PrivateKey))
		})
	}
}
