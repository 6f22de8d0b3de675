package pdf

import (
	"strconv"
	"strings"
)

// The ticket: the same document as on letter paper, in one column 72 mm
// wide on an 80 mm page, each page as long as its content (up to half a
// metre, then the document goes on on the next): the issuer at the top,
// then the title, the test mark, the document's identification and
// state, the receiver, the conditions, the lines (each a block of its
// description, its details, its quantity × price and its total, and its
// tax), the other charges, the totals with the colón equivalent and the
// words, the tax breakdown, the references and texts, the issuer's notes,
// the QR code, and the footer with the legend and the page number.

// Ticket type sizes, in points, and the height of their lines, in mm.
const (
	tkText    = 7.5
	tkSmall   = 6.5
	tkLineH   = 3.3
	tkSmallH  = 2.9
	tkQRSize  = 30.0
	tkLogoW   = 56.0
	tkLogoH   = 22.0
	tkSection = 2.0 // the gap before a section
)

// ticketDocument draws the whole document as a ticket.
func (r *renderer) ticketDocument() {
	r.f.addPage()
	r.ticketHeading()
	r.ticketReceiver()
	left, right := r.conditionItems()
	r.tkSectionRule()
	for _, it := range append(left, right...) {
		r.tkPair(it.label+": ", it.value, tkText, false)
	}
	r.ticketLines()
	r.ticketCharges()
	r.ticketTotals()
	r.ticketReferences()
	r.ticketTexts()
	r.ticketQR()
}

// tkSectionRule draws a rule across the column, with room around it.
func (r *renderer) tkSectionRule() {
	y := r.space(tkSection+tkLineH) + tkSection/2
	r.rule(y)
	r.f.setY(y + tkSection/2)
}

// tkHeight is the height of a ticket's line of text in type of size.
func tkHeight(size float64) float64 {
	if size < tkText {
		return tkSmallH
	}
	return tkLineH
}

// styleOf is the font style of bold or regular type.
func styleOf(bold bool) string {
	if bold {
		return "B"
	}
	return ""
}

// tkTitle starts a section of the ticket: a rule, then its title.
func (r *renderer) tkTitle(title string) {
	r.tkSectionRule()
	r.tkLines(title, tkText, true, "L", colorAccent)
}

// tkLines writes text wrapped to the column in the given type, aligned
// "L" or "C", continuing on the next page when it must.
func (r *renderer) tkLines(s string, size float64, bold bool, align string, c [3]int) {
	style, h := styleOf(bold), tkHeight(size)
	r.setFont(style, size)
	for _, l := range r.wrap(s, r.pg.contentW()) {
		y := r.space(h)
		r.setFont(style, size)
		r.setColor(c)
		r.putEncoded(r.pg.marginX, y, r.pg.contentW(), h, l, align)
		r.f.setY(y + h)
	}
}

// tkPair writes a label and its value: the value after the label, wrapped
// under it when it does not fit, or (right set) the value at the right of
// the label's first line, as an amount.
func (r *renderer) tkPair(label, value string, size float64, right bool) {
	if value == "" {
		return
	}
	x, w := r.pg.marginX, r.pg.contentW()
	h := tkHeight(size)
	if right {
		r.setFont("B", size)
		vw := r.f.width(encode(value)) + 2*cellMargin
		r.setFont("", size)
		lines := r.wrap(label, w-vw)
		if len(lines) == 0 {
			lines = []string{""}
		}
		y := r.space(float64(len(lines)) * h)
		r.setColor(colorText)
		for _, l := range lines {
			r.putEncoded(x, y, w-vw, h, l, "L")
			y += h
		}
		r.setFont("B", size)
		r.put(x+w-vw, y-float64(len(lines))*h, vw, h, value, "R")
		r.f.setY(y)
		return
	}
	r.setFont("", size)
	lines := r.wrap(label+value, w)
	y := r.space(float64(len(lines)) * h)
	for i, l := range lines {
		r.setColor(colorText)
		if i == 0 {
			// The label in the muted colour, the value after it.
			lab := encode(label)
			if strings.HasPrefix(l, lab) {
				r.setColor(colorMuted)
				r.putEncoded(x, y, w, h, lab, "L")
				r.setColor(colorText)
				r.putEncoded(x+r.f.width(lab), y, w-r.f.width(lab), h, l[len(lab):], "L")
				y += h
				continue
			}
		}
		r.putEncoded(x, y, w, h, l, "L")
		y += h
	}
	r.f.setY(y)
}

