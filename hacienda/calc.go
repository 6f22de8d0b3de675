package hacienda

import (
	"github.com/shopspring/decimal"

	"facturad/hacienda/msg"
)

// Calculate fills, in place, every computed amount of doc: per line
// MontoTotal, the discounts given as percentages, SubTotal, BaseImponible,
// each tax's Monto (and Tarifa when implied by its rate code), each
// exoneration's MontoExoneracion, ImpuestoAsumidoEmisorFabrica,
// ImpuestoNeto and MontoTotalLinea; the other charges given as percentages;
// and every total of ResumenFactura, its TotalDesgloseImpuesto and the
// TotalMedioPago of a single means of payment.
//
// It checks the calculation rules on the way (codes that drive the
// arithmetic, a rate that does not match its rate code, quantities and
// prices, decimals, discounts above the amount, payments that do not add
// up…) and returns a *ValidationError listing every problem, with paths in
// the request's names (detalleServicio[1].impuesto[0].codigoTarifaIVA).
// It does not check the structural rules of a whole document: that is
// [ValidateSend]'s job. On error the computed fields are left in an
// unspecified state.
//
// Rounding: every computed amount is rounded to 5 decimals, half away from
// zero, where it is computed; totals are sums and differences of those
// rounded amounts, so they reconcile exactly.
//
// Calculate is deterministic and safe for concurrent use on distinct
// documents.
func Calculate(doc *Document) error {
	var e errs
	calculate(doc, &e)
	return e.err()
}

// Bucket of a line in the summary.
type bucket uint8

const (
	bucketGravado bucket = iota
	bucketExento
	bucketNoSujeto
)

var (
	dZero    = decimal.New(0, -MoneyPlaces) // zero at the scale of every rounded amount, so sums need no rescaling
	dOne     = decimal.New(1, 0)
	dMaxLine = decimal.RequireFromString("9999999999999.99999")
)

func r5(d decimal.Decimal) decimal.Decimal { return d.Round(MoneyPlaces) }

// pctOf returns x × pct / 100, rounded to 5 decimals.
func pctOf(x, pct decimal.Decimal) decimal.Decimal { return r5(x.Mul(pct).Shift(-2)) }

// summary accumulates the totals while the lines are computed.
type summary struct {
	servGravados, servExentos, servExonerado, servNoSujeto decimal.Decimal
	mercGravadas, mercExentas, mercExonerada, mercNoSujeta decimal.Decimal
	venta, descuentos, impuesto, asumido, ivaDevuelto      decimal.Decimal
	desglose                                               []TotalDesgloseImpuesto
	// linesRefused: a line was refused, so the sums above leave it out
	// and the net sale is not known.
	linesRefused bool
}

func calculate(doc *Document, e *errs) {
	t := doc.Type
	if !t.Valid() {
		e.add("tipo_documento", msg.OneOf.With(issuedTypesList(false)))
		return
	}
	checkInvalidAmounts(doc, e)
	s := summary{
		servGravados: dZero, servExentos: dZero, servExonerado: dZero, servNoSujeto: dZero,
		mercGravadas: dZero, mercExentas: dZero, mercExonerada: dZero, mercNoSujeta: dZero,
		venta: dZero, descuentos: dZero, impuesto: dZero, asumido: dZero, ivaDevuelto: dZero,
	}
	if cap(doc.ResumenFactura.TotalDesgloseImpuesto) > 0 {
		s.desglose = doc.ResumenFactura.TotalDesgloseImpuesto[:0]
	}

	allCard := paidAllByCard(doc.ResumenFactura.MedioPago)
	hasIVADevuelto := t == TypeFE || t == TypeTE || t == TypeNC || t == TypeND

	if len(doc.DetalleServicio) > 1000 {
		e.add("detalleServicio", msg.LinesMax.With())
		return
	}
	for i := range doc.DetalleServicio {
		l := &doc.DetalleServicio[i]
		var lp linePath
		lp.i = i
		var ok bool
		if t == TypeREP {
			ok = calcLineREP(l, &lp, e, &s)
		} else {
			ok = calcLine(t, l, &lp, e, &s)
		}
		if !ok {
			s.linesRefused = true
			continue
		}
		if hasIVADevuelto && allCard && isHealthServiceCABYS(l.CodigoCABYS) {
			s.ivaDevuelto = s.ivaDevuelto.Add(lineNetIVA(l))
		}
	}

	calcSummary(doc, e, &s)
}

// linePath builds field paths of one line lazily (only on error).
type linePath struct{ i int }

func (p *linePath) field(name string) string {
	return idx("detalleServicio", p.i) + "." + name
}

func (p *linePath) sub(list string, j int, name string) string {
	return idx(idx("detalleServicio", p.i)+"."+list, j) + "." + name
}

func (p *linePath) exo(j int, name string) string {
	return idx(idx("detalleServicio", p.i)+".impuesto", j) + ".exoneracion." + name
}

// checkMoney checks an amount given by the caller: present (when required),
// not negative, at most 5 decimals and 13 integer digits.
func checkMoney(a Amount, required bool, path fpath, e *errs) bool {
	if !a.IsSet() {
		if required {
			e.add(path.String(), msg.Required.With())
			return false
		}
		return true
	}
	return checkDecimal(a, 13, MoneyPlaces, path, e)
}

// checkDecimal checks a non-negative decimal against the schema's integer
// and fraction digits (trailing fraction zeros do not count).
func checkDecimal(a Amount, intDigits int, places int32, path fpath, e *errs) bool {
	if a.Invalid() {
		e.add(path.String(), msg.NotANumber.With())
		return false
	}
	ok := true
	if a.Sign() < 0 {
		e.add(path.String(), msg.NotNegative.With())
		ok = false
	}
	if a.Places() > places && a.SignificantPlaces() > places {
		e.add(path.String(), msg.MaxDecimals.With(int(places)))
		ok = false
	}
	if a.d.NumDigits()+int(a.d.Exponent()) > intDigits {
		e.add(path.String(), msg.MaxIntegerDigits.With(intDigits))
		ok = false
	}
	return ok
}

// checkComputed reports a computed amount that overflows DecimalDinero.
func checkComputed(d decimal.Decimal, path fpath, e *errs) bool {
	if d.Cmp(dMaxLine) > 0 {
		e.add(path.String(), msg.ComputedTooLarge.With())
		return false
	}
	if d.Sign() < 0 {
		e.add(path.String(), msg.ComputedNegative.With())
		return false
	}
	return true
}

