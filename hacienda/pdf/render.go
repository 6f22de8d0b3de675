package pdf

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"facturad/hacienda"
)

// Input is what the printed document shows: the v4.4 document, as read
// back from its signed XML (the source of truth: what was signed and sent
// is what is printed), and what the service knows of it beside the XML.
type Input struct {
	// Document is the document to print, normally from [FromSignedXML].
	Document *hacienda.Document
	// Estado is the document's state code of the contract (00 pending, 01
	// accepted, 02 rejected, 03 error, 04 sent, 05 not sent yet). It is
	// printed with its Spanish name; "" prints no state.
	Estado string
	// MensajeHacienda is the tax authority's message about the document
	// (the reason of a rejection); printed when not empty.
	MensajeHacienda string
}

// ErrNoDocument is returned by Render for an Input without a Document.
var ErrNoDocument = errors.New("pdf: no document to render")

// FromSignedXML reads a stored signed v4.4 document (any of the seven
// issued types) into an Input with the state estado. The signature is not
// checked here: the bytes come from the service's own store.
func FromSignedXML(signed []byte, estado string) (Input, error) {
	d, err := hacienda.ParseXML(signed)
	if err != nil {
		return Input{}, fmt.Errorf("pdf: read the signed document: %w", err)
	}
	return Input{Document: d, Estado: estado}, nil
}

// RenderSignedXML writes the printed representation of a stored signed
// document to w: FromSignedXML then Render, with the tax authority's
// mensaje under the state when not empty.
func RenderSignedXML(w io.Writer, signed []byte, estado, mensaje string) error {
	in, err := FromSignedXML(signed, estado)
	if err != nil {
		return err
	}
	in.MensajeHacienda = mensaje
	return Render(w, in)
}

// Page geometry, in millimetres: US Letter, the paper of Costa Rican
// offices, portrait.
const (
	pageW, pageH  = 215.9, 279.4
	marginX       = 12.0
	marginTop     = 12.0
	bodyBottom    = pageH - 16.0 // the footer lives below
	contentW      = pageW - 2*marginX
	lineH         = 3.3 // a line of table text
	tablePad      = 0.9 // above and below a table row's text
	sectionGap    = 3.5
	fontFamily    = "Helvetica"
	qrSize        = 34.0
	textSize      = 7.5
	smallTextSize = 6.3
)

// Colours.
var (
	colorText   = [3]int{25, 25, 25}
	colorMuted  = [3]int{95, 95, 95}
	colorAccent = [3]int{16, 62, 112}
	colorRule   = [3]int{170, 170, 170}
	colorHead   = [3]int{226, 232, 240}
	colorStripe = [3]int{246, 247, 249}
	colorOK     = [3]int{20, 110, 50}
	colorBad    = [3]int{170, 25, 25}
)

// Render writes the printed representation of in.Document to w as a PDF:
// the document type's title, clave, consecutivo, date and state together
// at the top beside a QR code of the clave; the issuer and the receiver;
// the sale's conditions, means of payment and currency; every line; the
// other charges; the tax breakdown and the summary's totals; the total in
// words; the references; the free texts. Long documents continue on as
// many pages as they need, each with the document's identification and
// the lines' header repeated, numbered "Página N de M".
//
// The output depends only on the input (its creation date is the
// document's issue date), so the same document renders to the same bytes.
func Render(w io.Writer, in Input) error {
	if in.Document == nil {
		return ErrNoDocument
	}
	r, err := newRenderer(in)
	if err != nil {
		return err
	}
	r.f = newWriter(w, r.meta())
	r.f.footer = r.footer
	r.document()
	if err := r.f.close(); err != nil {
		return fmt.Errorf("pdf: write %s %s: %w", in.Document.Type.Abbrev(), in.Document.Clave, err)
	}
	return nil
}

// renderer draws one document.
type renderer struct {
	f     *writer
	in    Input
	d     *hacienda.Document
	title string
	qr    [][]bool
	// inLines is set while the lines' table is being drawn, so that a new
	// page repeats its header.
	inLines bool
	cols    []column
}

func newRenderer(in Input) (*renderer, error) {
	d := in.Document
	title := "Comprobante electrónico " + string(d.Type)
	if d.Type.Valid() {
		title = d.Type.Name()
	}
	r := &renderer{in: in, d: d, title: title}
	if d.Clave != "" {
		rows, err := qrModules(d.Clave)
		if err != nil {
			return nil, fmt.Errorf("pdf: %s %s: %w", d.Type.Abbrev(), d.Clave, err)
		}
		r.qr = rows
	}
	return r, nil
}

