//go:build unix

// Package benchcpu measures an operation against a raw RSA-2048 signature,
// the project's reference for CPU figures, by the CPU time each uses, for
// benchmarks (the signer's, the printed representation's). CPU time, unlike
// wall time, does not grow when other jobs share the machine, so the ratio
// stays meaningful where the ns/op of separate benchmarks do not.
package benchcpu

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

// CompareWithRawRSA runs op and a raw RSA-2048 PKCS#1 v1.5 signature with
// key alternately, and reports the CPU time of each per iteration
// (<name>-cpu-µs, rsa-cpu-µs) and their ratio (x-raw-rsa). It returns the
// CPU time op used in all, for further metrics.
func CompareWithRawRSA(b *testing.B, name string, op func(), key *rsa.PrivateKey) time.Duration {
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
	b.ReportMetric(float64(opCPU.Microseconds())/n, name+"-cpu-µs")
	b.ReportMetric(float64(rsaCPU.Microseconds())/n, "rsa-cpu-µs")
	b.ReportMetric(float64(opCPU)/float64(rsaCPU), "x-raw-rsa")
	return opCPU
}

// ProcessCPU returns the CPU time (user + system) the process has used,
// for a benchmark that measures a span of work done by several goroutines
// (a deliverer and the endpoint it calls) rather than one operation.
func ProcessCPU(tb testing.TB) time.Duration { return processCPU(tb) }

// RawRSA returns the CPU time of one raw RSA-2048 PKCS#1 v1.5 SHA-256
// signature with key, the mean of n, to set a span measured with
// ProcessCPU against in the same run.
func RawRSA(tb testing.TB, key *rsa.PrivateKey, n int) time.Duration {
	h := sha256.Sum256([]byte("facturad"))
	t0 := processCPU(tb)
	for range n {
		if _, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h[:]); err != nil {
			tb.Fatal(err)
		}
	}
	return (processCPU(tb) - t0) / time.Duration(n)
}