// calcLine computes one line of every type but REP. It returns false when
// the line has errors (its amounts are then not added to the summary).
// Every section reports its own problems, so that a caller sees all of a
// line's errors at once; the sections are lineCalc's methods, in order.
func calcLine(t DocumentType, l *LineaDetalle, p *linePath, e *errs, s *summary) bool {
	c := &lineCalc{t: t, l: l, p: p, e: e, ivaIdx: -1}
	if !c.inputs() {
		checkLineCodes(t, l, p, e)
		return false
	}
	c.montoTotal = r5(l.Cantidad.Decimal().Mul(l.PrecioUnitario.Decimal()))
	if !checkComputed(c.montoTotal, p.f("montoTotal"), e) {
		return false
	}
	l.MontoTotal = NewAmount(c.montoTotal)
	// A line whose discounts are wrong goes on with its taxes to report
	// their problems too; nothing of it reaches the summary.
	discountsOK := c.discounts()
	taxesOK := c.otherTaxes()
	if !c.base() || !c.iva() || !taxesOK {
		return false
	}
	if !c.exonerations(s) || !discountsOK {
		return false
	}
	return c.totals(s)
}

// lineCalc is one line's calculation in progress.
type lineCalc struct {
	t DocumentType
	l *LineaDetalle
	p *linePath
	e *errs

	service               bool // a service line (by its CABYS code)
	grossIVA, issuerBears bool // set by the discounts' codes
	ivaIdx                int  // the line's IVA among its taxes, or -1
	bucket                bucket

	montoTotal, totalDesc, subTotal decimal.Decimal
	specialBase, baseImponible      decimal.Decimal
	ivaBase                         decimal.Decimal // what the IVA's Monto is a rate of
	taxes, exoTotal, asumido        decimal.Decimal
}

// inputs checks the inputs that drive the arithmetic.
func (c *lineCalc) inputs() bool {
	t, l, p, e := c.t, c.l, c.p, c.e
	ok := true
	if !l.Cantidad.IsSet() {
		e.add(p.field("cantidad"), msg.Required.With())
		ok = false
	} else if !checkDecimal(l.Cantidad, 13, 3, p.f("cantidad"), e) {
		ok = false
	} else if l.Cantidad.Sign() == 0 {
		e.add(p.field("cantidad"), msg.GreaterThan0.With())
		ok = false
	}
	if !l.PrecioUnitario.IsSet() {
		e.add(p.field("precioUnitario"), msg.Required.With())
		ok = false
	} else if !checkMoney(l.PrecioUnitario, true, p.f("precioUnitario"), e) {
		ok = false
	} else if l.PrecioUnitario.Sign() == 0 {
		e.add(p.field("precioUnitario"), msg.GreaterThan0.With())
		ok = false
	}
	switch {
	case l.CodigoCABYS == "":
		if t.IsNote() && lineWithoutCABYSIsService {
			c.service = true
		} else {
			e.add(p.field("codigoCABYS"), msg.Required.With())
			ok = false
		}
	case !isDigits(l.CodigoCABYS, 13, 13):
		e.add(p.field("codigoCABYS"), msg.CABYSDigits.With())
		ok = false
	default:
		c.service = l.CodigoCABYS[0] >= '5'
	}
	if len(l.DetalleSurtido) > 0 && !surtidosSupported {
		e.add(p.field("detalleSurtido"), msg.Surtido.With())
		ok = false
	}
	if len(l.Descuento) > 5 {
		e.add(p.field("descuento"), msg.DiscountsMax.With())
		ok = false
	}
	if len(l.Impuesto) == 0 {
		e.add(p.field("impuesto"), msg.TaxRequired.With())
		ok = false
	}
	if l.IVACobradoFabrica != "" {
		if !ivaCobradoFabrica.has(l.IVACobradoFabrica) {
			e.add(p.field("iVACobradoFabrica"), msg.IVACobradoFabrica.With())
			ok = false
		} else if t == TypeFEC || t == TypeFEE {
			e.add(p.field("iVACobradoFabrica"), msg.NotAllowedInType.With())
			ok = false
		}
	}
	return ok
}

// discounts applies the line's discounts in cascade and sets SubTotal. On
// error SubTotal is MontoTotal, so that the taxes can still be checked.
func (c *lineCalc) discounts() bool {
	t, l, p, e, montoTotal := c.t, c.l, c.p, c.e, c.montoTotal
	ok := true
	rest := montoTotal
	for j := range l.Descuento {
		d := &l.Descuento[j]
		if !codigosDescuento.has(d.CodigoDescuento) {
			e.add(p.sub("descuento", j, "codigoDescuento"), msg.CodigoDescuento.With())
			ok = false
		}
		if discountTaxesGross(d.CodigoDescuento) {
			c.grossIVA = true
		}
		if discountIssuerBearsTax(d.CodigoDescuento) {
			c.issuerBears = true
			if !issuerBornTaxExpressible(t) {
				e.add(p.sub("descuento", j, "codigoDescuento"), msg.RegaliaType.With(t.Abbrev()))
				ok = false
			}
		}
		var monto decimal.Decimal
		switch {
		case d.PorcentajeDescuento.IsSet():
			pct := d.PorcentajeDescuento
			if pct.Sign() < 0 || pct.Decimal().Cmp(decimal.New(100, 0)) > 0 {
				e.add(p.sub("descuento", j, "porcentajeDescuento"), msg.Percentage.With())
				ok = false
				continue
			}
			if !checkDecimal(pct, 3, MoneyPlaces, p.s("descuento", j, "porcentajeDescuento"), e) {
				ok = false
				continue
			}
			monto = pctOf(rest, pct.Decimal())
			if d.MontoDescuento.IsSet() && amountAndPercentageMustAgree && d.MontoDescuento.Decimal().Cmp(monto) != 0 {
				e.add(p.sub("descuento", j, "montoDescuento"), msg.DiscountMismatch.With(monto.String()))
				ok = false
				continue
			}
		case d.MontoDescuento.IsSet():
			if !checkMoney(d.MontoDescuento, true, p.s("descuento", j, "montoDescuento"), e) {
				ok = false
				continue
			}
			monto = d.MontoDescuento.Decimal()
		default:
			e.add(p.sub("descuento", j, "montoDescuento"), msg.DiscountRequired.With())
			ok = false
			continue
		}
		if monto.Cmp(montoTotal) > 0 {
			e.add(p.sub("descuento", j, "montoDescuento"), msg.DiscountExceeds.With(montoTotal.String()))
			ok = false
			continue
		}
		d.MontoDescuento = NewAmount(monto)
		rest = rest.Sub(monto)
		c.totalDesc = c.totalDesc.Add(monto)
	}
	if ok && rest.Sign() < 0 {
		e.add(p.field("descuento"), msg.DiscountsExceed.With(montoTotal.String()))
		ok = false
	}
	if ok && c.issuerBears && regaliaMustCoverWholeLine && rest.Sign() != 0 {
		e.add(p.field("descuento"), msg.RegaliaWhole.With())
		ok = false
	}
	if !ok {
		rest = montoTotal
	}
	c.subTotal = rest
	l.SubTotal = NewAmount(rest)
	return ok
}

