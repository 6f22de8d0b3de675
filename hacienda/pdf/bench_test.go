//go:build unix

package pdf_test

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"io"
	"syscall"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
)

// tenLines is the benchmark's document: a 10-line FE as the service
// stores it (its XML).
func tenLines(b *testing.B) (*hacienda.Document, []byte) {
	b.Helper()
	d := longDocument(b, 10)
	x, err := hacienda.MarshalXML(d)
	if err != nil {
		b.Fatal(err)
	}
	return d, x
}

// BenchmarkRender10Lines draws a parsed 10-line document.
func BenchmarkRender10Lines(b *testing.B) {
	d, _ := tenLines(b)
	in := pdf.Input{Document: d, Estado: "01"}
	b.ReportAllocs()
	for b.Loop() {
		if err := pdf.Render(io.Discard, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderSignedXML10Lines is what the PDF route does: read the
// stored XML, then draw it.
func BenchmarkRenderSignedXML10Lines(b *testing.B) {
	_, x := tenLines(b)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := pdf.RenderSignedXML(&buf, x, "01"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "pdf-bytes")
}

// processCPU returns the CPU time (user + system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRenderVsRawRSA alternates one render of the stored 10-line XML
// (read and draw, as the route does) with one raw RSA-2048 PKCS#1 v1.5
// SHA-256 signature, the project's reference, and reports the CPU time of
// each per iteration and their ratio. CPU time does not grow when other
// work shares the machine, so the ratio holds on a busy one; run it with
// -cpu 1 for a figure per core.
func BenchmarkRenderVsRawRSA(b *testing.B) {
	_, x := tenLines(b)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	h := sha256.Sum256([]byte("facturad"))
	var buf bytes.Buffer
	var renderCPU, rsaCPU time.Duration
	for b.Loop() {
		t0 := processCPU(b)
		buf.Reset()
		if err := pdf.RenderSignedXML(&buf, x, "01"); err != nil {
			b.Fatal(err)
		}
		t1 := processCPU(b)
		if _, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h[:]); err != nil {
			b.Fatal(err)
		}
		t2 := processCPU(b)
		renderCPU += t1 - t0
		rsaCPU += t2 - t1
	}
	n := float64(b.N)
	b.ReportMetric(float64(renderCPU.Microseconds())/n, "render-cpu-µs")
	b.ReportMetric(float64(rsaCPU.Microseconds())/n, "rsa-cpu-µs")
	b.ReportMetric(float64(renderCPU)/float64(rsaCPU), "x-raw-rsa")
	b.ReportMetric(n/renderCPU.Seconds(), "renders/cpu-s")
}
