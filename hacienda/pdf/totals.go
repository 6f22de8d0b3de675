package pdf

import (
	"strings"

	"facturad/hacienda"
)

// totalLine is one amount of the summary.
type totalLine struct {
	label  string
	amount hacienda.Amount
	// always is set for the amounts shown even when zero.
	always bool
}

// summaryLines lists the summary's amounts in the schema's order. The
// ones a document type's XML does not carry are absent and not shown; of
// the others the main ones are always shown, and the breakdown by kind of
// sale only when not zero, so that a simple invoice is not a column of
// zeros.
func summaryLines(rf hacienda.ResumenFactura) []totalLine {
	return []totalLine{
		{"Servicios gravados", rf.TotalServGravados, false},
		{"Servicios exentos", rf.TotalServExentos, false},
		{"Servicios exonerados", rf.TotalServExonerado, false},
		{"Servicios no sujetos", rf.TotalServNoSujeto, false},
		{"Mercancías gravadas", rf.TotalMercanciasGravadas, false},
		{"Mercancías exentas", rf.TotalMercanciasExentas, false},
		{"Mercancías exoneradas", rf.TotalMercExonerada, false},
		{"Mercancías no sujetas", rf.TotalMercNoSujeta, false},
		{"Total gravado", rf.TotalGravado, false},
		{"Total exento", rf.TotalExento, false},
		{"Total exonerado", rf.TotalExonerado, false},
		{"Total no sujeto", rf.TotalNoSujeto, false},
		{"Total venta", rf.TotalVenta, true},
		{"Total descuentos", rf.TotalDescuentos, true},
		{"Total venta neta", rf.TotalVentaNeta, true},
		{"Total impuesto", rf.TotalImpuesto, true},
		{"Impuesto asumido por el emisor o cobrado en fábrica", rf.TotalImpAsumEmisorFabrica, false},
		{"IVA devuelto", rf.TotalIVADevuelto, false},
		{"Total otros cargos", rf.TotalOtrosCargos, false},
	}
}

// totals draws the tax breakdown beside the summary's totals, the total of
// the document in figures and in words.
func (r *renderer) totals() {
	rf := r.d.ResumenFactura
	moneda := currency(rf)
	leftW := r.pg.contentW() * 0.52
	rightX := r.pg.marginX + leftW + 6
	rightW := r.pg.contentW() - leftW - 6
	valueW := 36.0

	// The right column: label and amount per line.
	type laid struct {
		label []string
		value string
	}
	var right []laid
	r.setFont("", textSize)
	for _, t := range summaryLines(rf) {
		if !t.amount.IsSet() || (!t.always && t.amount.Sign() == 0) {
			continue
		}
		right = append(right, laid{r.wrap(t.label, rightW-valueW), money(t.amount)})
	}
	rightH := 0.0
	for _, l := range right {
		rightH += float64(max(1, len(l.label))) * 3.6
	}
	rightH += 7 // the total of the document
	equiv, hasEquiv := colonEquivalent(rf)
	if hasEquiv {
		rightH += 4.4
	}

	// The left column: the tax breakdown.
	var breakdown [][3]string
	for _, t := range rf.TotalDesgloseImpuesto {
		tarifa := ""
		if t.CodigoTarifaIVA != "" {
			tarifa = descriptionOnly(tarifasIVA, t.CodigoTarifaIVA)
		}
		breakdown = append(breakdown, [3]string{descriptionOnly(impuestos, t.Codigo), tarifa, money(t.TotalMontoImpuesto)})
	}
	leftH := 0.0
	if len(breakdown) > 0 {
		leftH = 5 + 4 + float64(len(breakdown))*3.6
	}

	y := r.space(max(leftH, rightH) + 2)
	if len(breakdown) > 0 {
		r.setColor(colorAccent)
		r.setFont("B", 9)
		r.put(r.pg.marginX, y, leftW, 5, "Desglose de impuestos", "L")
		hy := y + 5
		r.setFill(colorHead)
		r.f.fillRect(r.pg.marginX, hy, leftW, 4)
		r.setFont("B", textSize)
		w0, w2 := leftW*0.42, leftW*0.26
		w1 := leftW - w0 - w2
		r.put(r.pg.marginX, hy, w0, 4, "Impuesto", "L")
		r.put(r.pg.marginX+w0, hy, w1, 4, "Tarifa", "L")
		r.put(r.pg.marginX+w0+w1, hy, w2, 4, "Monto", "R")
		ly := hy + 4
		r.setColor(colorText)
		r.setFont("", textSize)
		for _, b := range breakdown {
			r.put(r.pg.marginX, ly, w0, 3.6, b[0], "L")
			r.put(r.pg.marginX+w0, ly, w1, 3.6, b[1], "L")
			r.put(r.pg.marginX+w0+w1, ly, w2, 3.6, b[2], "R")
			ly += 3.6
		}
	}

	ly := y
	for _, l := range right {
		r.setColor(colorMuted)
		r.setFont("", textSize)
		for i, s := range l.label {
			r.putEncoded(rightX, ly+float64(i)*3.6, rightW-valueW, 3.6, s, "L")
		}
		r.setColor(colorText)
		r.put(rightX+rightW-valueW, ly, valueW, 3.6, l.value, "R")
		ly += float64(max(1, len(l.label))) * 3.6
	}
	ly += 0.8
	r.setFill(colorHead)
	r.f.fillRect(rightX, ly, rightW, 6)
	r.setColor(colorAccent)
	r.setFont("B", 9.5)
	r.put(rightX, ly, rightW-valueW-8, 6, "Total del comprobante", "L")
	r.put(rightX+rightW-valueW-8, ly, valueW+8, 6, moneda+" "+money(rf.TotalComprobante), "R")
	ly += 6
	if hasEquiv {
		r.setColor(colorText)
		r.setFont("", textSize)
		r.put(rightX, ly+0.8, rightW-valueW-8, 3.6, equiv.label, "L")
		r.setFont("B", textSize)
		r.put(rightX+rightW-valueW-8, ly+0.8, valueW+8, 3.6, equiv.value, "R")
		ly += 4.4
	}
	r.f.setY(max(y+leftH, ly) + 2)

	// The total in words.
	r.setFont("B", 8)
	lines := r.wrap(totalInWords(rf), r.pg.contentW())
	y = r.space(float64(len(lines))*4 + 2)
	r.setColor(colorText)
	for _, l := range lines {
		r.putEncoded(r.pg.marginX, y, r.pg.contentW(), 4, l, "L")
		y += 4
	}
	r.rule(y + 1)
	r.f.setY(y + 1 + sectionGap)
}