// otherTaxes computes the specific and rate-based taxes that are not IVA
// first, since some of them enter the IVA base, and finds the line's IVA.
func (c *lineCalc) otherTaxes() bool {
	t, l, p, e := c.t, c.l, c.p, c.e
	ok := true
	for j := range l.Impuesto {
		tx := &l.Impuesto[j]
		if !codigosImpuesto.has(tx.Codigo) {
			e.add(p.sub("impuesto", j, "codigo"), msg.TaxCodigo.With())
			ok = false
			continue
		}
		if isIVA(tx.Codigo) {
			if c.ivaIdx >= 0 && oneIVAPerLine {
				e.add(p.sub("impuesto", j, "codigo"), msg.OneIVA.With())
				ok = false
				continue
			}
			c.ivaIdx = j
			continue
		}
		monto, good := calcSpecificTax(t, l, tx, c.subTotal, p, j, e)
		if !good {
			ok = false
			continue
		}
		tx.Monto = NewAmount(monto)
		switch tx.Codigo {
		case ImpuestoSelectivo, ImpuestoBebidasAlcohol, ImpuestoBebidasJabones, ImpuestoCemento:
			c.specialBase = c.specialBase.Add(monto)
		}
	}
	return ok
}

// base sets BaseImponible: SubTotal plus the taxes that enter it, or the
// caller's where it may be given.
func (c *lineCalc) base() bool {
	l, p, e := c.l, c.p, c.e
	baseImponible := c.subTotal.Add(c.specialBase)
	editable := l.IVACobradoFabrica == IVAFabricaSeparado ||
		(c.ivaIdx >= 0 && l.Impuesto[c.ivaIdx].Codigo == ImpuestoIVAEspecial)
	if l.IVACobradoFabrica == IVAFabricaSeparado {
		if !l.BaseImponible.IsSet() || l.BaseImponible.Sign() <= 0 {
			e.add(p.field("baseImponible"), msg.BaseImponible.With())
			return false
		}
	}
	if editable && l.BaseImponible.IsSet() {
		if !checkMoney(l.BaseImponible, true, p.f("baseImponible"), e) {
			return false
		}
		baseImponible = l.BaseImponible.Decimal()
	}
	l.BaseImponible = NewAmount(baseImponible)
	c.baseImponible = baseImponible
	return true
}

// iva computes the line's IVA and the summary bucket it puts the line in.
func (c *lineCalc) iva() bool {
	c.bucket = lineWithoutIVABucket
	if c.ivaIdx < 0 {
		return true
	}
	c.ivaBase = c.baseImponible
	if c.grossIVA && c.l.Impuesto[c.ivaIdx].Codigo == ImpuestoIVA {
		c.ivaBase = grossIVABase(c.montoTotal, c.specialBase)
	}
	var good bool
	c.bucket, good = calcIVA(c.t, c.l, &c.l.Impuesto[c.ivaIdx], c.ivaBase, c.p, c.ivaIdx, c.e)
	return good
}

// exonerations computes every tax's exoneration and the tax the issuer
// assumes, and adds each net tax to the summary's breakdown.
func (c *lineCalc) exonerations(s *summary) bool {
	t, l, p, e := c.t, c.l, c.p, c.e
	ok := true
	for j := range l.Impuesto {
		tx := &l.Impuesto[j]
		monto := tx.Monto.Decimal()
		c.taxes = c.taxes.Add(monto)
		exo := dZero
		if tx.Exoneracion != nil {
			var good bool
			base := c.subTotal
			if isIVA(tx.Codigo) {
				base = c.ivaBase
			}
			exo, good = calcExoneracion(t, tx, base, p, j, e)
			if !good {
				ok = false
				continue
			}
		}
		c.exoTotal = c.exoTotal.Add(exo)
		net := monto.Sub(exo)
		if c.issuerBears || (ivaFabricaSeparadoAssumed && l.IVACobradoFabrica == IVAFabricaSeparado && (tx.Codigo == ImpuestoIVA || tx.Codigo == ImpuestoIVAEspecial)) {
			c.asumido = c.asumido.Add(net)
			net = dZero
		}
		s.addDesglose(tx, net)
	}
	return ok
}

// totals sets the line's net tax and total and adds it to the summary.
func (c *lineCalc) totals(s *summary) bool {
	t, l, p, e := c.t, c.l, c.p, c.e
	montoTotal, asumido := c.montoTotal, c.asumido
	l.ImpuestoAsumidoEmisorFabrica = NewAmount(asumido)
	neto := c.taxes.Sub(c.exoTotal).Sub(asumido)
	if !checkComputed(neto, p.f("impuestoNeto"), e) {
		return false
	}
	l.ImpuestoNeto = NewAmount(neto)
	mtl := c.subTotal.Add(neto)
	if !checkComputed(mtl, p.f("montoTotalLinea"), e) {
		return false
	}
	l.MontoTotalLinea = NewAmount(mtl)
	if t == TypeFEE {
		// The export invoice has no BaseImponible and no ImpuestoNeto
		// elements: leave them absent so that the model matches what its
		// XML carries (the net tax still counts in MontoTotalLinea and the
		// totals).
		l.BaseImponible = Amount{}
		l.ImpuestoNeto = Amount{}
	}

	// Buckets: the gross MontoTotal, split between gravado and exonerado by
	// the share of the IVA that is exonerated.
	s.venta = s.venta.Add(montoTotal)
	s.descuentos = s.descuentos.Add(c.totalDesc)
	s.impuesto = s.impuesto.Add(neto)
	s.asumido = s.asumido.Add(asumido)
	if t == TypeFEE && feeNoSujetoAsExento && c.bucket == bucketNoSujeto {
		c.bucket = bucketExento
	}
	switch c.bucket {
	case bucketExento:
		if c.service {
			s.servExentos = s.servExentos.Add(montoTotal)
		} else {
			s.mercExentas = s.mercExentas.Add(montoTotal)
		}
	case bucketNoSujeto:
		if c.service {
			s.servNoSujeto = s.servNoSujeto.Add(montoTotal)
		} else {
			s.mercNoSujeta = s.mercNoSujeta.Add(montoTotal)
		}
	default:
		exonerado := dZero
		if c.ivaIdx >= 0 {
			iva := &l.Impuesto[c.ivaIdx]
			if iva.Exoneracion != nil && iva.Monto.Sign() > 0 {
				m := iva.Monto.Decimal()
				x := iva.Exoneracion.MontoExoneracion.Decimal()
				if x.Cmp(m) >= 0 {
					exonerado = montoTotal
				} else {
					exonerado = montoTotal.Mul(x).DivRound(m, MoneyPlaces)
				}
			}
		}
		gravado := montoTotal.Sub(exonerado)
		if c.service {
			s.servGravados = s.servGravados.Add(gravado)
			s.servExonerado = s.servExonerado.Add(exonerado)
		} else {
			s.mercGravadas = s.mercGravadas.Add(gravado)
			s.mercExonerada = s.mercExonerada.Add(exonerado)
		}
	}
	return true
}

