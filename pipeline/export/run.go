package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/api"
	"facturad/hacienda/pdf"
	"facturad/tenant"
)

// run is one export being written.
type run struct {
	x   *Export
	z   *zipWriter
	csv *csv.Writer
	pdf bytes.Buffer // reused for each document's PDF

	issued, received int
}

// all writes the issued documents, then the received ones.
func (r *run) all(ctx context.Context) error {
	x := r.x
	q := tenant.ListQuery{CompanyID: x.companyID, Desde: x.desde, Hasta: x.hasta, Limit: x.e.o.PageSize}
	for {
		rows, err := x.e.o.Documents.ListDocuments(ctx, q)
		if err != nil {
			return fmt.Errorf("list documents: %w", err)
		}
		for _, row := range rows {
			if err := r.issuedDoc(ctx, row); err != nil {
				return err
			}
		}
		if len(rows) < q.Limit {
			break
		}
		k := rows[len(rows)-1].ListKey()
		q.After = &k
	}
	if x.e.o.Received == nil {
		return nil
	}
	q.After = nil
	for {
		rows, err := x.e.o.Received.ListReceived(ctx, q)
		if err != nil {
			return fmt.Errorf("list received documents: %w", err)
		}
		for _, row := range rows {
			if err := r.receivedDoc(ctx, row); err != nil {
				return err
			}
		}
		if len(rows) < q.Limit {
			break
		}
		k := rows[len(rows)-1].ListKey()
		q.After = &k
	}
	return nil
}

// issuedDoc writes one issued document's files and its index line. A
// listed row that has no clave yet (numbered, never signed) has an index
// line and no files.
func (r *run) issuedDoc(ctx context.Context, row tenant.Document) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.issued++
	line := indexLine{origen: OrigenEmitido, tipo: row.Tipo, clave: row.Clave, consecutivo: row.Consecutivo,
		fecha: row.FechaEmision, estado: string(row.Estado)}
	if row.Clave == "" {
		line.nota = append(line.nota, "numerado sin clave: no firmado")
		return r.line(line)
	}
	d, err := r.x.e.o.Documents.DocumentByClave(ctx, row.Clave)
	if err != nil {
		return fmt.Errorf("read document %s: %w", row.Clave, err)
	}
	if d.CompanyID != r.x.companyID {
		return fmt.Errorf("read document %s: of company %d, listed for %d", row.Clave, d.CompanyID, r.x.companyID)
	}
	line.estado, line.consecutivo, line.fecha = string(d.Estado), d.Consecutivo, d.FechaEmision
	at := d.FechaEmision
	base := dirIssued + d.Clave
	if len(d.SignedXML) == 0 {
		line.nota = append(line.nota, "sin XML firmado todavía (estado 00)")
		return r.line(line)
	}
	if err := r.file(&line.xml, base+".xml", at, d.SignedXML); err != nil {
		return err
	}
	if len(d.ResponseXML) > 0 {
		if err := r.file(&line.respuesta, base+"-respuesta.xml", at, d.ResponseXML); err != nil {
			return err
		}
	} else {
		line.nota = append(line.nota, "sin respuesta de Hacienda todavía")
	}
	doc, err := hacienda.ParseXML(d.SignedXML)
	if err != nil {
		line.nota = append(line.nota, "XML firmado ilegible: sin PDF")
		return r.line(line)
	}
	line.fromDocument(doc)
	in, err := r.x.e.o.Printer.Issued(ctx, d, doc, "")
	if err != nil {
		return fmt.Errorf("print document %s: %w", d.Clave, err)
	}
	if err := r.printed(ctx, &line, base+".pdf", at, in); err != nil {
		return err
	}
	return r.line(line)
}

// receivedDoc writes one received document's files (the supplier's XML,
// the company's message and the tax authority's answer to it, the
// supplier's document printed) and its index line.
func (r *run) receivedDoc(ctx context.Context, row tenant.ReceivedDocument) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.received++
	d, err := r.x.e.o.Received.ReceivedByClave(ctx, r.x.companyID, row.Clave)
	if err != nil {
		return fmt.Errorf("read received document %s: %w", row.Clave, err)
	}
	line := indexLine{origen: OrigenRecibido, tipo: d.TipoDocumento, clave: d.Clave, fecha: d.FechaEmision,
		estado: string(d.Estado), emisorID: d.EmisorNumero, emisorNombre: d.EmisorNombre, receptorID: d.ReceptorNumero,
		impuesto: d.TotalImpuesto, total: d.TotalComprobante, mensaje: d.Mensaje, consecutivoMensaje: d.Consecutivo}
	if c, err := hacienda.ParseClave(d.Clave); err == nil {
		line.consecutivo = c.Consecutivo.String()
	}
	at := d.FechaEmision
	base := dirReceived + d.Clave
	if err := r.file(&line.xml, base+".xml", at, d.SupplierXML); err != nil {
		return err
	}
	if len(d.SignedXML) > 0 {
		if err := r.file(&line.mensajeXML, base+"-mensaje.xml", at, d.SignedXML); err != nil {
			return err
		}
	} else {
		line.nota = append(line.nota, "mensaje receptor sin firmar todavía")
	}
	if len(d.ResponseXML) > 0 {
		if err := r.file(&line.respuesta, base+"-respuesta.xml", at, d.ResponseXML); err != nil {
			return err
		}
	} else {
		line.nota = append(line.nota, "sin respuesta de Hacienda al mensaje todavía")
	}
	doc, err := hacienda.ParseXML(d.SupplierXML)
	if err != nil {
		line.nota = append(line.nota, "XML del proveedor ilegible: sin PDF")
		return r.line(line)
	}
	line.fromDocument(doc)
	// Printed as the PDF route prints it: accepted, whatever became of
	// the message (a document is received only once accepted).
	in, err := r.x.e.o.Printer.Received(d, doc, "")
	if err != nil {
		return fmt.Errorf("print received document %s: %w", d.Clave, err)
	}
	if err := r.printed(ctx, &line, base+".pdf", at, in); err != nil {
		return err
	}
	return r.line(line)
}

