// Package printed makes what the service prints of its stored documents:
// the hacienda/pdf Input of an issued document (the GET .../pdf/v4 route,
// the e-mail's attachment, the export and the archive) or of a received
// one, from its signed XML and what the service knows beside it: its
// state and the tax authority's message, the environment it was issued
// in (the test mark of decision 171), and its company's logo and notes.
package printed

import (
	"context"
	"errors"
	"fmt"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
	"facturad/tenant"
)

// ErrUnreadable is a stored XML that cannot be read back as a v4.4
// document: it has no printed representation.
var ErrUnreadable = errors.New("printed: the document's XML cannot be read")

// Companies reads what a company prints on its documents (tenant.Service
// satisfies it).
type Companies interface {
	CompanyPrint(ctx context.Context, companyID int64) (tenant.CompanyPrint, error)
}

// Printer makes the Input of the stored documents. The zero Printer marks
// each document by its own environment and prints no logo or notes.
type Printer struct {
	// Companies gives an issued document its company's logo and notes;
	// nil prints neither.
	Companies Companies
	// Sandbox is set when the service's tax authority is a simulator
	// (FACTURAD_HACIENDA_ENV=sandbox): every company's documents go to it,
	// whatever their ambiente, and are marked as the sandbox's.
	Sandbox bool
}

// Ambiente is the environment a document numbered in ambiente (the
// company's: pruebas or produccion) was issued in.
func (p Printer) Ambiente(ambiente string) pdf.Ambiente {
	switch {
	case p.Sandbox:
		return pdf.AmbienteSandbox
	case ambiente == tenant.AmbientePruebas:
		return pdf.AmbientePruebas
	case ambiente == tenant.AmbienteProduccion:
		return pdf.AmbienteProduccion
	}
	return ""
}

// Issued is the Input of an issued document in layout formato ("" for its
// type's): doc is d's signed XML read back (nil reads it here), with d's
// state and the message a rejection prints, d's environment, and its
// company's logo and notes. A stored logo that cannot be prepared is left
// out, so that the document still prints; an error reading the company's
// is returned as it is (a store that cannot answer).
func (p Printer) Issued(ctx context.Context, d tenant.Document, doc *hacienda.Document, formato pdf.Formato) (pdf.Input, error) {
	if doc == nil {
		var err error
		if doc, err = hacienda.ParseXML(d.SignedXML); err != nil {
			return pdf.Input{}, fmt.Errorf("%w (document %s): %w", ErrUnreadable, d.Clave, err)
		}
	}
	in := pdf.Input{Document: doc, Estado: string(d.Estado), MensajeHacienda: d.PrintedMessage(),
		Ambiente: p.Ambiente(d.Ambiente), Formato: formato}
	if p.Companies == nil {
		return in, nil
	}
	c, err := p.Companies.CompanyPrint(ctx, d.CompanyID)
	if err != nil {
		return pdf.Input{}, fmt.Errorf("printed: document %s: %w", d.Clave, err)
	}
	in.Notas = c.Notas
	if len(c.Logo) > 0 {
		if l, err := pdf.CachedLogo(c.Logo); err == nil {
			in.Logo = l
		}
	}
	return in, nil
}

// Received is the Input of a supplier's document the company received, in
// layout formato: doc is its XML read back (nil reads it here), printed
// as accepted (only a document the tax authority accepted is received) and
// marked by the environment the company's message went to. The company's
// logo and notes are not the supplier's: none is printed.
func (p Printer) Received(r tenant.ReceivedDocument, doc *hacienda.Document, formato pdf.Formato) (pdf.Input, error) {
	if doc == nil {
		var err error
		if doc, err = hacienda.ParseXML(r.SupplierXML); err != nil {
			return pdf.Input{}, fmt.Errorf("%w (received document %s): %w", ErrUnreadable, r.Clave, err)
		}
	}
	return pdf.Input{Document: doc, Estado: string(tenant.StateAccepted), Ambiente: p.Ambiente(r.Ambiente), Formato: formato}, nil
}