// checkLineCodes reports the codes of a line whose amounts cannot be
// computed (bad quantity or price), so that they are not left for a second
// round.
func checkLineCodes(t DocumentType, l *LineaDetalle, p *linePath, e *errs) {
	for j := range l.Descuento {
		if !codigosDescuento.has(l.Descuento[j].CodigoDescuento) {
			e.add(p.sub("descuento", j, "codigoDescuento"), msg.CodigoDescuento.With())
		}
	}
	for j := range l.Impuesto {
		tx := &l.Impuesto[j]
		if !codigosImpuesto.has(tx.Codigo) {
			e.add(p.sub("impuesto", j, "codigo"), msg.TaxCodigo.With())
			continue
		}
		if tx.Codigo != ImpuestoIVA && tx.Codigo != ImpuestoIVAEspecial {
			continue
		}
		rt, ok := tarifasIVA[tx.CodigoTarifaIVA]
		switch {
		case tx.CodigoTarifaIVA == "":
			e.add(p.sub("impuesto", j, "codigoTarifaIVA"), msg.RequiredWithTax.With(tx.Codigo))
		case !ok:
			e.add(p.sub("impuesto", j, "codigoTarifaIVA"), msg.CodigoTarifaIVA.With())
		case rt.noteOnly && !t.IsNote():
			e.add(p.sub("impuesto", j, "codigoTarifaIVA"), msg.TransitionalRate.With(tx.CodigoTarifaIVA))
		case tx.Tarifa.IsSet() && !tx.Tarifa.Invalid() && tx.Tarifa.Decimal().Cmp(rt.rate) != 0:
			e.add(p.sub("impuesto", j, "tarifa"), msg.TarifaMismatch.With(tx.CodigoTarifaIVA, rt.rate.String()))
		}
	}
}

// calcSpecificTax computes the Monto of a non-IVA tax.
func calcSpecificTax(t DocumentType, l *LineaDetalle, tx *Impuesto, subTotal decimal.Decimal, p *linePath, j int, e *errs) (decimal.Decimal, bool) {
	path := func(f string) string { return p.sub("impuesto", j, f) }
	if tx.CodigoTarifaIVA != "" {
		e.add(path("codigoTarifaIVA"), msg.CodigoTarifaOnly.With())
		return dZero, false
	}
	if tx.FactorCalculoIVA.IsSet() {
		e.add(path("factorCalculoIVA"), msg.FactorOnly08.With())
		return dZero, false
	}
	switch tx.Codigo {
	case ImpuestoSelectivo, ImpuestoOtros, ImpuestoCemento:
		return calcPercentTax(tx, subTotal, p, j, e)
	}

	// Per-unit taxes 03–06.
	if t == TypeFEC || t == TypeFEE || t == TypeREP {
		e.add(path("codigo"), msg.SpecificTaxType.With(tx.Codigo))
		return dZero, false
	}
	if tx.Tarifa.IsSet() {
		e.add(path("tarifa"), msg.TarifaPerUnit.With(tx.Codigo))
		return dZero, false
	}
	di := tx.DatosImpuestoEspecifico
	if di == nil {
		e.add(path("datosImpuestoEspecifico"), msg.RequiredForTax.With(tx.Codigo))
		return dZero, false
	}
	if !checkSpecificData(di, p, j, e) {
		return dZero, false
	}
	return perUnitTax(l, tx, di, p, j, e)
}

// calcPercentTax computes a tax that is a rate of the line's subtotal (02
// selective consumption, 99 others, 12 cement at 5 %).
func calcPercentTax(tx *Impuesto, subTotal decimal.Decimal, p *linePath, j int, e *errs) (decimal.Decimal, bool) {
	path := func(f string) string { return p.sub("impuesto", j, f) }
	if tx.DatosImpuestoEspecifico != nil {
		e.add(path("datosImpuestoEspecifico"), msg.DatosOnly.With())
		return dZero, false
	}
	if tx.Codigo == ImpuestoCemento {
		five := decimal.New(impuestoCementoTarifaPct, 0)
		if !tx.Tarifa.IsSet() {
			tx.Tarifa = NewAmount(five)
		} else if tx.Tarifa.Decimal().Cmp(five) != 0 {
			e.add(path("tarifa"), msg.CementRate.With())
			return dZero, false
		}
	}
	if !tx.Tarifa.IsSet() {
		e.add(path("tarifa"), msg.RequiredForTax.With(tx.Codigo))
		return dZero, false
	}
	if !checkDecimal(tx.Tarifa, 2, 2, p.s("impuesto", j, "tarifa"), e) {
		return dZero, false
	}
	return pctOf(subTotal, tx.Tarifa.Decimal()), true
}

