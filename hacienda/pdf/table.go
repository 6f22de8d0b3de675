package pdf

import (
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
)

// column is one column of a table.
type column struct {
	head  string
	w     float64
	align string // "L" or "R"
}

// cellLine is one encoded line of a table cell; sub lines are smaller and
// muted (the details under a line's description).
type cellLine struct {
	s   string
	sub bool
}

// row is one table row: a cell per column.
type row [][]cellLine

// height returns the number of text lines of the row.
func (rw row) height() int {
	n := 1
	for _, c := range rw {
		n = max(n, len(c))
	}
	return n
}

// cell lays out one cell's main text (wrapped to the column) and its sub
// lines.
func (r *renderer) cell(c column, main string, subs ...string) []cellLine {
	var out []cellLine
	r.setFont("", textSize)
	for _, l := range r.wrap(main, c.w) {
		out = append(out, cellLine{s: l})
	}
	r.setFont("", smallTextSize)
	for _, s := range subs {
		for _, l := range r.wrap(s, c.w) {
			out = append(out, cellLine{s: l, sub: true})
		}
	}
	return out
}

// tableHeader draws the header of a table at the current y.
func (r *renderer) tableHeader(cols []column) {
	y := r.f.getY()
	r.setFont("B", textSize)
	// A header's words may wrap to two lines.
	lines := make([][]string, len(cols))
	n := 1
	for i, c := range cols {
		lines[i] = r.wrap(c.head, c.w)
		n = max(n, len(lines[i]))
	}
	h := float64(n)*lineH + 2*tablePad
	r.setFill(colorHead)
	r.f.fillRect(r.pg.marginX, y, r.pg.contentW(), h)
	r.setColor(colorAccent)
	x := r.pg.marginX
	for i, c := range cols {
		for j, l := range lines[i] {
			r.putEncoded(x, y+tablePad+float64(j)*lineH, c.w, lineH, l, c.align)
		}
		x += c.w
	}
	r.f.setY(y + h)
}

// table draws a table whose header repeats on every page it runs onto.
// A row that does not fit the rest of the page goes to the next one; a
// row taller than a whole page is split between its text lines. The n
// rows are laid out one at a time by rowAt, as they are drawn, so a
// table of any length holds one row's layout at a time.
func (r *renderer) table(cols []column, n int, rowAt func(i int) row, repeat bool) {
	if repeat {
		r.cols, r.inLines = cols, true
		defer func() { r.inLines = false }()
	}
	headerH := lineH + 2*tablePad
	// The header never ends a page alone: it goes with the first row.
	first := 0.0
	var next row
	if n > 0 {
		next = rowAt(0)
		first = float64(min(next.height(), 3))*lineH + 2*tablePad
	}
	r.space(headerH*2 + first)
	r.tableHeader(cols)
	for i := range n {
		rw := next
		if i > 0 {
			rw = rowAt(i)
		}
		lines := rw.height()
		from := 0
		for from < lines {
			y := r.f.getY()
			fit := int((r.pg.bottom - y - 2*tablePad) / lineH)
			if fit < lines-from && (fit < 1 || lines-from <= r.linesPerPage()) {
				// Move the row (what is left of it) to the next page
				// whole, unless it cannot fit any page.
				r.newPageForTable(cols, repeat)
				continue
			}
			to := min(lines, from+max(fit, 1))
			r.drawRow(cols, rw, from, to, i%2 == 1)
			from = to
		}
	}
	r.setDrawColor(colorRule)
	r.f.setLineWidth(0.2)
	y := r.f.getY()
	r.f.line(r.pg.marginX, y, r.pg.w-r.pg.marginX, y)
	r.f.setY(y + sectionGap)
}

// linesPerPage is how many table text lines a continuation page holds.
func (r *renderer) linesPerPage() int {
	avail := r.pg.bottom - (r.pg.marginTop + 12) - 3*lineH - 4*tablePad
	return int(avail / lineH)
}

// newPageForTable starts a page in the middle of a table: the header is
// repeated by newPage for the lines, and here for the other tables.
func (r *renderer) newPageForTable(cols []column, repeat bool) {
	r.newPage()
	if !repeat {
		r.tableHeader(cols)
	}
}

