package pdf

import (
	"errors"
	"fmt"
	"io"
	"math"
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
	// Ambiente is the environment the document was issued in. A document
	// of the tax authority's test environment or of the built-in sandbox
	// is marked on every page as having no validity; "" is not marked.
	Ambiente Ambiente
	// Formato is the layout: letter paper, or the 80 mm ticket of a
	// receipt printer; "" chooses by the document's type (FormatoFor).
	Formato Formato
	// Logo is the issuer's logo (from ParseLogo or CachedLogo), printed
	// at the top; nil prints none.
	Logo *Logo
	// Notas are the issuer's own notes (bank accounts, a return policy),
	// printed after the document under "Notas del emisor", one paragraph a
	// line; "" prints none.
	Notas string
}

// Ambiente is the environment a document was issued in.
type Ambiente string

// The environments: the tax authority's production and test ones (the
// contract's company ambiente, A.14), and the simulator built into the
// service (FACTURAD_HACIENDA_ENV=sandbox), which no document of which
// reaches the tax authority.
const (
	AmbienteProduccion Ambiente = "produccion"
	AmbientePruebas    Ambiente = "pruebas"
	AmbienteSandbox    Ambiente = "sandbox"
)

// test reports whether a document of a is without validity and marked so.
func (a Ambiente) test() bool { return a == AmbientePruebas || a == AmbienteSandbox }

// Formato is a layout of the printed document.
type Formato string

// The layouts: US Letter, and a receipt printer's 80 mm roll (one column,
// each page as long as its content).
const (
	FormatoCarta  Formato = "carta"
	FormatoTicket Formato = "ticket"
)

// FormatoFor is the layout a document of type t prints in when none is
// asked for: the ticket for a Tiquete Electrónico, letter paper for the
// others.
func FormatoFor(t hacienda.DocumentType) Formato {
	if t == hacienda.TypeTE {
		return FormatoTicket
	}
	return FormatoCarta
}

// ParseFormato reads a layout's name ("carta" or "ticket", case aside);
// "" is no choice.
func ParseFormato(s string) (Formato, error) {
	switch f := Formato(strings.ToLower(strings.TrimSpace(s))); f {
	case "", FormatoCarta, FormatoTicket:
		return f, nil
	}
	return "", fmt.Errorf("pdf: unknown layout %q: %q or %q", s, FormatoCarta, FormatoTicket)
}

// Leyenda is the authorisation legend every printed document carries: the
// resolution of the Dirección General de Tributación that sets the v4.4
// documents, with its date, as the printed documents customarily cite it
// (docs/decisions-v44.md).
const Leyenda = "Autorizada mediante resolución N° MH-DGT-RES-0027-2024 del 13 de noviembre de 2024"

// The test mark of a document issued in a test environment.
const (
	// markTitle heads the first page and ends every page's footer.
	markTitle = "SIN VALIDEZ TRIBUTARIA — AMBIENTE DE PRUEBAS"
	// markWatermark is written across every page.
	markWatermark = "SIN VALIDEZ"
)

// markLine explains the mark under it.
func markLine(a Ambiente) string {
	if a == AmbienteSandbox {
		return "Emitido en el simulador de pruebas del servicio: no fue enviado al Ministerio de Hacienda y no es un comprobante electrónico."
	}
	return "Emitido en el ambiente de pruebas del Ministerio de Hacienda: no es un comprobante electrónico válido."
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
// mensaje under the state when not empty. It knows nothing of the
// environment the document was issued in, so it prints no test mark (nor
// a logo or notes): the service prints its documents through
// tenant/printed, which fills the whole Input.
func RenderSignedXML(w io.Writer, signed []byte, estado, mensaje string) error {
	in, err := FromSignedXML(signed, estado)
	if err != nil {
		return err
	}
	in.MensajeHacienda = mensaje
	return Render(w, in)
}

// Page geometry, in millimetres.
const (
	lineH         = 3.3 // a line of table text
	tablePad      = 0.9 // above and below a table row's text
	sectionGap    = 3.5
	fontFamily    = "Helvetica"
	qrSize        = 34.0
	textSize      = 7.5
	smallTextSize = 6.3
)

// letter is US Letter, the paper of Costa Rican offices, portrait; the
// footer takes the last 17 mm.
var letter = paper{w: 215.9, h: 279.4, marginX: 12, marginTop: 12, bottom: 279.4 - 17}

// ticket is a receipt printer's 80 mm roll (72 mm printed): one column,
// each page cut to its content, up to half a metre; the footer's room is
// kept below the body.
var ticket = paper{w: 80, h: 500, marginX: 4, marginTop: 4, bottom: 500 - 24, fit: true}

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
	colorWhite  = [3]int{255, 255, 255}
	colorMark   = [3]int{200, 20, 20}
)