// checkSpecificData checks the per-unit data of a specific tax (03–06):
// quantity and tax per unit, and the optional percentage, proportion and
// volume, each within its digits.
func checkSpecificData(di *DatosImpuestoEspecifico, p *linePath, j int, e *errs) bool {
	path := func(f string) string { return p.sub("impuesto", j, f) }
	dp := func(f string) string { return path("datosImpuestoEspecifico." + f) }
	good := true
	if !di.CantidadUnidadMedida.IsSet() {
		e.add(dp("cantidadUnidadMedida"), msg.Required.With())
		good = false
	} else if !checkDecimal(di.CantidadUnidadMedida, 5, 2, p.s("impuesto", j, "datosImpuestoEspecifico.cantidadUnidadMedida"), e) {
		good = false
	}
	if !di.ImpuestoUnidad.IsSet() {
		e.add(dp("impuestoUnidad"), msg.Required.With())
		good = false
	} else if !checkMoney(di.ImpuestoUnidad, true, p.s("impuesto", j, "datosImpuestoEspecifico.impuestoUnidad"), e) {
		good = false
	}
	if di.Porcentaje.IsSet() && !checkDecimal(di.Porcentaje, 2, 2, p.s("impuesto", j, "datosImpuestoEspecifico.porcentaje"), e) {
		good = false
	}
	if di.Proporcion.IsSet() && !checkDecimal(di.Proporcion, 3, 2, p.s("impuesto", j, "datosImpuestoEspecifico.proporcion"), e) {
		good = false
	}
	if di.VolumenUnidadConsumo.IsSet() && !checkDecimal(di.VolumenUnidadConsumo, 5, 2, p.s("impuesto", j, "datosImpuestoEspecifico.volumenUnidadConsumo"), e) {
		good = false
	}
	return good
}

// perUnitTax computes a per-unit tax from its checked data: fuel (03),
// alcoholic drinks (04, from the proportion or the alcohol percentage),
// drinks and soaps (05, by consumption volume) and tobacco (06).
func perUnitTax(l *LineaDetalle, tx *Impuesto, di *DatosImpuestoEspecifico, p *linePath, j int, e *errs) (decimal.Decimal, bool) {
	path := func(f string) string { return p.sub("impuesto", j, f) }
	dp := func(f string) string { return path("datosImpuestoEspecifico." + f) }
	cant := l.Cantidad.Decimal()
	cum := di.CantidadUnidadMedida.Decimal()
	iu := di.ImpuestoUnidad.Decimal()
	switch tx.Codigo {
	case ImpuestoCombustibles:
		return r5(cum.Mul(iu)), true
	case ImpuestoBebidasAlcohol:
		prop := di.Proporcion
		if !prop.IsSet() {
			if !di.Porcentaje.IsSet() {
				e.add(dp("porcentaje"), msg.AlcoholPercentage.With())
				return dZero, false
			}
			prop = NewAmount(cum.Mul(di.Porcentaje.Decimal()).Shift(-2).Round(proporcionPlaces))
			if prop.IntegerDigits() > 3 {
				e.add(dp("proporcion"), msg.ProporcionTooLarge.With())
				return dZero, false
			}
			di.Proporcion = prop
		}
		return r5(cant.Mul(prop.Decimal()).Mul(iu)), true
	case ImpuestoBebidasJabones:
		if !di.VolumenUnidadConsumo.IsSet() || di.VolumenUnidadConsumo.Sign() <= 0 {
			e.add(dp("volumenUnidadConsumo"), msg.VolumenRequired.With())
			return dZero, false
		}
		vuc := di.VolumenUnidadConsumo.Decimal()
		if isSoapCABYS(l.CodigoCABYS) {
			return r5(cant.Mul(vuc).Mul(iu)), true
		}
		return cant.Mul(cum).Mul(iu).DivRound(vuc, MoneyPlaces), true
	default: // ImpuestoTabaco
		return r5(cant.Mul(cum).Mul(iu)), true
	}
}

// calcIVA computes the Monto of the line's IVA, a rate of base (codes 01
// and 07) or a factor of SubTotal (code 08), and returns the line's bucket.
func calcIVA(t DocumentType, l *LineaDetalle, tx *Impuesto, base decimal.Decimal, p *linePath, j int, e *errs) (bucket, bool) {
	path := func(f string) string { return p.sub("impuesto", j, f) }
	if tx.DatosImpuestoEspecifico != nil {
		e.add(path("datosImpuestoEspecifico"), msg.DatosOnly.With())
		return 0, false
	}
	if tx.Codigo == ImpuestoIVABienesUsados {
		if !tx.FactorCalculoIVA.IsSet() {
			e.add(path("factorCalculoIVA"), msg.RequiredWithTax.With(ImpuestoIVABienesUsados))
			return 0, false
		}
		if !checkDecimal(tx.FactorCalculoIVA, 1, 4, p.s("impuesto", j, "factorCalculoIVA"), e) {
			return 0, false
		}
		if tx.CodigoTarifaIVA != "" {
			if _, ok := tarifasIVA[tx.CodigoTarifaIVA]; !ok {
				e.add(path("codigoTarifaIVA"), msg.CodigoTarifaIVA.With())
				return 0, false
			}
		}
		if tx.Tarifa.IsSet() && !checkDecimal(tx.Tarifa, 2, 2, p.s("impuesto", j, "tarifa"), e) {
			return 0, false
		}
		// The exoneration is measured against the rate (exonerableRate):
		// a tarifa and a rate code must name the same one.
		if rt, ok := tarifasIVA[tx.CodigoTarifaIVA]; ok && tx.CodigoTarifaIVA != "" && tx.Tarifa.IsSet() && tx.Tarifa.Decimal().Cmp(rt.rate) != 0 {
			e.add(path("tarifa"), msg.TarifaMismatch.With(tx.CodigoTarifaIVA, rt.rate.String()))
			return 0, false
		}
		if l.IVACobradoFabrica == IVAFabricaExento {
			e.add(p.field("iVACobradoFabrica"), msg.Exempt02.With())
			return 0, false
		}
		tx.Monto = NewAmount(r5(tx.FactorCalculoIVA.Decimal().Mul(l.SubTotal.Decimal())))
		return bucketGravado, true
	}

	// Codes 01 and 07.
	if tx.FactorCalculoIVA.IsSet() {
		e.add(path("factorCalculoIVA"), msg.FactorOnly08.With())
		return 0, false
	}
	if tx.CodigoTarifaIVA == "" {
		e.add(path("codigoTarifaIVA"), msg.RequiredWithTax.With(tx.Codigo))
		return 0, false
	}
	rt, ok := tarifasIVA[tx.CodigoTarifaIVA]
	if !ok {
		e.add(path("codigoTarifaIVA"), msg.CodigoTarifaIVA.With())
		return 0, false
	}
	if rt.noteOnly && !t.IsNote() {
		e.add(path("codigoTarifaIVA"), msg.TransitionalRate.With(tx.CodigoTarifaIVA))
		return 0, false
	}
	if !tx.Tarifa.IsSet() {
		tx.Tarifa = NewAmount(rt.rate)
	} else if tx.Tarifa.Invalid() {
		return 0, false // reported by checkInvalidAmounts
	} else if tx.Tarifa.Decimal().Cmp(rt.rate) != 0 {
		e.add(path("tarifa"), msg.TarifaMismatch.With(tx.CodigoTarifaIVA, rt.rate.String()))
		return 0, false
	} else if !checkDecimal(tx.Tarifa, 2, 2, p.s("impuesto", j, "tarifa"), e) {
		return 0, false
	}
	if l.IVACobradoFabrica == IVAFabricaExento && tx.CodigoTarifaIVA != TarifaExenta {
		e.add(path("codigoTarifaIVA"), msg.Rate10With02.With())
		return 0, false
	}

	var b bucket
	switch tx.CodigoTarifaIVA {
	case TarifaExenta, TarifaTransitoriaCero:
		b = bucketExento
	case TarifaCero, TarifaCeroSinCredito:
		b = bucketNoSujeto
	default:
		b = bucketGravado
	}
	if rt.rate.Sign() == 0 {
		tx.Monto = NewAmount(dZero)
		return b, true
	}
	tx.Monto = NewAmount(pctOf(base, rt.rate))
	return b, true
}