// meta is the PDF's document information: the title and consecutivo,
// the clave, the issuer; its date is the document's issue date, so that
// the same document gives the same bytes.
func (r *renderer) meta() info {
	d := r.d
	return info{
		title:    r.title + " " + d.NumeroConsecutivo,
		subject:  "Clave " + d.Clave,
		author:   d.Emisor.Nombre,
		creator:  "facturad",
		producer: "facturad",
		created:  d.FechaEmision,
		lang:     "es-CR",
	}
}

// setFont sets the font; style is "", "B" or "I".
func (r *renderer) setFont(style string, size float64) { r.f.setFont(style, size) }

func (r *renderer) setColor(c [3]int)     { r.f.setTextColor(c) }
func (r *renderer) setFill(c [3]int)      { r.f.setFillColor(c) }
func (r *renderer) setDrawColor(c [3]int) { r.f.setDrawColor(c) }

// put writes one line of text in a w-wide cell at (x, y), aligned "L",
// "C" or "R"; s is UTF-8.
func (r *renderer) put(x, y, w, h float64, s, align string) {
	r.f.setXY(x, y)
	r.f.cell(w, h, encode(s), align)
}

// wrap splits UTF-8 text into the encoded lines that fit w in the
// current font; an empty text gives no line.
func (r *renderer) wrap(s string, w float64) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return r.f.splitLines(encode(s), w)
}

// putEncoded writes an already encoded line.
func (r *renderer) putEncoded(x, y, w, h float64, s, align string) {
	r.f.setXY(x, y)
	r.f.cell(w, h, s, align)
}

// rule draws a horizontal line across the content at y.
func (r *renderer) rule(y float64) {
	r.setDrawColor(colorRule)
	r.f.setLineWidth(0.2)
	r.f.line(marginX, y, pageW-marginX, y)
}

// space makes sure h millimetres are left on the page, starting a new
// page when they are not, and returns the y to draw at.
func (r *renderer) space(h float64) float64 {
	if y := r.f.getY(); y+h <= bodyBottom {
		return y
	}
	r.newPage()
	return r.f.getY()
}

// newPage starts a continuation page: the document's identification, and
// the lines' header when the lines go on.
func (r *renderer) newPage() {
	r.f.addPage()
	y := marginTop
	r.setColor(colorAccent)
	r.setFont("B", 10)
	r.put(marginX, y, contentW/2, 5, r.title, "L")
	r.setColor(colorText)
	r.setFont("", 8)
	r.put(marginX+contentW/2, y, contentW/2, 5, "Consecutivo "+r.d.NumeroConsecutivo, "R")
	y += 5
	r.setColor(colorMuted)
	r.setFont("", 7)
	r.put(marginX, y, contentW, 4, "Clave "+r.d.Clave+" (continuación)", "L")
	y += 5
	r.rule(y)
	r.f.setY(y + 2)
	if r.inLines {
		r.tableHeader(r.cols)
	}
}

// footer closes every page with its number.
func (r *renderer) footer() {
	y := pageH - 11
	r.rule(y)
	r.setFont("", 6.5)
	r.setColor(colorMuted)
	r.put(marginX, y+1, contentW-40, 4, r.title+" "+r.d.NumeroConsecutivo+" · Representación impresa de un comprobante electrónico v4.4", "L")
	r.setFont("B", footerNumberSize)
	r.setColor(colorText)
	r.f.setXY(pageW-marginX-28, y+1)
	r.f.cellWithPageCount(28, 4, encode("Página "+strconv.Itoa(r.f.pageNumber())+" de "))
}

// document draws the whole document.
func (r *renderer) document() {
	r.f.addPage()
	r.heading()
	r.parties()
	r.conditions()
	r.lines()
	r.otherCharges()
	r.totals()
	r.references()
	r.others()
	r.hacienda()
}