// file writes one XML entry and records its name.
func (r *run) file(name *string, path string, at time.Time, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if err := r.z.add(path, at, b, true); err != nil {
		return err
	}
	*name = path
	return nil
}

// printed draws in (made as the PDF routes make it), within the process's
// bound on renders, and writes it; a document that cannot be drawn gets a note
// instead (the export goes on).
func (r *run) printed(ctx context.Context, line *indexLine, path string, at time.Time, in pdf.Input) error {
	r.pdf.Reset()
	if err := r.render(ctx, in); err != nil {
		if ctx.Err() != nil {
			return err
		}
		line.nota = append(line.nota, "no se pudo generar el PDF")
		return nil
	}
	// A PDF's streams are compressed already: stored as drawn.
	if err := r.z.add(path, at, r.pdf.Bytes(), false); err != nil {
		return err
	}
	line.pdf = path
	if r.pdf.Cap() > 8<<20 {
		r.pdf = bytes.Buffer{} // do not keep an unusually large one
	}
	return nil
}

// indexLine is one line of the CSV index.
type indexLine struct {
	origen, tipo, clave, consecutivo string
	fecha                            time.Time
	estado                           string
	emisorID, emisorNombre           string
	receptorID, receptorNombre       string
	moneda, impuesto, total          string
	mensaje, consecutivoMensaje      string
	xml, respuesta, mensajeXML, pdf  string
	nota                             []string
}

// fromDocument fills what the index shows of the parsed XML: the parties,
// the currency and the totals as written.
func (l *indexLine) fromDocument(d *hacienda.Document) {
	l.emisorID, l.emisorNombre = d.Emisor.Identificacion.Numero, d.Emisor.Nombre
	if d.Receptor != nil {
		l.receptorID, l.receptorNombre = d.Receptor.Identificacion.Numero, d.Receptor.Nombre
	}
	res := d.ResumenFactura
	l.moneda = res.CodigoTipoMoneda.CodigoMoneda
	if l.moneda == "" {
		l.moneda = "CRC" // the schema's default when the element is absent
	}
	if res.TotalImpuesto.IsSet() {
		l.impuesto = res.TotalImpuesto.String()
	}
	if res.TotalComprobante.IsSet() {
		l.total = res.TotalComprobante.String()
	}
}

func (r *run) line(l indexLine) error {
	fecha := ""
	if !l.fecha.IsZero() {
		fecha = api.LocalTime(l.fecha)
	}
	nota := ""
	for i, n := range l.nota {
		if i > 0 {
			nota += "; "
		}
		nota += n
	}
	// Names, identifications and codes come from the XML, a supplier's
	// for received documents: every text cell is neutralised against
	// formula injection, the two amounts only when not plain numbers
	// (decision 124).
	cells := []string{l.origen, l.tipo, l.clave, l.consecutivo, fecha, l.estado,
		l.emisorID, l.emisorNombre, l.receptorID, l.receptorNombre, l.moneda, l.impuesto, l.total,
		l.mensaje, l.consecutivoMensaje, l.xml, l.respuesta, l.mensajeXML, l.pdf, nota}
	for i, c := range cells {
		if i == indexTotalImpuesto || i == indexTotalComprobante {
			cells[i] = api.CSVNumber(c)
		} else {
			cells[i] = api.CSVText(c)
		}
	}
	if err := r.csv.Write(cells); err != nil {
		return fmt.Errorf("export: index: %w", err)
	}
	return nil
}

// The amount columns of IndexColumns.
const (
	indexTotalImpuesto    = 11
	indexTotalComprobante = 12
)

// render draws in into r.pdf holding a render slot, which it frees before
// the PDF goes out to a caller that may read it slowly.
func (r *run) render(ctx context.Context, in pdf.Input) error {
	if w := r.x.e.o.Renders; w != nil {
		release, err := w.WaitRender(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	return pdf.Render(&r.pdf, in)
}