// calcExoneracion computes MontoExoneracion of one tax: TarifaExonerada
// points of base, the amount the tax's Monto is a rate of (see
// exoneratedShare for the used-goods IVA, which is not a rate).
func calcExoneracion(t DocumentType, tx *Impuesto, base decimal.Decimal, p *linePath, j int, e *errs) (decimal.Decimal, bool) {
	x := tx.Exoneracion
	if t == TypeFEE || t == TypeREP {
		e.add(p.sub("impuesto", j, "exoneracion"), msg.NotAllowedInType.With())
		return dZero, false
	}
	switch tx.Codigo {
	case ImpuestoCombustibles, ImpuestoBebidasAlcohol, ImpuestoBebidasJabones, ImpuestoTabaco:
		e.add(p.sub("impuesto", j, "exoneracion"), msg.ExoPerUnit.With())
		return dZero, false
	}
	if !x.TarifaExonerada.IsSet() {
		e.add(p.exo(j, "tarifaExonerada"), msg.Required.With())
		return dZero, false
	}
	if !checkDecimal(x.TarifaExonerada, 2, 2, p.x(j, "tarifaExonerada"), e) {
		return dZero, false
	}
	rate, ok := exonerableRate(tx)
	if !ok {
		e.add(p.sub("impuesto", j, "tarifa"), msg.TarifaForExoneration.With())
		return dZero, false
	}
	if x.TarifaExonerada.Decimal().Cmp(rate) > 0 {
		e.add(p.exo(j, "tarifaExonerada"), msg.TarifaExoExceeds.With(rate.String()))
		return dZero, false
	}
	var m decimal.Decimal
	if tx.Codigo == ImpuestoIVABienesUsados {
		m = exoneratedShare(tx.Monto.Decimal(), x.TarifaExonerada.Decimal(), rate)
	} else {
		m = pctOf(base, x.TarifaExonerada.Decimal())
	}
	x.MontoExoneracion = NewAmount(m)
	return m, true
}

// calcLineREP computes a line of a Recibo Electrónico de Pago: MontoTotal
// and SubTotal are the caller's (the payment), the IVA is computed on
// SubTotal.
func calcLineREP(l *LineaDetalle, p *linePath, e *errs, s *summary) bool {
	ok := checkMoney(l.MontoTotal, true, p.f("montoTotal"), e)
	if ok && l.MontoTotal.Sign() <= 0 {
		e.add(p.field("montoTotal"), msg.GreaterThan0.With())
		ok = false
	}
	if !l.SubTotal.IsSet() {
		l.SubTotal = l.MontoTotal
	} else if !checkMoney(l.SubTotal, true, p.f("subTotal"), e) {
		ok = false
	}
	if len(l.Descuento) > 0 {
		e.add(p.field("descuento"), msg.NotAllowedREP.With())
		ok = false
	}
	if !ok {
		return false
	}
	subTotal := l.SubTotal.Decimal()
	taxes := dZero
	for j := range l.Impuesto {
		tx := &l.Impuesto[j]
		path := func(f string) string { return p.sub("impuesto", j, f) }
		if !codigosImpuesto.has(tx.Codigo) {
			e.add(path("codigo"), msg.TaxCodigo.With())
			ok = false
			continue
		}
		if tx.Exoneracion != nil || tx.DatosImpuestoEspecifico != nil {
			e.add(path("codigo"), msg.REPTaxExtras.With())
			ok = false
			continue
		}
		var monto decimal.Decimal
		switch tx.Codigo {
		case ImpuestoIVA, ImpuestoIVAEspecial:
			rt, found := tarifasIVA[tx.CodigoTarifaIVA]
			if !found {
				e.add(path("codigoTarifaIVA"), msg.CodigoTarifaIVARequired.With())
				ok = false
				continue
			}
			if !tx.Tarifa.IsSet() {
				tx.Tarifa = NewAmount(rt.rate)
			} else if tx.Tarifa.Decimal().Cmp(rt.rate) != 0 {
				e.add(path("tarifa"), msg.TarifaMismatch.With(tx.CodigoTarifaIVA, rt.rate.String()))
				ok = false
				continue
			}
			monto = pctOf(subTotal, rt.rate)
		case ImpuestoIVABienesUsados:
			if !tx.FactorCalculoIVA.IsSet() || !checkDecimal(tx.FactorCalculoIVA, 1, 4, p.s("impuesto", j, "factorCalculoIVA"), e) {
				e.add(path("factorCalculoIVA"), msg.RequiredWithTax.With(ImpuestoIVABienesUsados))
				ok = false
				continue
			}
			monto = r5(tx.FactorCalculoIVA.Decimal().Mul(subTotal))
		default:
			if !tx.Tarifa.IsSet() || !checkDecimal(tx.Tarifa, 2, 2, p.s("impuesto", j, "tarifa"), e) {
				e.add(path("tarifa"), msg.RequiredForTax.With(tx.Codigo))
				ok = false
				continue
			}
			monto = pctOf(subTotal, tx.Tarifa.Decimal())
		}
		tx.Monto = NewAmount(monto)
		taxes = taxes.Add(monto)
		s.addDesglose(tx, monto)
	}
	if !ok {
		return false
	}
	l.ImpuestoNeto = NewAmount(taxes)
	l.ImpuestoAsumidoEmisorFabrica = Amount{}
	l.MontoTotalLinea = NewAmount(subTotal.Add(taxes))
	s.venta = s.venta.Add(l.MontoTotal.Decimal())
	s.impuesto = s.impuesto.Add(taxes)
	return true
}