// drawRow draws the text lines [from, to) of a row at the current y.
func (r *renderer) drawRow(cols []column, rw row, from, to int, stripe bool) {
	y := r.f.getY()
	h := float64(to-from)*lineH + 2*tablePad
	if stripe {
		r.setFill(colorStripe)
		r.f.fillRect(r.pg.marginX, y, r.pg.contentW(), h)
	}
	x := r.pg.marginX
	for i, c := range cols {
		for j := from; j < to && j < len(rw[i]); j++ {
			l := rw[i][j]
			if l.sub {
				r.setFont("", smallTextSize)
				r.setColor(colorMuted)
			} else {
				r.setFont("", textSize)
				r.setColor(colorText)
			}
			r.putEncoded(x, y+tablePad+float64(j-from)*lineH, c.w, lineH, l.s, c.align)
		}
		x += c.w
	}
	r.f.setY(y + h)
}

// lineColumns are the columns of the lines' table.
func (r *renderer) lineColumns() []column {
	cols := []column{
		{"#", 7, "R"},
		{"Código CABYS", 22, "L"},
		{"Cantidad", 14, "R"},
		{"Unidad", 12, "L"},
		{"Detalle", 0, "L"},
		{"Precio unitario", 21, "R"},
		{"Descuento", 19, "R"},
		{"Impuesto", 24, "R"},
		{"Total de línea", 22, "R"},
	}
	used := 0.0
	for _, c := range cols {
		used += c.w
	}
	cols[4].w = r.pg.contentW() - used
	return cols
}

// lines draws the detail lines.
func (r *renderer) lines() {
	d := r.d
	if len(d.DetalleServicio) == 0 {
		return
	}
	r.sectionTitle("Detalle")
	cols := r.lineColumns()
	r.table(cols, len(d.DetalleServicio), func(i int) row { return r.lineRow(cols, d.DetalleServicio[i]) }, true)
}

// lineFacts is what the printed document shows of a line besides its
// codes, quantity and amounts.
type lineFacts struct {
	// subs are the details under the description: codes, discounts,
	// exonerations, assumed tax.
	subs []string
	// discount is the line's total discount.
	discount hacienda.Amount
	// tax is the tax its total holds ("" without taxes), taxSubs each tax
	// with its gross amount and what was taken off it.
	tax     string
	taxSubs []string
}

// lineRow lays out one detail line.
func (r *renderer) lineRow(cols []column, l hacienda.LineaDetalle) row {
	lf := describeLine(l)
	return row{
		r.cell(cols[0], strconv.Itoa(l.NumeroLinea)),
		r.cell(cols[1], l.CodigoCABYS),
		r.cell(cols[2], quantity(l.Cantidad)),
		r.cell(cols[3], l.UnidadMedida),
		r.cell(cols[4], l.Detalle, lf.subs...),
		r.cell(cols[5], money(l.PrecioUnitario)),
		r.cell(cols[6], money(lf.discount)),
		r.cell(cols[7], lf.tax, lf.taxSubs...),
		r.cell(cols[8], money(l.MontoTotalLinea)),
	}
}