// ticketHeading draws the logo and the issuer, the title, the test mark,
// and the document's identification and state.
func (r *renderer) ticketHeading() {
	x, w := r.pg.marginX, r.pg.contentW()
	y := r.pg.marginTop
	if h := r.drawLogo(x, y, min(tkLogoW, w), tkLogoH, true); h > 0 {
		r.f.setY(y + h + 2)
	}
	d := r.d
	emisor, _ := partyTitles(d.Type)
	r.tkLines(emisor, tkSmall, false, "C", colorMuted)
	b := r.partyLines("", &d.Emisor, d.CodigoActividadEmisor, w)
	for _, l := range b.lines {
		h := tkLineH
		if l.bold {
			h = 3.8
		}
		y := r.space(h)
		if l.bold {
			r.setFont("B", 8.5)
		} else {
			r.setFont("", tkText)
		}
		r.setColor(colorText)
		r.putEncoded(x, y, w, h, l.s, "C")
		r.f.setY(y + h)
	}
	r.tkSectionRule()
	r.tkLines(r.title, 11, true, "C", colorAccent)
	r.f.setY(r.f.getY() + 1)
	if r.in.Ambiente.test() {
		y := r.space(16)
		r.f.setY(y + r.markBanner(x, y, w))
	}
	for _, ft := range r.facts() {
		if ft.label == "Clave numérica" {
			// Fifty digits take the whole column.
			r.tkLines(ft.label, tkSmall, false, "L", colorMuted)
			r.tkLines(ft.value, tkSmall, true, "L", colorText)
			continue
		}
		r.tkPair(ft.label+": ", ft.value, tkText, false)
	}
	if r.in.Estado != "" {
		text, c := r.estado()
		r.setFont("B", tkText)
		lines := r.wrap("Estado: "+text, w)
		for _, l := range lines {
			y := r.space(tkLineH)
			r.setFont("B", tkText)
			r.setColor(c)
			r.putEncoded(x, y, w, tkLineH, l, "L")
			r.f.setY(y + tkLineH)
		}
	}
}

// ticketReceiver draws the receiver, or says there is none.
func (r *renderer) ticketReceiver() {
	d := r.d
	_, receptor := partyTitles(d.Type)
	r.tkTitle(receptor)
	b := r.partyLines("", d.Receptor, d.CodigoActividadReceptor, r.pg.contentW())
	for _, l := range b.lines {
		y := r.space(tkLineH)
		if l.bold {
			r.setFont("B", 8.5)
		} else {
			r.setFont("", tkText)
		}
		r.setColor(colorText)
		r.putEncoded(r.pg.marginX, y, r.pg.contentW(), tkLineH, l.s, "L")
		r.f.setY(y + tkLineH)
	}
}