// Render writes the printed representation of in.Document to w as a PDF:
// the document type's title, clave, consecutivo, date and state together
// at the top beside a QR code of the clave; the issuer and the receiver;
// the sale's conditions, means of payment and currency; every line; the
// other charges; the tax breakdown and the summary's totals, with the
// colón equivalent of a foreign currency's; the total in words; the
// references; the free texts; the issuer's notes. Every page ends with
// the authorisation legend (Leyenda) and is numbered "Página N de M". A
// document of a test environment (Input.Ambiente) is marked on every page.
// On letter paper long documents continue on as many pages as they need,
// each with the document's identification and the lines' header
// repeated; the ticket (Input.Formato) is one column, 80 mm wide.
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
	r.f = newWriter(w, r.pg, r.meta())
	if r.ticket {
		r.f.footer = r.ticketFooter
		r.ticketDocument()
	} else {
		r.f.footer = r.footer
		r.document()
	}
	if err := r.f.close(); err != nil {
		return fmt.Errorf("pdf: write %s %s: %w", in.Document.Type.Abbrev(), in.Document.Clave, err)
	}
	return nil
}

// renderer draws one document.
type renderer struct {
	f      *writer
	pg     paper
	ticket bool
	in     Input
	d      *hacienda.Document
	title  string
	qr     [][]bool
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
	formato := in.Formato
	if formato == "" {
		formato = FormatoFor(d.Type)
	}
	r := &renderer{in: in, d: d, title: title, pg: letter}
	if formato == FormatoTicket {
		r.pg, r.ticket = ticket, true
	}
	if d.Clave != "" {
		rows, err := qrModules(d.Clave)
		if err != nil {
			return nil, fmt.Errorf("pdf: %s %s: %w", d.Type.Abbrev(), d.Clave, err)
		}
		r.qr = rows
	}
	return r, nil
}

