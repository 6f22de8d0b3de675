package delivery

import (
	"bytes"
	"context"
	"fmt"

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
	var b bytes.Buffer
	if err := pdf.RenderSignedXML(&b, d.SignedXML, string(d.Estado), d.PrintedMessage()); err != nil {
		return nil, fmt.Errorf("print document %s: %w", d.Clave, err)
	}
	return b.Bytes(), nil
}