// ticketLines draws each line as a block kept on one page: its number and
// description, its details, "quantity unit × price" with the line's total
// at the right, and its tax.
func (r *renderer) ticketLines() {
	d := r.d
	if len(d.DetalleServicio) == 0 {
		return
	}
	r.tkTitle("Detalle")
	x, w := r.pg.marginX, r.pg.contentW()
	for _, l := range d.DetalleServicio {
		lf := describeLine(l)
		type piece struct {
			s     string
			size  float64
			bold  bool
			c     [3]int
			right string // an amount at the right of the line
		}
		var pieces []piece
		wrapped := func(s string, size float64, bold bool, c [3]int) {
			r.setFont(styleOf(bold), size)
			for _, line := range r.wrap(s, w) {
				pieces = append(pieces, piece{s: line, size: size, bold: bold, c: c})
			}
		}
		wrapped(strconv.Itoa(l.NumeroLinea)+". "+l.Detalle, tkText, false, colorText)
		if l.CodigoCABYS != "" {
			wrapped("CABYS "+l.CodigoCABYS, tkSmall, false, colorMuted)
		}
		for _, s := range lf.subs {
			wrapped(s, tkSmall, false, colorMuted)
		}
		qty := strings.TrimSpace(quantity(l.Cantidad) + " " + l.UnidadMedida)
		if p := money(l.PrecioUnitario); p != "" {
			qty += " × " + p
		}
		if lf.discount.IsSet() && lf.discount.Sign() != 0 {
			qty += " − " + money(lf.discount)
		}
		total := money(l.MontoTotalLinea)
		r.setFont("B", tkText)
		tw := r.f.width(encode(total)) + 2*cellMargin
		r.setFont("", tkText)
		for i, line := range r.wrap(qty, w-tw) {
			p := piece{s: line, size: tkText, c: colorText}
			if i == 0 {
				p.right = total
			}
			pieces = append(pieces, p)
		}
		if lf.tax != "" {
			wrapped("Impuesto "+lf.tax+" ("+strings.Join(lf.taxSubs, "; ")+")", tkSmall, false, colorMuted)
		}
		h := 0.0
		for _, p := range pieces {
			h += tkHeight(p.size)
		}
		y := r.space(h + 0.8)
		for _, p := range pieces {
			ph := tkHeight(p.size)
			r.setFont(styleOf(p.bold), p.size)
			r.setColor(p.c)
			r.putEncoded(x, y, w, ph, p.s, "L")
			if p.right != "" {
				r.setFont("B", p.size)
				r.setColor(colorText)
				r.put(x+w-tw, y, tw, ph, p.right, "R")
			}
			y += ph
		}
		r.f.setY(y + 0.8)
	}
}

// ticketCharges draws the other charges.
func (r *renderer) ticketCharges() {
	d := r.d
	if len(d.OtrosCargos) == 0 {
		return
	}
	r.tkTitle("Otros cargos")
	for _, oc := range d.OtrosCargos {
		s := described(tiposOtrosCargos, oc.TipoDocumentoOC)
		if oc.Detalle != "" {
			s += ": " + oc.Detalle
		}
		if oc.PorcentajeOC.IsSet() {
			s += " (" + quantity(oc.PorcentajeOC) + "%)"
		}
		r.tkPair(s, money(oc.MontoCargo), tkText, true)
		if oc.TipoDocumentoOTROS != "" {
			r.tkLines(oc.TipoDocumentoOTROS, tkSmall, false, "L", colorMuted)
		}
		if oc.NombreTercero != "" || !oc.IdentificacionTercero.IsZero() {
			r.tkLines(strings.TrimSpace("Tercero: "+oc.NombreTercero+" "+oc.IdentificacionTercero.Numero), tkSmall, false, "L", colorMuted)
		}
	}
}

// ticketTotals draws the summary's amounts, the total of the document and
// its colón equivalent, the total in words and the tax breakdown.
func (r *renderer) ticketTotals() {
	rf := r.d.ResumenFactura
	r.tkSectionRule()
	for _, t := range summaryLines(rf) {
		if !t.amount.IsSet() || (!t.always && t.amount.Sign() == 0) {
			continue
		}
		r.tkPair(t.label, money(t.amount), tkText, true)
	}
	y := r.space(6.5) + 0.5
	r.setFill(colorHead)
	r.f.fillRect(r.pg.marginX, y, r.pg.contentW(), 6)
	r.setColor(colorAccent)
	r.setFont("B", 8.5)
	r.put(r.pg.marginX, y, r.pg.contentW(), 6, "Total del comprobante", "L")
	r.put(r.pg.marginX, y, r.pg.contentW(), 6, currency(rf)+" "+money(rf.TotalComprobante), "R")
	r.f.setY(y + 6.5)
	if eq, ok := colonEquivalent(rf); ok {
		r.tkPair(eq.label, eq.value, tkText, true)
	}
	r.tkLines(totalInWords(rf), tkText, true, "L", colorText)
	if len(rf.TotalDesgloseImpuesto) > 0 {
		r.f.setY(r.f.getY() + 1)
		r.tkLines("Desglose de impuestos", tkSmall, true, "L", colorMuted)
		for _, t := range rf.TotalDesgloseImpuesto {
			name := descriptionOnly(impuestos, t.Codigo)
			if t.CodigoTarifaIVA != "" {
				name += ", " + descriptionOnly(tarifasIVA, t.CodigoTarifaIVA)
			}
			r.tkPair(name, money(t.TotalMontoImpuesto), tkSmall, true)
		}
	}
}