// currency is the code of the summary's currency: CRC when it names
// none.
func currency(rf hacienda.ResumenFactura) string {
	if m := rf.CodigoTipoMoneda.CodigoMoneda; m != "" {
		return m
	}
	return "CRC"
}

// totalInWords is "Son: " and the document's total in words.
func totalInWords(rf hacienda.ResumenFactura) string {
	words, err := Words(rf.TotalComprobante.Decimal(), currency(rf))
	if err != nil {
		words = "(el monto no se puede escribir en letras)"
	}
	return "Son: " + words
}

// equivalent is the colón equivalent of a foreign currency's total.
type equivalent struct{ label, value string }

// colonEquivalent is ColonEquivalent as the document prints it: the label
// and the amount after "CRC " (the standard fonts have no colón sign).
func colonEquivalent(rf hacienda.ResumenFactura) (equivalent, bool) {
	label, crc, ok := ColonEquivalent(rf)
	if !ok {
		return equivalent{}, false
	}
	return equivalent{label: label, value: "CRC " + money(crc)}, true
}

// ColonEquivalent is the total of a document in a currency other than
// colones in colones: TotalComprobante × TipoCambio, rounded to cents half
// away from zero (the rounding of v4.4), with the label that names it and
// its rate as the printed document writes them ("Equivalente en colones
// (tipo de cambio 506,25)"); false for a document in colones or without a
// positive rate. The PDF prints it under the total, and what quotes the
// document beside its PDF (the e-mail) says the same figure.
func ColonEquivalent(rf hacienda.ResumenFactura) (label string, crc hacienda.Amount, ok bool) {
	m := rf.CodigoTipoMoneda
	tc := m.TipoCambio
	if m.CodigoMoneda == "" || m.CodigoMoneda == "CRC" || !tc.IsSet() || tc.Sign() <= 0 || !rf.TotalComprobante.IsSet() {
		return "", hacienda.Amount{}, false
	}
	crc = hacienda.NewAmount(rf.TotalComprobante.Decimal().Mul(tc.Decimal()).Round(2))
	return "Equivalente en colones (tipo de cambio " + quantity(tc) + ")", crc, true
}

// noteLines are the issuer's notes (Input.Notas), a paragraph a line,
// blank lines left out.
func (r *renderer) noteLines() []string {
	var texts []string
	for _, l := range strings.Split(r.in.Notas, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			texts = append(texts, l)
		}
	}
	return texts
}

// otherTexts are the free texts (Otros), each with its code.
func (r *renderer) otherTexts() []string {
	o := r.d.Otros
	if o == nil {
		return nil
	}
	var texts []string
	for _, t := range append(append([]hacienda.OtroTexto{}, o.OtroTexto...), o.OtroContenido...) {
		s := strings.TrimSpace(t.Valor)
		if t.Codigo != "" {
			s = t.Codigo + ": " + s
		}
		if s != "" {
			texts = append(texts, s)
		}
	}
	return texts
}

// message is the tax authority's message about the document, a paragraph
// a line, and its colour: a rejection's or an error's in red; none when
// there is no message.
func (r *renderer) message() ([]string, [3]int) {
	m := strings.TrimSpace(r.in.MensajeHacienda)
	if m == "" {
		return nil, colorText
	}
	if r.in.Estado == "02" || r.in.Estado == "03" {
		return strings.Split(m, "\n"), colorBad
	}
	return strings.Split(m, "\n"), colorText
}

// texts draws the free texts, the issuer's notes and the tax authority's
// message, each under its title when there is any.
func (r *renderer) texts() {
	r.paragraphs("Observaciones", r.otherTexts(), colorText)
	r.paragraphs("Notas del emisor", r.noteLines(), colorText)
	m, c := r.message()
	r.paragraphs("Mensaje del Ministerio de Hacienda", m, c)
}

// paragraphs draws a titled block of wrapped texts, continuing on the
// next page when it must; no texts draw nothing.
func (r *renderer) paragraphs(title string, texts []string, c [3]int) {
	if len(texts) == 0 {
		return
	}
	r.sectionTitle(title)
	r.setFont("", textSize)
	for _, t := range texts {
		r.setFont("", textSize)
		for _, l := range r.wrap(t, r.pg.contentW()) {
			y := r.space(3.6)
			r.setColor(c)
			r.setFont("", textSize)
			r.putEncoded(r.pg.marginX, y, r.pg.contentW(), 3.6, l, "L")
			r.f.setY(y + 3.6)
		}
	}
	r.f.setY(r.f.getY() + sectionGap)
}