// heading draws the title, the clave, the consecutivo, the date, the
// state and the situation together (Anexo 1, nota 1) beside the QR code.
func (r *renderer) heading() {
	d := r.d
	y := marginTop
	textW := contentW - qrSize - 4
	r.setColor(colorAccent)
	r.setFont("B", 16)
	r.put(marginX, y, textW, 8, r.title, "L")
	y += 10

	type fact struct{ label, value string }
	facts := []fact{
		{"Clave numérica", d.Clave},
		{"Consecutivo", d.NumeroConsecutivo},
		{"Fecha de emisión", dateTime(d.FechaEmision)},
	}
	if len(d.Clave) == 50 {
		if s, ok := situaciones[d.Clave[41]]; ok {
			facts = append(facts, fact{"Situación", s})
		}
	}
	for _, ft := range facts {
		r.setColor(colorMuted)
		r.setFont("", 8)
		r.put(marginX, y, 30, 4.6, ft.label, "L")
		r.setColor(colorText)
		r.setFont("B", 9)
		r.put(marginX+30, y, textW-30, 4.6, ft.value, "L")
		y += 4.8
	}
	if r.in.Estado != "" {
		name := estados[r.in.Estado]
		c := colorText
		switch r.in.Estado {
		case "01":
			c = colorOK
		case "02", "03":
			c = colorBad
		}
		r.setColor(colorMuted)
		r.setFont("", 8)
		r.put(marginX, y, 30, 4.6, "Estado", "L")
		r.setColor(c)
		r.setFont("B", 9)
		r.put(marginX+30, y, textW-30, 4.6, strings.TrimSpace(r.in.Estado+" "+name), "L")
		y += 4.8
	}
	if r.qr != nil {
		qx := pageW - marginX - qrSize
		drawQR(r.f, r.qr, qx, marginTop, qrSize)
	}
	y = max(y, marginTop+qrSize) + 2
	r.rule(y)
	r.f.setY(y + sectionGap)
}

// partyBlock is one party's lines, ready to draw.
type partyBlock struct {
	heading string
	lines   []styled
}

// styled is one encoded line of a block and its style.
type styled struct {
	s    string
	bold bool
}

// parties draws the issuer and the receiver side by side.
func (r *renderer) parties() {
	d := r.d
	emisor, receptor := "Emisor", "Receptor"
	if info, _ := d.Type.Info(); info.IssuedByBuyer {
		emisor, receptor = "Emisor (vendedor)", "Receptor (comprador)"
	}
	colW := (contentW - 4) / 2
	blocks := []partyBlock{
		r.partyLines(emisor, &d.Emisor, d.CodigoActividadEmisor, colW),
		r.partyLines(receptor, d.Receptor, d.CodigoActividadReceptor, colW),
	}
	n := max(len(blocks[0].lines), len(blocks[1].lines))
	h := 5.5 + float64(n)*3.6 + 1.5
	y := r.space(h)
	for i, b := range blocks {
		x := marginX + float64(i)*(colW+4)
		r.setFill(colorHead)
		r.f.fillRect(x, y, colW, 5)
		r.setColor(colorAccent)
		r.setFont("B", 8.5)
		r.put(x, y, colW, 5, b.heading, "L")
		ly := y + 5.5
		for _, l := range b.lines {
			r.setColor(colorText)
			if l.bold {
				r.setFont("B", 8.5)
			} else {
				r.setFont("", 7.5)
			}
			r.putEncoded(x, ly, colW, 3.6, l.s, "L")
			ly += 3.6
		}
	}
	r.f.setY(y + h + sectionGap - 1)
}

// partyLines lays out one party: name, trade name, identification,
// activity, address, phone and e-mail; a document without a receptor
// says so.
func (r *renderer) partyLines(heading string, p *hacienda.Party, actividad string, w float64) partyBlock {
	b := partyBlock{heading: heading}
	add := func(s string, bold bool, size float64) {
		style := ""
		if bold {
			style = "B"
		}
		r.setFont(style, size)
		for _, l := range r.wrap(s, w) {
			b.lines = append(b.lines, styled{s: l, bold: bold})
		}
	}
	if p == nil {
		add("Sin receptor identificado (consumidor final)", false, 7.5)
		return b
	}
	add(p.Nombre, true, 8.5)
	if p.NombreComercial != "" {
		add("Nombre comercial: "+p.NombreComercial, false, 7.5)
	}
	if !p.Identificacion.IsZero() {
		add(descriptionOnly(tiposIdentificacion, p.Identificacion.Tipo)+": "+p.Identificacion.Numero, false, 7.5)
	}
	if p.Registrofiscal8707 != "" {
		add("Registro fiscal 8707: "+p.Registrofiscal8707, false, 7.5)
	}
	if actividad != "" {
		add("Actividad económica: "+actividad, false, 7.5)
	}
	if u := p.Ubicacion; u != nil {
		add("Dirección: "+address(u), false, 7.5)
	}
	if p.OtrasSenasExtranjero != "" {
		add("Dirección en el extranjero: "+p.OtrasSenasExtranjero, false, 7.5)
	}
	if t := p.Telefono; t != nil && t.NumTelefono != "" {
		add("Teléfono: "+strings.TrimSpace("+"+t.CodigoPais+" "+t.NumTelefono), false, 7.5)
	}
	if len(p.CorreoElectronico) > 0 {
		add("Correo electrónico: "+strings.Join(p.CorreoElectronico, ", "), false, 7.5)
	}
	return b
}

