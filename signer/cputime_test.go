//go:build unix

package signer

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"syscall"
	"testing"
	"time"
)

// processCPU returns the CPU time (user + system) the process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

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
			compareWithRawRSA(b, func() {
				if _, err := Sign(doc, key, chain, PolicyV44, bc.opts...); err != nil {
					b.Fatal(err)
				}
			}, key.(*rsa.PrivateKey))
		})
	}
}

// compareWithRawRSA runs op and a raw RSA-2048 signature alternately and
// reports their CPU times and ratio.
func compareWithRawRSA(b *testing.B, op func(), key *rsa.PrivateKey) {
	h := sha256.Sum256([]byte("facturad"))
	var opCPU, rsaCPU time.Duration
	for b.Loop() {
		t0 := processCPU(b)
		op()
		t1 := processCPU(b)
		if _, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h[:]); err != nil {
			b.Fatal(err)
		}
		t2 := processCPU(b)
		opCPU += t1 - t0
		rsaCPU += t2 - t1
	}
	n := float64(b.N)
	b.ReportMetric(float64(opCPU.Microseconds())/n, "sign-cpu-µs")
	b.ReportMetric(float64(rsaCPU.Microseconds())/n, "rsa-cpu-µs")
	b.ReportMetric(float64(opCPU)/float64(rsaCPU), "x-raw-rsa")
}