// describeLine lays out the facts of a line.
func describeLine(l hacienda.LineaDetalle) lineFacts {
	var subs []string
	for _, c := range l.CodigoComercial {
		subs = append(subs, "Código comercial "+c.Tipo+": "+c.Codigo)
	}
	if l.PartidaArancelaria != "" {
		subs = append(subs, "Partida arancelaria: "+l.PartidaArancelaria)
	}
	if l.UnidadMedidaComercial != "" {
		subs = append(subs, "Unidad comercial: "+l.UnidadMedidaComercial)
	}
	if l.TipoTransaccion != "" && l.TipoTransaccion != "01" {
		subs = append(subs, "Tipo de transacción: "+l.TipoTransaccion)
	}
	if len(l.NumeroVINoSerie) > 0 {
		subs = append(subs, "VIN / serie: "+strings.Join(l.NumeroVINoSerie, ", "))
	}
	if l.RegistroMedicamento != "" {
		subs = append(subs, "Registro de medicamento: "+l.RegistroMedicamento)
	}
	if l.FormaFarmaceutica != "" {
		subs = append(subs, "Forma farmacéutica: "+l.FormaFarmaceutica)
	}
	discount := hacienda.Amount{}
	for _, ds := range l.Descuento {
		name := descriptionOnly(codigosDescuento, ds.CodigoDescuento)
		if ds.CodigoDescuentoOTRO != "" {
			name = ds.CodigoDescuentoOTRO
		}
		s := "Descuento " + name
		if ds.NaturalezaDescuento != "" && ds.NaturalezaDescuento != name {
			s += " (" + ds.NaturalezaDescuento + ")"
		}
		subs = append(subs, s+": "+money(ds.MontoDescuento))
		discount = hacienda.NewAmount(discount.Decimal().Add(ds.MontoDescuento.Decimal()))
	}
	if l.IVACobradoFabrica != "" {
		subs = append(subs, "IVA cobrado a nivel de fábrica ("+l.IVACobradoFabrica+")")
	}
	net, gross := lineTax(l)
	var taxSubs []string
	for _, t := range l.Impuesto {
		name := taxName(t)
		if len(l.Impuesto) > 1 || net.Cmp(gross) != 0 {
			name += ": " + money(t.Monto)
		}
		taxSubs = append(taxSubs, name)
		if ex := t.Exoneracion; ex != nil && ex.MontoExoneracion.IsSet() {
			taxSubs = append(taxSubs, "Exonerado: -"+money(ex.MontoExoneracion))
		}
	}
	if a := l.ImpuestoAsumidoEmisorFabrica; a.IsSet() && a.Sign() != 0 {
		taxSubs = append(taxSubs, "Asumido: -"+money(a))
	}
	for _, t := range l.Impuesto {
		if ex := t.Exoneracion; ex != nil {
			s := "Exoneración " + described(tiposExoneracion, ex.TipoDocumentoEX1)
			if ex.TipoDocumentoOTRO != "" {
				s += ": " + ex.TipoDocumentoOTRO
			}
			s += ", documento " + ex.NumeroDocumento
			inst := descriptionOnly(instituciones, ex.NombreInstitucion)
			if ex.NombreInstitucionOtros != "" {
				inst = ex.NombreInstitucionOtros
			}
			s += ", " + inst + ", del " + date(ex.FechaEmisionEX)
			if ex.Articulo > 0 {
				s += ", artículo " + strconv.Itoa(ex.Articulo)
				if ex.Inciso > 0 {
					s += " inciso " + strconv.Itoa(ex.Inciso)
				}
			}
			s += ", tarifa exonerada " + quantity(ex.TarifaExonerada) + "%: " + money(ex.MontoExoneracion)
			subs = append(subs, s)
		}
	}
	if l.ImpuestoAsumidoEmisorFabrica.Sign() != 0 {
		subs = append(subs, "Impuesto asumido por el emisor o cobrado en fábrica: "+money(l.ImpuestoAsumidoEmisorFabrica))
	}
	// REP lines carry no price: the amount paid is their subtotal.
	if !l.PrecioUnitario.IsSet() && l.MontoTotal.IsSet() {
		subs = append([]string{"Monto: " + money(l.MontoTotal)}, subs...)
	}
	// The tax column: the tax the line's total holds (net of its
	// exonerations and of what the issuer assumes), and under it each
	// tax with its gross amount and what was taken off it.
	lf := lineFacts{subs: subs, discount: discount, taxSubs: taxSubs}
	if len(l.Impuesto) > 0 {
		lf.tax = money(net)
	}
	return lf
}

// lineTax returns the tax a line's total holds, net of its exonerations
// and of the tax the issuer assumes (ImpuestoNeto, or that sum where the
// type's XML has no ImpuestoNeto, as the export invoice), and the sum of
// its taxes' gross amounts.
func lineTax(l hacienda.LineaDetalle) (net, gross hacienda.Amount) {
	g, n := decimal.Zero, decimal.Zero
	for _, t := range l.Impuesto {
		g = g.Add(t.Monto.Decimal())
		n = n.Add(t.Monto.Decimal())
		if ex := t.Exoneracion; ex != nil {
			n = n.Sub(ex.MontoExoneracion.Decimal())
		}
	}
	n = n.Sub(l.ImpuestoAsumidoEmisorFabrica.Decimal())
	if l.ImpuestoNeto.IsSet() {
		return l.ImpuestoNeto, hacienda.NewAmount(g)
	}
	return hacienda.NewAmount(n), hacienda.NewAmount(g)
}