// meta is the PDF's document information: the title and consecutivo (and
// the test mark), the clave, the issuer; its date is the document's issue
// date, so that the same document gives the same bytes.
func (r *renderer) meta() info {
	d := r.d
	title := r.title + " " + d.NumeroConsecutivo
	if r.in.Ambiente.test() {
		title += " (sin validez: ambiente de pruebas)"
	}
	return info{
		title:    title,
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
	r.f.line(r.pg.marginX, y, r.pg.w-r.pg.marginX, y)
}

// space makes sure h millimetres are left on the page, starting a new
// page when they are not, and returns the y to draw at.
func (r *renderer) space(h float64) float64 {
	if y := r.f.getY(); y+h <= r.pg.bottom {
		return y
	}
	r.newPage()
	return r.f.getY()
}

// newPage starts a continuation page: the document's identification, and
// the lines' header when the lines go on.
func (r *renderer) newPage() {
	r.f.addPage()
	if r.ticket {
		// A ticket's next page goes straight on.
		return
	}
	x, w := r.pg.marginX, r.pg.contentW()
	y := r.pg.marginTop
	r.setColor(colorAccent)
	r.setFont("B", 10)
	r.put(x, y, w/2, 5, r.title, "L")
	r.setColor(colorText)
	r.setFont("", 8)
	r.put(x+w/2, y, w/2, 5, "Consecutivo "+r.d.NumeroConsecutivo, "R")
	y += 5
	r.setColor(colorMuted)
	r.setFont("", 7)
	r.put(x, y, w, 4, "Clave "+r.d.Clave+" (continuación)", "L")
	y += 5
	r.rule(y)
	r.f.setY(y + 2)
	if r.inLines {
		r.tableHeader(r.cols)
	}
}

// footer closes every page: the test mark over it, then its identification
// and number, and the authorisation legend.
func (r *renderer) footer() {
	r.watermark(r.pg.h)
	x, w := r.pg.marginX, r.pg.contentW()
	y := r.pg.h - 14
	r.rule(y)
	r.setFont("", 6.5)
	r.setColor(colorMuted)
	r.put(x, y+1, w-40, 4, r.title+" "+r.d.NumeroConsecutivo+" · Representación impresa de un comprobante electrónico v4.4", "L")
	r.setFont("B", footerNumberSize)
	r.setColor(colorText)
	r.f.setXY(r.pg.w-x-28, y+1)
	r.f.cellWithPageCount(28, 4, encode("Página "+strconv.Itoa(r.f.pageNumber())+" de "))
	r.setFont("", 6.5)
	r.put(x, y+4.6, w, 3.6, Leyenda, "L")
	if r.in.Ambiente.test() {
		r.setColor(colorMark)
		r.setFont("B", 6.5)
		r.put(x, y+4.6, w, 3.6, markTitle, "R")
	}
}

// watermark writes the test mark across a page of a test environment's
// document, down to height (what the page holds), over what the page
// drew: a diagonal band of "SIN VALIDEZ" repeated down the page, faint
// enough to read through.
func (r *renderer) watermark(height float64) {
	if !r.in.Ambiente.test() {
		return
	}
	const angle = 0.52 // radians, 30°
	s := encode(markWatermark)
	size := 46.0
	if r.ticket {
		size = 22
	}
	tw := textWidth(s, true, size)
	dx := math.Cos(angle) * tw
	dy := math.Sin(angle) * tw
	step := dy + 30
	if r.ticket {
		step = dy + 25
	}
	// The first band goes where it fits even on a short page (the last
	// page of a ticket).
	for y := min(r.pg.marginTop+dy+8, height); y <= height; y += step {
		r.f.markText(s, size, (r.pg.w-dx)/2, y, angle, colorMark)
	}
}

// document draws the whole document on letter paper.
func (r *renderer) document() {
	r.f.addPage()
	r.heading()
	r.parties()
	r.conditions()
	r.lines()
	r.otherCharges()
	r.totals()
	r.references()
	r.texts()
}

// logoW and logoH are the most room the logo takes at the top of a letter
// page.
const logoW, logoH = 50.0, 18.0

// drawLogo draws the logo in a maxW × maxH box at (x, y), its aspect kept,
// aligned left (or centred with centre set), and returns its height.
func (r *renderer) drawLogo(x, y, maxW, maxH float64, centre bool) float64 {
	l := r.in.Logo
	if l == nil {
		return 0
	}
	w, h := maxW, maxW*float64(l.h)/float64(l.w)
	if h > maxH {
		w, h = maxH*float64(l.w)/float64(l.h), maxH
	}
	if centre {
		x += (maxW - w) / 2
	}
	r.f.drawImage(r.f.image(l), x, y, w, h)
	return h
}

// markBanner draws the test mark's band, w wide at (x, y): the mark in
// white on red, and under it what it means; it returns its height.
func (r *renderer) markBanner(x, y, w float64) float64 {
	if !r.in.Ambiente.test() {
		return 0
	}
	r.setFont("B", 9)
	title := r.wrap(markTitle, w-2)
	r.setFont("", 7)
	expl := r.wrap(markLine(r.in.Ambiente), w)
	h := float64(len(title))*4.6 + 1
	r.setFill(colorMark)
	r.f.fillRect(x, y, w, h)
	r.setColor(colorWhite)
	r.setFont("B", 9)
	for i, l := range title {
		r.putEncoded(x, y+0.5+float64(i)*4.6, w, 4.6, l, "C")
	}
	y += h + 0.5
	r.setColor(colorMark)
	r.setFont("", 7)
	for _, l := range expl {
		r.putEncoded(x, y, w, 3.4, l, "C")
		y += 3.4
	}
	return h + 0.5 + float64(len(expl))*3.4 + 1
}

// estado is the state's line: its code and Spanish name; in a test
// environment the verdict is said to be the test environment's (the
// sandbox's, which is not the tax authority), never in the green of a
// real acceptance. It returns the text and its colour.
func (r *renderer) estado() (string, [3]int) {
	code := r.in.Estado
	name := estados[code]
	c := colorText
	switch code {
	case "01":
		c = colorOK
	case "02", "03":
		c = colorBad
	}
	switch r.in.Ambiente {
	case AmbienteSandbox:
		if n, ok := estadosSandbox[code]; ok {
			name = n
		}
		name += " (sin validez)"
		c = colorMark
	case AmbientePruebas:
		name += " (ambiente de pruebas, sin validez)"
		c = colorMark
	}
	return strings.TrimSpace(code + " " + name), c
}

// heading draws the logo, the title, the test mark, the clave, the
// consecutivo, the date, the state and the situation together (Anexo 1,
// nota 1) beside the QR code.
func (r *renderer) heading() {
	x := r.pg.marginX
	y := r.pg.marginTop
	textW := r.pg.contentW() - qrSize - 4
	if h := r.drawLogo(x, y, min(logoW, textW), logoH, false); h > 0 {
		y += h + 2
	}
	r.setColor(colorAccent)
	r.setFont("B", 16)
	r.put(x, y, textW, 8, r.title, "L")
	y += 10
	y += r.markBanner(x, y, textW)

	for _, ft := range r.facts() {
		r.setColor(colorMuted)
		r.setFont("", 8)
		r.put(x, y, 30, 4.6, ft.label, "L")
		r.setColor(colorText)
		r.setFont("B", 9)
		r.put(x+30, y, textW-30, 4.6, ft.value, "L")
		y += 4.8
	}
	if r.in.Estado != "" {
		text, c := r.estado()
		r.setColor(colorMuted)
		r.setFont("", 8)
		r.put(x, y, 30, 4.6, "Estado", "L")
		r.setColor(c)
		r.setFont("B", 9)
		for _, l := range r.wrap(text, textW-30) {
			r.putEncoded(x+30, y, textW-30, 4.6, l, "L")
			y += 4.8
		}
	}
	if r.qr != nil {
		qx := r.pg.w - r.pg.marginX - qrSize
		drawQR(r.f, r.qr, qx, r.pg.marginTop, qrSize)
	}
	y = max(y, r.pg.marginTop+qrSize) + 2
	r.rule(y)
	r.f.setY(y + sectionGap)
}

// facts are the document's identification: its clave, consecutivo and
// date, and the situation its clave tells.
func (r *renderer) facts() []item {
	d := r.d
	facts := []item{
		{"Clave numérica", d.Clave},
		{"Consecutivo", d.NumeroConsecutivo},
		{"Fecha de emisión", dateTime(d.FechaEmision)},
	}
	if len(d.Clave) == 50 {
		if s, ok := situaciones[d.Clave[41]]; ok {
			facts = append(facts, item{"Situación", s})
		}
	}
	return facts
}

// partyTitles are the headings of the issuer and the receiver, which say
// which is the seller on a document the buyer issues.
func partyTitles(t hacienda.DocumentType) (emisor, receptor string) {
	if info, _ := t.Info(); info.IssuedByBuyer {
		return "Emisor (vendedor)", "Receptor (comprador)"
	}
	return "Emisor", "Receptor"
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
	emisor, receptor := partyTitles(d.Type)
	colW := (r.pg.contentW() - 4) / 2
	blocks := []partyBlock{
		r.partyLines(emisor, &d.Emisor, d.CodigoActividadEmisor, colW),
		r.partyLines(receptor, d.Receptor, d.CodigoActividadReceptor, colW),
	}
	n := max(len(blocks[0].lines), len(blocks[1].lines))
	h := 5.5 + float64(n)*3.6 + 1.5
	y := r.space(h)
	for i, b := range blocks {
		x := r.pg.marginX + float64(i)*(colW+4)
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

// address writes a Costa Rican address: the names of the province, the
// cantón and the district in the tax authority's catalogue (a code that
// is not in it is printed as the code, named by its level), the barrio
// and the other signs.
func address(u *hacienda.Ubicacion) string {
	prov, canton, distrito := hacienda.LocationNames(u.Provincia, u.Canton, u.Distrito)
	var parts []string
	for _, p := range []struct{ name, level, code string }{
		{prov, "provincia", u.Provincia},
		{canton, "cantón", u.Canton},
		{distrito, "distrito", u.Distrito},
	} {
		switch {
		case p.name != "":
			parts = append(parts, p.name)
		case p.code != "":
			parts = append(parts, p.level+" "+p.code)
		}
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
	left, right := r.conditionItems()
	r.conditionColumns(left, right)
}

// item is a label and its value.
type item struct{ label, value string }

// conditionItems are the sale's conditions (sale condition, credit term,
// means of payment) and its currency and exchange rate.
func (r *renderer) conditionItems() (left, right []item) {
	d := r.d
	rf := d.ResumenFactura
	venta := described(condicionesVenta, d.CondicionVenta)
	if d.CondicionVentaOtros != "" {
		venta += ": " + d.CondicionVentaOtros
	}
	left = []item{{"Condición de venta", venta}}
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
	right = []item{{"Moneda", currency(rf)}}
	if tc := rf.CodigoTipoMoneda.TipoCambio; tc.IsSet() {
		right = append(right, item{"Tipo de cambio", quantity(tc)})
	}
	return left, right
}

// conditionColumns draws two columns of label: value.
func (r *renderer) conditionColumns(left, right []item) {
	// Two columns of label: value.
	colW := (r.pg.contentW() - 4) / 2
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
		x := r.pg.marginX + float64(c)*(colW+4)
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
