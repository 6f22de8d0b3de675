package delivery

import (
	"bytes"
	"context"
	"fmt"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
	"facturad/tenant"
	"facturad/tenant/printed"
)

// PrintedPDF renders a stored document's printed representation with
// hacienda/pdf, as GET /api/documents/{clave}/pdf/v4 does: from its signed
// XML, with its current state (and the tax authority's message when it was
// rejected or in error), in its type's layout.
type PrintedPDF struct {
	// Renders is the process's bound on renders (*pdf.Limiter): an e-mail
	// waits for a slot rather than draw beside every download. Nil is no
	// bound (tests).
	Renders RenderWaiter
	// Printer makes what the PDF shows beside the XML (the environment's
	// mark, the company's logo and notes), as the PDF route does.
	Printer printed.Printer
}

// RenderWaiter takes a process-wide render slot, waiting for one until
// ctx ends (*pdf.Limiter satisfies it).
type RenderWaiter interface {
	WaitRender(ctx context.Context) (release func(), err error)
}

var _ PDFRenderer = PrintedPDF{}

// DocumentPDF renders d once a render slot is free: x is its signed XML
// read back, or nil to read it here.
func (p PrintedPDF) DocumentPDF(ctx context.Context, d tenant.Document, x *hacienda.Document) ([]byte, error) {
	if p.Renders != nil {
		release, err := p.Renders.WaitRender(ctx)
		if err != nil {
			return nil, fmt.Errorf("print document %s: %w", d.Clave, err)
		}
		defer release()
	}
	in, err := p.Printer.Issued(ctx, d, x, "")
	if err != nil {
		return nil, fmt.Errorf("print document %s: %w", d.Clave, err)
	}
	var b bytes.Buffer
	if err := pdf.Render(&b, in); err != nil {
		return nil, fmt.Errorf("print document %s: %w", d.Clave, err)
	}
	return b.Bytes(), nil
}