// address writes a Costa Rican address: the province's name, the cantón
// and district codes (the catalogue of their names is not part of the
// service), the barrio and the other signs.
func address(u *hacienda.Ubicacion) string {
	var parts []string
	if p := provincias[u.Provincia]; p != "" {
		parts = append(parts, p)
	} else if u.Provincia != "" {
		parts = append(parts, "provincia "+u.Provincia)
	}
	if u.Canton != "" {
		parts = append(parts, "cantón "+u.Canton)
	}
	if u.Distrito != "" {
		parts = append(parts, "distrito "+u.Distrito)
	}
	if u.Barrio != "" {
		parts = append(parts, u.Barrio)
	}
	if u.OtrasSenas != "" {
		parts = append(parts, u.OtrasSenas)
	}
	return strings.Join(parts, ", ")
}

// conditions draws the sale condition, credit term, means of payment,
// currency and exchange rate.
func (r *renderer) conditions() {
	d := r.d
	rf := d.ResumenFactura
	type item struct{ label, value string }
	venta := described(condicionesVenta, d.CondicionVenta)
	if d.CondicionVentaOtros != "" {
		venta += ": " + d.CondicionVentaOtros
	}
	left := []item{{"Condición de venta", venta}}
	if d.PlazoCredito > 0 {
		dias := " días"
		if d.PlazoCredito == 1 {
			dias = " día"
		}
		left = append(left, item{"Plazo de crédito", strconv.Itoa(d.PlazoCredito) + dias})
	}
	var medios []string
	for _, m := range rf.MedioPago {
		s := described(mediosPago, m.TipoMedioPago)
		if m.MedioPagoOtros != "" {
			s += ": " + m.MedioPagoOtros
		}
		if m.TotalMedioPago.IsSet() && len(rf.MedioPago) > 1 {
			s += " (" + money(m.TotalMedioPago) + ")"
		}
		medios = append(medios, s)
	}
	if len(medios) > 0 {
		label := "Medio de pago"
		if len(medios) > 1 {
			label = "Medios de pago"
		}
		left = append(left, item{label, strings.Join(medios, "; ")})
	}
	moneda := rf.CodigoTipoMoneda.CodigoMoneda
	if moneda == "" {
		moneda = "CRC"
	}
	right := []item{{"Moneda", moneda}}
	if tc := rf.CodigoTipoMoneda.TipoCambio; tc.IsSet() {
		right = append(right, item{"Tipo de cambio", quantity(tc)})
	}

	// Two columns of label: value.
	colW := (contentW - 4) / 2
	labelW := 30.0
	type laid struct {
		label string
		lines []string
	}
	r.setFont("", 7.5)
	lay := func(items []item) []laid {
		var out []laid
		for _, it := range items {
			out = append(out, laid{it.label, r.wrap(it.value, colW-labelW)})
		}
		return out
	}
	columns := [][]laid{lay(left), lay(right)}
	height := func(ls []laid) float64 {
		h := 0.0
		for _, l := range ls {
			h += float64(max(1, len(l.lines))) * 3.6
		}
		return h
	}
	h := max(height(columns[0]), height(columns[1])) + 2
	y := r.space(h)
	for c, ls := range columns {
		x := marginX + float64(c)*(colW+4)
		ly := y + 1
		for _, l := range ls {
			r.setColor(colorMuted)
			r.setFont("", 7.5)
			r.put(x, ly, labelW, 3.6, l.label, "L")
			r.setColor(colorText)
			for _, s := range l.lines {
				r.putEncoded(x+labelW, ly, colW-labelW, 3.6, s, "L")
				ly += 3.6
			}
			if len(l.lines) == 0 {
				ly += 3.6
			}
		}
	}
	r.rule(y + h)
	r.f.setY(y + h + sectionGap)
}
