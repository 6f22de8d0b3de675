package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"time"

	"facturad/hacienda/pdf"
	"facturad/tenant"
	"facturad/tenant/printed"
)

// Part is one object of a row: its name under the row's key and its bytes.
type Part struct {
	Name string
	Data []byte
}

// ErrNoPDF is a row whose printed representation cannot be drawn: its
// XML parts are archived all the same, without a PDF object (the XML is
// what the law keeps; the export notes such a PDF and goes on too).
var ErrNoPDF = errors.New("archive: the printed representation cannot be drawn")

// DocumentParts are the objects of a settled issued document: its signed
// XML, the tax authority's answer (when there is one) and the printed
// representation, drawn as GET .../pdf/v4 draws it by print (the same
// bytes every time while the company's logo and notes stay the same).
// When the PDF cannot be drawn it returns the XML parts and an error
// wrapping ErrNoPDF: the caller archives them. An error reading what the
// company prints is returned alone: the row is tried again later.
func DocumentParts(ctx context.Context, d tenant.Document, print printed.Printer) ([]Part, error) {
	if len(d.SignedXML) == 0 {
		return nil, fmt.Errorf("archive: document %s has no signed XML", d.Clave)
	}
	parts := []Part{{PartSigned, d.SignedXML}}
	if len(d.ResponseXML) > 0 {
		parts = append(parts, Part{PartResponse, d.ResponseXML})
	}
	in, err := print.Issued(ctx, d, nil, "")
	switch {
	case errors.Is(err, printed.ErrUnreadable):
		return parts, fmt.Errorf("document %s: %w: %w", d.Clave, ErrNoPDF, err)
	case err != nil:
		return nil, fmt.Errorf("archive: document %s: %w", d.Clave, err)
	}
	var b bytes.Buffer
	if err := pdf.Render(&b, in); err != nil {
		return parts, fmt.Errorf("document %s: %w: %w", d.Clave, ErrNoPDF, err)
	}
	return append(parts, Part{PartPDF, b.Bytes()}), nil
}

// ReceivedParts are the objects of a settled received document: the
// supplier's XML as uploaded, our signed message, the tax authority's
// answer to it (when there is one) and the supplier's document printed
// (as GET /api/received/{clave}/pdf/v4 draws it by print). A PDF that
// cannot be drawn is left out, as in DocumentParts.
func ReceivedParts(r tenant.ReceivedDocument, print printed.Printer) ([]Part, error) {
	if len(r.SupplierXML) == 0 {
		return nil, fmt.Errorf("archive: received document %s has no supplier XML", r.Clave)
	}
	parts := []Part{{PartSupplier, r.SupplierXML}}
	if len(r.SignedXML) > 0 {
		parts = append(parts, Part{PartMessage, r.SignedXML})
	}
	if len(r.ResponseXML) > 0 {
		parts = append(parts, Part{PartResponse, r.ResponseXML})
	}
	in, err := print.Received(r, nil, "")
	if err != nil {
		return parts, fmt.Errorf("received document %s: %w: %w", r.Clave, ErrNoPDF, err)
	}
	var b bytes.Buffer
	if err := pdf.Render(&b, in); err != nil {
		return parts, fmt.Errorf("received document %s: %w: %w", r.Clave, ErrNoPDF, err)
	}
	return append(parts, Part{PartPDF, b.Bytes()}), nil
}

// Location is where the client archives row now: its bucket and
// Key(prefix, row). A row archived already is read where it was recorded
// (Located), which a change of FACTURAD_ARCHIVE_URL does not move.
func (c *Client) Location(row tenant.ArchiveRow) tenant.ArchiveLocation {
	return tenant.ArchiveLocation{Bucket: c.bucket, Key: Key(c.prefix, row)}
}

// Located is where row's objects are: loc, as the store recorded it when
// the row was archived, or (a row with no record) Location(row). A bucket
// of the record is read through this client's endpoint and credentials.
func (c *Client) Located(loc tenant.ArchiveLocation, row tenant.ArchiveRow) tenant.ArchiveLocation {
	if loc.Key == "" {
		return c.Location(row)
	}
	if loc.Bucket == "" {
		loc.Bucket = c.bucket
	}
	return loc
}