// addDesglose adds a tax's net amount to its (Codigo, CodigoTarifaIVA) group.
func (s *summary) addDesglose(tx *Impuesto, net decimal.Decimal) {
	tarifa := ""
	if tx.Codigo == ImpuestoIVA || tx.Codigo == ImpuestoIVAEspecial {
		tarifa = tx.CodigoTarifaIVA
	}
	for k := range s.desglose {
		g := &s.desglose[k]
		if g.Codigo == tx.Codigo && g.CodigoTarifaIVA == tarifa {
			g.TotalMontoImpuesto = NewAmount(g.TotalMontoImpuesto.Decimal().Add(net))
			return
		}
	}
	if net.Sign() == 0 && !listZeroTaxGroups {
		return
	}
	s.desglose = append(s.desglose, TotalDesgloseImpuesto{Codigo: tx.Codigo, CodigoTarifaIVA: tarifa, TotalMontoImpuesto: NewAmount(net)})
}

// lineNetIVA is the IVA the client pays on a line: Σ over its IVA taxes of
// Monto − MontoExoneracion; nothing when the issuer bears the line's taxes
// (regalía, bonificación) or the IVA was charged at factory level.
func lineNetIVA(l *LineaDetalle) decimal.Decimal {
	if l.ImpuestoAsumidoEmisorFabrica.Sign() > 0 {
		return dZero
	}
	n := dZero
	for j := range l.Impuesto {
		tx := &l.Impuesto[j]
		if isIVA(tx.Codigo) {
			n = n.Add(tx.Monto.Decimal())
			if tx.Exoneracion != nil {
				n = n.Sub(tx.Exoneracion.MontoExoneracion.Decimal())
			}
		}
	}
	return n
}

// paidAllByCard reports whether there is at least one means of payment and
// all of them are cards.
func paidAllByCard(mp []MedioPago) bool {
	if len(mp) == 0 {
		return false
	}
	for i := range mp {
		if mp[i].TipoMedioPago != MedioPagoTarjeta {
			if ivaDevueltoOnlyWhenAllCard {
				return false
			}
		}
	}
	return true
}

// calcSummary fills ResumenFactura from the accumulated line amounts, the
// other charges and the payments.
func calcSummary(doc *Document, e *errs, s *summary) {
	calcCurrency(&doc.ResumenFactura.CodigoTipoMoneda, e)
	totalVentaNeta := s.venta.Sub(s.descuentos)
	totalOC := calcOtrosCargos(doc, totalVentaNeta, !s.linesRefused, e)
	if !e.ok() {
		return
	}
	total := calcTotals(doc, s, totalVentaNeta, totalOC, e)
	calcMedioPago(doc, total, e)
}

// calcCurrency checks the currency and its exchange rate (1 for colones,
// set when absent).
func calcCurrency(m *CodigoTipoMoneda, e *errs) {
	if m.CodigoMoneda == "" {
		e.add("resumenFactura.codigoTipoMoneda.codigoMoneda", msg.Required.With())
	} else if !monedas.has(m.CodigoMoneda) {
		e.add("resumenFactura.codigoTipoMoneda.codigoMoneda", msg.CurrencyNota13.With())
	}
	tc := m.TipoCambio
	switch {
	case m.CodigoMoneda == "CRC" && !tc.IsSet():
		m.TipoCambio = NewAmount(dOne)
	case m.CodigoMoneda == "CRC" && tc.Decimal().Cmp(dOne) != 0:
		e.add("resumenFactura.codigoTipoMoneda.tipoCambio", msg.TipoCambioCRC.With())
	case !tc.IsSet():
		e.add("resumenFactura.codigoTipoMoneda.tipoCambio", msg.Required.With())
	case tc.Sign() <= 0:
		e.add("resumenFactura.codigoTipoMoneda.tipoCambio", msg.GreaterThan0.With())
	default:
		checkMoney(tc, true, absPath("resumenFactura.codigoTipoMoneda.tipoCambio"), e)
	}
}

// calcOtrosCargos computes each other charge (a fixed amount, or a
// percentage of the net sale) and returns their total. Unless netKnown, a
// refused line is missing from totalVentaNeta: a charge's amount is then
// not compared with its percentage, whose true value is not known.
func calcOtrosCargos(doc *Document, totalVentaNeta decimal.Decimal, netKnown bool, e *errs) decimal.Decimal {
	t := doc.Type
	totalOC := dZero
	if len(doc.OtrosCargos) > 0 && t == TypeREP {
		e.add("otrosCargos", msg.NotAllowedREP.With())
	}
	if len(doc.OtrosCargos) > 15 {
		e.add("otrosCargos", msg.OtrosCargosMax.With())
	}
	for i := range doc.OtrosCargos {
		oc := &doc.OtrosCargos[i]
		base := idx("otrosCargos", i)
		if !tiposOtrosCargos.has(oc.TipoDocumentoOC) {
			e.add(base+".tipoDocumentoOC", msg.TipoDocumentoOC.With())
		}
		var monto decimal.Decimal
		switch {
		case oc.PorcentajeOC.IsSet():
			if !checkDecimal(oc.PorcentajeOC, 4, 5, absPath(base+".porcentajeOC"), e) {
				continue
			}
			monto = pctOf(totalVentaNeta, oc.PorcentajeOC.Decimal())
			if oc.MontoCargo.IsSet() && amountAndPercentageMustAgree && netKnown && oc.MontoCargo.Decimal().Cmp(monto) != 0 {
				e.add(base+".montoCargo", msg.MontoCargoMismatch.With(otrosCargosPorcentajeBase, monto.String()))
				continue
			}
		case oc.MontoCargo.IsSet():
			if !checkMoney(oc.MontoCargo, true, absPath(base+".montoCargo"), e) {
				continue
			}
			monto = oc.MontoCargo.Decimal()
		default:
			e.add(base+".montoCargo", msg.MontoCargoRequired.With())
			continue
		}
		if monto.Sign() <= 0 {
			e.add(base+".montoCargo", msg.GreaterThan0.With())
			continue
		}
		oc.MontoCargo = NewAmount(monto)
		totalOC = totalOC.Add(monto)
	}

	return totalOC
}