// taxName names a tax with its rate: "IVA 13%".
func taxName(t hacienda.Impuesto) string {
	name := descriptionOnly(impuestos, t.Codigo)
	if t.CodigoImpuestoOTRO != "" {
		name = t.CodigoImpuestoOTRO
	}
	if t.Tarifa.IsSet() {
		name += " " + quantity(t.Tarifa) + "%"
	}
	return name
}

// sectionTitle draws a section's title, kept with what follows it.
func (r *renderer) sectionTitle(s string) {
	y := r.space(5 + 3*(lineH+2*tablePad))
	r.setColor(colorAccent)
	r.setFont("B", 9)
	r.put(r.pg.marginX, y, r.pg.contentW(), 5, s, "L")
	r.f.setY(y + 5.5)
}

// otherCharges draws the other charges (OtrosCargos).
func (r *renderer) otherCharges() {
	d := r.d
	if len(d.OtrosCargos) == 0 {
		return
	}
	r.sectionTitle("Otros cargos")
	cols := []column{
		{"Tipo", 50, "L"},
		{"Detalle", 0, "L"},
		{"Porcentaje", 22, "R"},
		{"Monto", 28, "R"},
	}
	cols[1].w = r.pg.contentW() - 50 - 22 - 28
	var rows []row
	for _, oc := range d.OtrosCargos {
		tipo := described(tiposOtrosCargos, oc.TipoDocumentoOC)
		var subs []string
		if oc.TipoDocumentoOTROS != "" {
			subs = append(subs, oc.TipoDocumentoOTROS)
		}
		if oc.NombreTercero != "" || !oc.IdentificacionTercero.IsZero() {
			subs = append(subs, strings.TrimSpace("Tercero: "+oc.NombreTercero+" "+oc.IdentificacionTercero.Numero))
		}
		pct := ""
		if oc.PorcentajeOC.IsSet() {
			pct = quantity(oc.PorcentajeOC) + "%"
		}
		rows = append(rows, row{
			r.cell(cols[0], tipo),
			r.cell(cols[1], oc.Detalle, subs...),
			r.cell(cols[2], pct),
			r.cell(cols[3], money(oc.MontoCargo)),
		})
	}
	r.table(cols, len(rows), func(i int) row { return rows[i] }, false)
}

// references draws the references to other documents.
func (r *renderer) references() {
	d := r.d
	if len(d.InformacionReferencia) == 0 {
		return
	}
	r.sectionTitle("Información de referencia")
	cols := []column{
		{"Tipo de documento", 32, "L"},
		{"Número", 76, "L"},
		{"Fecha de emisión", 19, "L"},
		{"Código", 28, "L"},
		{"Razón", 0, "L"},
	}
	cols[4].w = r.pg.contentW() - 32 - 76 - 19 - 28
	var rows []row
	for _, ir := range d.InformacionReferencia {
		tipo := described(tiposDocReferencia, ir.TipoDocIR)
		var tipoSubs []string
		if ir.TipoDocRefOTRO != "" {
			tipoSubs = append(tipoSubs, ir.TipoDocRefOTRO)
		}
		codigo := described(codigosReferencia, ir.Codigo)
		var codigoSubs []string
		if ir.CodigoReferenciaOTRO != "" {
			codigoSubs = append(codigoSubs, ir.CodigoReferenciaOTRO)
		}
		rows = append(rows, row{
			r.cell(cols[0], tipo, tipoSubs...),
			r.cell(cols[1], ir.Numero),
			r.cell(cols[2], dateTime(ir.FechaEmisionIR)),
			r.cell(cols[3], codigo, codigoSubs...),
			r.cell(cols[4], ir.Razon),
		})
	}
	r.table(cols, len(rows), func(i int) row { return rows[i] }, false)
}
