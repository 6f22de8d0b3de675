//go:build unix

package buildertest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"syscall"
	"testing"
	"time"

	"facturad/signer"
)

func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSignBuiltVsRawRSA alternates one signature of the builder's
// 10-line invoice with one raw RSA-2048 signature and reports the ratio of
// the process CPU time they used (x-raw-rsa), which stays meaningful on a
// machine shared with other jobs. "full" parses and canonicalizes the
// document; "canonical" signs as the pipeline does, with
// WithCanonicalInput.
func BenchmarkSignBuiltVsRawRSA(b *testing.B) {
	doc := builtInvoice(b)
	key, chain := fixture(b)
	h := sha256.Sum256([]byte("facturad"))
	for _, bc := range []struct {
		name string
		opts []signer.Option
	}{
		{"full", nil},
		{"canonical", []signer.Option{signer.WithCanonicalInput()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var signCPU, rsaCPU time.Duration
			for b.Loop() {
				t0 := processCPU(b)
				if _, err := signer.Sign(doc, key, chain, signer.PolicyV44, bc.opts...); err != nil {
					b.Fatal(err)
				}
				t1 := processCPU(b)
				if _, err := rsa.SignPKCS1v15(rand.Reader, key.(*rsa.PrivateKey), crypto.SHA256, h[:]); err != nil {
					b.Fatal(err)
				}
				t2 := processCPU(b)
				signCPU += t1 - t0
				rsaCPU += t2 - t1
			}
			n := float64(b.N)
			b.ReportMetric(float64(signCPU.Microseconds())/n, "sign-cpu-µs")
			b.ReportMetric(float64(rsaCPU.Microseconds())/n, "rsa-cpu-µs")
			b.ReportMetric(float64(signCPU)/float64(rsaCPU), "x-raw-rsa")
		})
	}
}
