//go:build unix

package pdf_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"io"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
	"facturad/signer/benchcpu"
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
		if err := pdf.RenderSignedXML(&buf, x, "01", ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "pdf-bytes")
}

// BenchmarkRenderVsRawRSA alternates one render of the stored 10-line XML
// (read and draw, as the route does) with one raw RSA-2048 PKCS#1 v1.5
// SHA-256 signature, the project's reference, and reports the CPU time of
// each per iteration and their ratio. CPU time does not grow when other
// work shares the machine, so the ratio holds on a busy one; run it with
// -cpu 1 for a figure per core.
func BenchmarkRenderVsRawRSA(b *testing.B) {
	_, x := tenLines(b)
	renderVsRawRSA(b, x)
}

// renderVsRawRSA alternates one render of x with one raw RSA-2048
// signature and reports their CPU times, their ratio and renders per CPU
// second.
func renderVsRawRSA(b *testing.B, x []byte) {
	renderInputVsRawRSA(b, func() (pdf.Input, error) { return pdf.FromSignedXML(x, "01") })
}

// renderInputVsRawRSA is renderVsRawRSA for the Input made by input on
// every render (reading the XML, as the routes do).
func renderInputVsRawRSA(b *testing.B, input func() (pdf.Input, error)) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	cpu := benchcpu.CompareWithRawRSA(b, "render", func() {
		buf.Reset()
		in, err := input()
		if err != nil {
			b.Fatal(err)
		}
		if err := pdf.Render(&buf, in); err != nil {
			b.Fatal(err)
		}
	}, key)
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "renders/cpu-s")
	b.ReportMetric(float64(buf.Len()), "pdf-bytes")
}

// BenchmarkRenderPrintedVsRawRSA is BenchmarkRenderVsRawRSA with what the
// service adds to the XML: a 300 × 100 PNG logo with transparency (taken
// from the process's cache of prepared logos, as every render after a
// company's first is), three lines of notes and the test mark; then the
// same as an 80 mm ticket.
func BenchmarkRenderPrintedVsRawRSA(b *testing.B) {
	_, x := tenLines(b)
	logo := encodePNG(b, gradient(300, 100, true))
	if _, err := pdf.CachedLogo(logo); err != nil {
		b.Fatal(err)
	}
	for _, f := range []pdf.Formato{pdf.FormatoCarta, pdf.FormatoTicket} {
		b.Run(string(f), func(b *testing.B) {
			renderInputVsRawRSA(b, func() (pdf.Input, error) {
				in, err := pdf.FromSignedXML(x, "01")
				if err != nil {
					return in, err
				}
				in.Logo, err = pdf.CachedLogo(logo)
				in.Notas = "Cuenta IBAN CR05015202001026284066\nSINPE Móvil 8888-8888\nNo se aceptan devoluciones"
				in.Ambiente, in.Formato = pdf.AmbientePruebas, f
				return in, err
			})
		})
	}
}

// BenchmarkRender1000LinesVsRawRSA is BenchmarkRenderVsRawRSA for a
// document of v4.4's most lines, 1,000 (38 pages).
func BenchmarkRender1000LinesVsRawRSA(b *testing.B) {
	x, err := hacienda.MarshalXML(longDocument(b, 1000))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	renderVsRawRSA(b, x)
}
