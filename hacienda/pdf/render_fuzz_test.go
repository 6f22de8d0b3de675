package pdf_test

import (
	"bytes"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
	"facturad/hacienda/sample"
)

// FuzzRenderSignedXML: the received-PDF and e-mail routes print stored
// XML through FromSignedXML and Render; any bytes are either printed or
// refused with an error, never a panic, and what is printed is a whole
// PDF. Inputs over 64 KB are skipped to keep each run fast (the seeds are
// far smaller).
func FuzzRenderSignedXML(f *testing.F) {
	for _, d := range sample.Documents(9, 3) {
		x, err := hacienda.MarshalXML(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(x, "03")
	}
	f.Add([]byte("<html/>"), "01")
	f.Add([]byte(""), "00")
	f.Add([]byte(`<?xml version="1.0"?><FacturaElectronica xmlns="https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/facturaElectronica"></FacturaElectronica>`), "05")
	f.Fuzz(func(t *testing.T, signed []byte, estado string) {
		if len(signed) > 64<<10 || len(estado) > 64 {
			t.Skip()
		}
		var b bytes.Buffer
		if err := pdf.RenderSignedXML(&b, signed, estado, ""); err != nil {
			return
		}
		out := b.Bytes()
		if !bytes.HasPrefix(out, []byte("%PDF-")) || !bytes.Contains(out[max(0, len(out)-32):], []byte("%%EOF")) {
			t.Fatalf("printed %d bytes that are not a whole PDF", len(out))
		}
	})
}