// calcTotals writes the summary's totals from the lines' sums and returns
// TotalComprobante.
func calcTotals(doc *Document, s *summary, totalVentaNeta, totalOC decimal.Decimal, e *errs) decimal.Decimal {
	r := &doc.ResumenFactura
	t := doc.Type
	gravado := s.servGravados.Add(s.mercGravadas)
	exento := s.servExentos.Add(s.mercExentas)
	exonerado := s.servExonerado.Add(s.mercExonerada)
	noSujeto := s.servNoSujeto.Add(s.mercNoSujeta)
	r.TotalServGravados = NewAmount(s.servGravados)
	r.TotalServExentos = NewAmount(s.servExentos)
	r.TotalServExonerado = NewAmount(s.servExonerado)
	r.TotalServNoSujeto = NewAmount(s.servNoSujeto)
	r.TotalMercanciasGravadas = NewAmount(s.mercGravadas)
	r.TotalMercanciasExentas = NewAmount(s.mercExentas)
	r.TotalMercExonerada = NewAmount(s.mercExonerada)
	r.TotalMercNoSujeta = NewAmount(s.mercNoSujeta)
	r.TotalGravado = NewAmount(gravado)
	r.TotalExento = NewAmount(exento)
	r.TotalExonerado = NewAmount(exonerado)
	r.TotalNoSujeto = NewAmount(noSujeto)
	if t == TypeREP {
		r.TotalVenta = NewAmount(s.venta)
	} else {
		r.TotalVenta = NewAmount(gravado.Add(exento).Add(exonerado).Add(noSujeto))
	}
	r.TotalDescuentos = NewAmount(s.descuentos)
	r.TotalVentaNeta = NewAmount(totalVentaNeta)
	r.TotalDesgloseImpuesto = s.desglose
	r.TotalImpuesto = NewAmount(s.impuesto)
	r.TotalImpAsumEmisorFabrica = NewAmount(s.asumido)
	r.TotalIVADevuelto = NewAmount(s.ivaDevuelto)
	r.TotalOtrosCargos = NewAmount(totalOC)
	total := totalVentaNeta.Add(s.impuesto).Add(totalOC).Sub(s.ivaDevuelto)
	if t == TypeREP && !repTotalComprobanteIncludesTax {
		total = s.venta
	}
	for _, c := range [...]struct {
		d    decimal.Decimal
		path string
	}{
		{r.TotalVenta.Decimal(), "resumenFactura.totalVenta"},
		{total, "resumenFactura.totalComprobante"},
	} {
		checkComputed(c.d, absPath(c.path), e)
	}
	r.TotalComprobante = NewAmount(total)
	return total
}

// calcMedioPago checks the means of payment and fills the amount of a
// single one when the total is not 0.
func calcMedioPago(doc *Document, total decimal.Decimal, e *errs) {
	mp := doc.ResumenFactura.MedioPago
	if len(mp) > 4 {
		e.add("resumenFactura.medioPago", msg.MediosPagoMax.With())
		return
	}
	if len(mp) > 1 && total.Sign() == 0 && paymentAmountMustBePositive {
		e.add("resumenFactura.medioPago", msg.MediosPagoZeroTotal.With())
		return
	}
	for i := range mp {
		m := &mp[i]
		base := idx("resumenFactura.medioPago", i)
		if !mediosPago.has(m.TipoMedioPago) {
			e.add(base+".tipoMedioPago", msg.TipoMedioPago.With())
		}
		if m.TotalMedioPago.IsSet() && checkMoney(m.TotalMedioPago, true, absPath(base+".totalMedioPago"), e) &&
			m.TotalMedioPago.Sign() == 0 && paymentAmountMustBePositive {
			if total.Sign() == 0 && len(mp) == 1 {
				e.add(base+".totalMedioPago", msg.TotalMedioPagoZeroTotal.With())
			} else {
				e.add(base+".totalMedioPago", msg.GreaterThan0.With())
			}
		}
	}
	if !e.ok() {
		return
	}
	switch len(mp) {
	case 0:
		return
	case 1:
		m := &mp[0]
		if !m.TotalMedioPago.IsSet() {
			// A zero total gets no amount: the tax authority refuses
			// a TotalMedioPago of 0, and one means of payment needs none.
			if total.Sign() > 0 || !paymentAmountMustBePositive {
				m.TotalMedioPago = NewAmount(total)
			}
		} else if singlePaymentMustMatch && m.TotalMedioPago.Decimal().Cmp(total) != 0 {
			e.add("resumenFactura.medioPago[0].totalMedioPago", msg.TotalMedioPago.With(total.String()))
		}
	default:
		sum := dZero
		missing := false
		for i := range mp {
			if !mp[i].TotalMedioPago.IsSet() {
				e.add(idx("resumenFactura.medioPago", i)+".totalMedioPago", msg.TotalMedioPagoRequired.With())
				missing = true
				continue
			}
			sum = sum.Add(mp[i].TotalMedioPago.Decimal())
		}
		if !missing && sum.Cmp(total) != 0 {
			e.add("resumenFactura.medioPago", msg.MediosPagoSum.With(sum.String(), total.String()))
		}
	}
}

// isDigits reports whether s has between min and max ASCII digits and
// nothing else.
func isDigits(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// fpath is a field path built only when an error is reported, so that the
// checks on the happy path allocate nothing.
type fpath struct {
	p    *linePath
	kind uint8 // 0 absolute, 1 line field, 2 line list item field, 3 exoneration field
	list string
	j    int
	name string
}

func absPath(s string) fpath                   { return fpath{name: s} }
func (p *linePath) f(name string) fpath        { return fpath{p: p, kind: 1, name: name} }
func (p *linePath) x(j int, name string) fpath { return fpath{p: p, kind: 3, j: j, name: name} }
func (p *linePath) s(list string, j int, name string) fpath {
	return fpath{p: p, kind: 2, list: list, j: j, name: name}
}

func (f fpath) String() string {
	switch f.kind {
	case 1:
		return f.p.field(f.name)
	case 2:
		return f.p.sub(f.list, f.j, f.name)
	case 3:
		return f.p.exo(f.j, f.name)
	}
	return f.name
}