// ticketReferences draws the references, one paragraph each.
func (r *renderer) ticketReferences() {
	d := r.d
	if len(d.InformacionReferencia) == 0 {
		return
	}
	r.tkTitle("Información de referencia")
	for _, ir := range d.InformacionReferencia {
		s := described(tiposDocReferencia, ir.TipoDocIR)
		if ir.TipoDocRefOTRO != "" {
			s += " (" + ir.TipoDocRefOTRO + ")"
		}
		s += " " + ir.Numero
		if f := dateTime(ir.FechaEmisionIR); f != "" {
			s += ", del " + f
		}
		if c := described(codigosReferencia, ir.Codigo); c != "" {
			s += ", " + c
		}
		if ir.CodigoReferenciaOTRO != "" {
			s += " (" + ir.CodigoReferenciaOTRO + ")"
		}
		if ir.Razon != "" {
			s += ": " + ir.Razon
		}
		r.tkLines(s, tkSmall, false, "L", colorText)
	}
}

// ticketTexts draws the free texts, the issuer's notes and the tax
// authority's message, each under its title when there is any.
func (r *renderer) ticketTexts() {
	block := func(title string, texts []string, c [3]int) {
		if len(texts) == 0 {
			return
		}
		r.tkTitle(title)
		for _, t := range texts {
			r.tkLines(t, tkSmall, false, "L", c)
		}
	}
	block("Observaciones", r.otherTexts(), colorText)
	block("Notas del emisor", r.noteLines(), colorText)
	m, c := r.message()
	block("Mensaje del Ministerio de Hacienda", m, c)
}

// ticketQR draws the QR code of the clave, centred.
func (r *renderer) ticketQR() {
	if r.qr == nil {
		return
	}
	y := r.space(tkQRSize+3) + 2
	drawQR(r.f, r.qr, (r.pg.w-tkQRSize)/2, y, tkQRSize)
	r.f.setY(y + tkQRSize)
}

// ticketFooter closes a ticket's page below its content: the test mark
// over the page, the authorisation legend (and the mark's words), and
// "Página N de M".
func (r *renderer) ticketFooter() {
	x, w := r.pg.marginX, r.pg.contentW()
	r.setFont("", tkSmall)
	legend := r.wrap(Leyenda+". Representación impresa de un comprobante electrónico v4.4.", w)
	var mark []string
	if r.in.Ambiente.test() {
		r.setFont("B", tkSmall)
		mark = r.wrap(markTitle, w)
	}
	y := r.f.getY() + 1.5
	h := 1 + float64(len(legend)+len(mark))*tkSmallH + 3.6
	r.watermark(y + h)
	r.rule(y)
	y += 1
	r.setColor(colorMuted)
	r.setFont("", tkSmall)
	for _, l := range legend {
		r.putEncoded(x, y, w, tkSmallH, l, "C")
		y += tkSmallH
	}
	r.setColor(colorMark)
	r.setFont("B", tkSmall)
	for _, l := range mark {
		r.putEncoded(x, y, w, tkSmallH, l, "C")
		y += tkSmallH
	}
	r.setFont("B", footerNumberSize)
	r.setColor(colorText)
	r.f.setXY(x, y)
	r.f.cellWithPageCount(28, 3.6, encode("Página "+strconv.Itoa(r.f.pageNumber())+" de "))
	r.f.setY(y + 3.6)
}
