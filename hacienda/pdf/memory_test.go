package pdf_test

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
)

// lineCounts are the document sizes the memory figures are taken at: a
// page, a few pages, a long invoice and a very long one.
var lineCounts = []int{10, 100, 1000, 10000}

// BenchmarkRenderLines draws documents of 10 to 10,000 lines, as the PDF
// route does (from the stored XML); B/op is the bytes a render allocates,
// and peak-live-B the most a render holds at once beyond the parsed
// document (peakLive).
func BenchmarkRenderLines(b *testing.B) {
	for _, n := range lineCounts {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			d := manyLines(b, n)
			x, err := hacienda.MarshalXML(d)
			if err != nil {
				b.Fatal(err)
			}
			var out countingWriter
			b.ReportAllocs()
			for b.Loop() {
				out = 0
				if err := pdf.RenderSignedXML(&out, x, "01", ""); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out), "pdf-bytes")
			b.ReportMetric(float64(peakLive(b, d)), "peak-live-B")
		})
	}
}

// countingWriter counts and discards what is written.
type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// sampler collects the garbage and reads the live heap each time the
// render writes to it, keeping the highest figure: what is live at that
// moment, since nothing else runs.
type sampler struct{ peak uint64 }

func (s *sampler) Write(p []byte) (int, error) {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	s.peak = max(s.peak, m.HeapAlloc)
	return len(p), nil
}

// peakLive is how many bytes of heap a render of d holds at most beyond
// what was live before it (d among it), sampled at each of its writes.
func peakLive(t testing.TB, d *hacienda.Document) uint64 {
	t.Helper()
	in := pdf.Input{Document: d, Estado: "01"}
	var base runtime.MemStats
	runtime.GC()
	runtime.GC() // and what pools kept from earlier renders
	runtime.ReadMemStats(&base)
	s := &sampler{}
	if err := pdf.Render(s, in); err != nil {
		t.Fatal(err)
	}
	if s.peak < base.HeapAlloc {
		return 0
	}
	return s.peak - base.HeapAlloc
}

// TestRenderMemoryIsBounded renders 100 and 10,000 lines and compares the
// most each holds at once beyond its document: pages are written out as
// they are drawn and lines laid out as they are drawn, so a hundred times
// the lines must not hold anything near a hundred times the memory.
func TestRenderMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 10,000 lines")
	}
	held := map[int]uint64{}
	for _, n := range []int{100, 10000} {
		held[n] = peakLive(t, manyLines(t, n))
		t.Logf("%d lines: at most %d bytes held beyond the document", n, held[n])
	}
	// The floor: 100 lines hold about one page and the pooled compressor
	// (under 1 MB), and the live heap is read for the whole process, so
	// another test's goroutine still winding down moves either figure by
	// a megabyte or so; a render that kept what it drew held 44 MB at
	// 10,000 lines.
	if limit := max(2*held[100], 4<<20); held[10000] > limit {
		t.Errorf("10,000 lines hold %d bytes at once, 100 lines %d: more than %d, the render keeps what it drew", held[10000], held[100], limit)
	}
}

// manyLines is longDocument with n lines; past v4.4's 1,000 (which a
// valid document cannot pass, but the renderer must survive) the lines
// are repeated with their numbers going on.
func manyLines(t testing.TB, n int) *hacienda.Document {
	t.Helper()
	d := longDocument(t, min(n, 1000))
	for i := len(d.DetalleServicio); i < n; i++ {
		l := d.DetalleServicio[i%1000]
		l.NumeroLinea = i + 1
		l.Detalle = fmt.Sprintf("Artículo número %05d de señalización vial", i+1)
		d.DetalleServicio = append(d.DetalleServicio, l)
	}
	return d
}
