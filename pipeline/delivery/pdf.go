package delivery

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"facturad/hacienda/pdf"
	"facturad/tenant"
)

// PrintedPDF renders a stored document's printed representation with
// hacienda/pdf, as GET /api/documents/{clave}/pdf/v4 does: from its signed
// XML, with its current state (and the tax authority's message when it was
// rejected or in error).
type PrintedPDF struct{}

var _ PDFRenderer = PrintedPDF{}

// DocumentPDF renders d.
func (PrintedPDF) DocumentPDF(_ context.Context, d tenant.Document) ([]byte, error) {
	in, err := pdf.FromSignedXML(d.SignedXML, string(d.Estado))
	if err != nil {
		return nil, fmt.Errorf("the stored XML of document %s: %w", d.Clave, err)
	}
	if d.Estado == tenant.StateRejected || d.Estado == tenant.StateError {
		in.MensajeHacienda = strings.Join(append([]string{d.MensajeHacienda}, d.DetalleMensaje...), "\n")
	}
	var b bytes.Buffer
	if err := pdf.Render(&b, in); err != nil {
		return nil, fmt.Errorf("render document %s: %w", d.Clave, err)
	}
	return b.Bytes(), nil
}