// Write ensures every part under loc (as Client.Ensure does) and returns
// how many objects it wrote; an error leaves the row to be written again.
func (c *Client) Write(ctx context.Context, loc tenant.ArchiveLocation, parts []Part) (written int, err error) {
	for _, p := range parts {
		w, err := c.ensure(ctx, loc.Bucket, path.Join(loc.Key, p.Name), p.Data)
		if w {
			written++
		}
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// DefaultRetryAfter is the Retry-After of a read the archive cannot
// answer.
const DefaultRetryAfter = 30 * time.Second

// Reader fills the parts a store has dropped from the archive.
type Reader struct {
	C          *Client
	Log        *slog.Logger
	RetryAfter time.Duration
	// Read, when set, counts the reads from the archive by outcome
	// ("ok", "unavailable").
	Read func(outcome string)
}

// get reads part name under loc; a missing optional part reads empty.
func (r *Reader) get(ctx context.Context, loc tenant.ArchiveLocation, name string, required bool) ([]byte, error) {
	b, err := r.C.get(ctx, loc.Bucket, path.Join(loc.Key, name))
	if errors.Is(err, ErrNoObject) && !required {
		return nil, nil
	}
	return b, err
}

// fail is the error of a read the archive did not answer: a missing
// required object is a plain error (the archive lost it: a 500 and a log
// line), anything else the archive being unreachable (a 503).
func (r *Reader) fail(row tenant.ArchiveRow, err error) error {
	if r.Read != nil {
		r.Read("unavailable")
	}
	if errors.Is(err, ErrNoObject) {
		return fmt.Errorf("archive: %s %s of company %d is missing from the archive: %w", row.Kind, row.Clave, row.CompanyID, err)
	}
	log := r.Log
	if log == nil {
		log = slog.Default()
	}
	log.Warn("archive: a dropped document cannot be read from the archive", "kind", string(row.Kind), "clave", row.Clave, "err", err)
	after := r.RetryAfter
	if after <= 0 {
		after = DefaultRetryAfter
	}
	return &tenant.ArchiveUnavailableError{Clave: row.Clave, After: after}
}

// FillDocument gives d its parts back from the archive when the store
// dropped them, from where d.Archive says it was archived; a document with its parts is left alone, and so is one
// read for a caller that needs none (tenant.WithoutArchivedParts).
func (r *Reader) FillDocument(ctx context.Context, d *tenant.Document) error {
	if !d.PartsDropped() || !tenant.ArchivedPartsWanted(ctx) {
		return nil
	}
	row := DocumentRow(*d)
	loc := r.C.Located(d.Archive, row)
	signed, err := r.get(ctx, loc, PartSigned, true)
	if err != nil {
		return r.fail(row, err)
	}
	resp, err := r.get(ctx, loc, PartResponse, false)
	if err != nil {
		return r.fail(row, err)
	}
	d.SignedXML, d.ResponseXML = signed, resp
	if r.Read != nil {
		r.Read("ok")
	}
	return nil
}

// FillReceived gives rd its parts back from the archive when the store
// dropped them, unless the caller needs none (as FillDocument).
func (r *Reader) FillReceived(ctx context.Context, rd *tenant.ReceivedDocument) error {
	if !rd.PartsDropped() || !tenant.ArchivedPartsWanted(ctx) {
		return nil
	}
	row := ReceivedRow(*rd)
	loc := r.C.Located(rd.Archive, row)
	supplier, err := r.get(ctx, loc, PartSupplier, true)
	if err != nil {
		return r.fail(row, err)
	}
	msg, err := r.get(ctx, loc, PartMessage, false)
	if err != nil {
		return r.fail(row, err)
	}
	resp, err := r.get(ctx, loc, PartResponse, false)
	if err != nil {
		return r.fail(row, err)
	}
	rd.SupplierXML, rd.SignedXML, rd.ResponseXML = supplier, msg, resp
	if r.Read != nil {
		r.Read("ok")
	}
	return nil
}
