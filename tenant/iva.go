package tenant

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
	"facturad/hacienda/msg"
)

// The IVA summary of a month (A.15, docs/design/iva-summary.md): what a
// company sold and bought in a Costa Rica calendar month, per tax code and
// rate, for its monthly IVA return. Each document's share is a compact
// breakdown (IVABreakdown) kept beside it, written with the reservation
// that numbers it (Document.IVABreakdown, ReceivedDocument.IVABreakdown),
// so that the summary adds up a few figures per document instead of
// parsing its XML; a document stored without one (before the breakdowns
// existed, or numbered by a build that kept none) has its own computed
// from its stored XML when a summary meets it, and kept.

// IVACell is one document's figures for one tax code and rate, in
// colones at 5 decimals, unrounded. A credit note's are positive: the
// summary subtracts them.
type IVACell struct {
	Codigo          string // nota-8 tax code; "" for the lines that carry no IVA
	CodigoTarifaIVA string // nota-8.1 rate code; "" for a tax without one
	Tarifa          string // the rate as written (13, 0.5); "" for none
	Base            decimal.Decimal
	Impuesto        decimal.Decimal
	Exento          decimal.Decimal
	Exonerado       decimal.Decimal
	NoSujeto        decimal.Decimal
}

// IVABreakdown is one document's tax breakdown.
type IVABreakdown struct {
	Cells []IVACell
	// Acreditable is the creditable tax of a received document: what the
	// company's accepting message declared (see CreditableTax). Zero for an
	// issued document, but for a purchase invoice (FEC), whose tax the
	// company bears and credits.
	Acreditable decimal.Decimal
}

// ivaCellJSON is a cell as stored: the key and the five amounts as
// decimal strings, in one array, to keep a breakdown of a few cells in a
// few dozen bytes.
type ivaBreakdownJSON struct {
	V int         `json:"v"`
	C [][8]string `json:"c"`
	A string      `json:"a,omitempty"`
}

// ivaBreakdownVersion is the stored form's version.
const ivaBreakdownVersion = 1

// MarshalJSON writes b in its stored form.
func (b IVABreakdown) MarshalJSON() ([]byte, error) {
	out := ivaBreakdownJSON{V: ivaBreakdownVersion, C: make([][8]string, len(b.Cells))}
	for i, c := range b.Cells {
		out.C[i] = [8]string{c.Codigo, c.CodigoTarifaIVA, c.Tarifa, c.Base.String(), c.Impuesto.String(),
			c.Exento.String(), c.Exonerado.String(), c.NoSujeto.String()}
	}
	if !b.Acreditable.IsZero() {
		out.A = b.Acreditable.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads b's stored form.
func (b *IVABreakdown) UnmarshalJSON(data []byte) error {
	var in ivaBreakdownJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("iva breakdown: %w", err)
	}
	if in.V != ivaBreakdownVersion {
		return fmt.Errorf("iva breakdown: unknown version %d", in.V)
	}
	out := IVABreakdown{Cells: make([]IVACell, len(in.C))}
	for i, r := range in.C {
		var ds [5]decimal.Decimal
		for j := range ds {
			d, err := decimal.NewFromString(r[3+j])
			if err != nil {
				return fmt.Errorf("iva breakdown: cell %d: %w", i, err)
			}
			ds[j] = d
		}
		out.Cells[i] = IVACell{Codigo: r[0], CodigoTarifaIVA: r[1], Tarifa: r[2],
			Base: ds[0], Impuesto: ds[1], Exento: ds[2], Exonerado: ds[3], NoSujeto: ds[4]}
	}
	if in.A != "" {
		a, err := decimal.NewFromString(in.A)
		if err != nil {
			return fmt.Errorf("iva breakdown: acreditable: %w", err)
		}
		out.Acreditable = a
	}
	*b = out
	return nil
}

// BreakdownOf computes the tax breakdown of a calculated (or parsed)
// document, line by line (docs/design/iva-summary.md, "What each line
// adds"):
//   - every tax of a line adds Monto − MontoExoneracion to its cell's
//     Impuesto (a tax the issuer assumes, ImpuestoAsumidoEmisorFabrica,
//     is still tax owed and counts);
//   - an IVA tax (codes 01, 07, 08) adds the line's BaseImponible (its
//     SubTotal when the document has none, as an export invoice) to its
//     cell: to Exento at rate codes 10 and 05, to NoSujeto at 01 and 11
//     (to Exento in an export invoice, whose summary has no "no sujeto"),
//     else to Base; an exonerated one splits it: all of it to Exonerado
//     when the exoneration covers the whole tax, else the exonerated share
//     (base × MontoExoneracion / Monto, at 5 decimals) to Exonerado and
//     the rest to Base;
//   - another tax (selectivo, specific taxes, 12, 99) adds the line's
//     SubTotal to its cell's Base, split the same way when exonerated;
//   - a line with no IVA tax adds its SubTotal to the Exento of the cell
//     with no code (the calculation's conservative reading, §11.6);
//   - a document in another currency has each cell's figures converted
//     to colones at its TipoCambio, to 5 decimals.
//
// Cells are in the order their key first appears.
func BreakdownOf(doc *hacienda.Document) IVABreakdown {
	var b IVABreakdown
	idx := map[[3]string]int{}
	cell := func(codigo, tarifaCode, tarifa string) *IVACell {
		k := [3]string{codigo, tarifaCode, tarifa}
		i, ok := idx[k]
		if !ok {
			i = len(b.Cells)
			idx[k] = i
			b.Cells = append(b.Cells, IVACell{Codigo: codigo, CodigoTarifaIVA: tarifaCode, Tarifa: tarifa})
		}
		return &b.Cells[i]
	}
	fee := doc.Type == hacienda.TypeFEE
	for li := range doc.DetalleServicio {
		l := &doc.DetalleServicio[li]
		sub := l.SubTotal.Decimal()
		base := sub
		if l.BaseImponible.IsSet() {
			base = l.BaseImponible.Decimal()
		}
		hasIVA := false
		for ti := range l.Impuesto {
			tx := &l.Impuesto[ti]
			tarifa := ""
			if tx.Tarifa.IsSet() {
				tarifa = tx.Tarifa.Decimal().String()
			}
			c := cell(tx.Codigo, tx.CodigoTarifaIVA, tarifa)
			monto := tx.Monto.Decimal()
			exo := decimal.Zero
			if tx.Exoneracion != nil {
				exo = tx.Exoneracion.MontoExoneracion.Decimal()
			}
			c.Impuesto = c.Impuesto.Add(monto.Sub(exo))
			b := sub
			iva := tx.Codigo == hacienda.ImpuestoIVA || tx.Codigo == hacienda.ImpuestoIVAEspecial || tx.Codigo == hacienda.ImpuestoIVABienesUsados
			if iva {
				hasIVA = true
				b = base
				switch tx.CodigoTarifaIVA {
				case hacienda.TarifaExenta, hacienda.TarifaTransitoriaCero:
					c.Exento = c.Exento.Add(b)
					continue
				case hacienda.TarifaCero, hacienda.TarifaCeroSinCredito:
					if fee {
						c.Exento = c.Exento.Add(b)
					} else {
						c.NoSujeto = c.NoSujeto.Add(b)
					}
					continue
				}
			}
			exonerated := decimal.Zero
			switch {
			case exo.Sign() <= 0 || monto.Sign() <= 0:
			case exo.Cmp(monto) >= 0:
				exonerated = b
			default:
				exonerated = b.Mul(exo).DivRound(monto, hacienda.MoneyPlaces)
			}
			c.Exonerado = c.Exonerado.Add(exonerated)
			c.Base = c.Base.Add(b.Sub(exonerated))
		}
		if !hasIVA {
			c := cell("", "", "")
			c.Exento = c.Exento.Add(sub)
		}
	}
	// The return is in colones: a document in another currency has its
	// figures converted at its own exchange rate, each cell's sum to 5
	// decimals.
	if rate := exchangeRate(doc); !rate.Equal(decimal.NewFromInt(1)) {
		for i := range b.Cells {
			c := &b.Cells[i]
			for _, x := range []*decimal.Decimal{&c.Base, &c.Impuesto, &c.Exento, &c.Exonerado, &c.NoSujeto} {
				*x = inColones(*x, rate)
			}
		}
	}
	if doc.Type == hacienda.TypeFEC {
		for _, c := range b.Cells {
			b.Acreditable = b.Acreditable.Add(c.Impuesto)
		}
	}
	return b
}

// exchangeRate is the document's TipoCambio to the colón: 1 for colones
// and when none is written.
func exchangeRate(doc *hacienda.Document) decimal.Decimal {
	if tc := doc.ResumenFactura.CodigoTipoMoneda.TipoCambio; tc.IsSet() && tc.Sign() > 0 {
		return tc.Decimal()
	}
	return decimal.NewFromInt(1)
}

// inColones converts an amount at rate, to 5 decimals (half away from
// zero).
func inColones(d, rate decimal.Decimal) decimal.Decimal {
	return d.Mul(rate).Round(hacienda.MoneyPlaces)
}

// CreditableTax is the tax a receiver's message lets the company credit:
// what it declared in MontoTotalImpuestoAcreditar; when it declared none
// (the element is for a partial credit, spec §10.17), none with
// CondicionImpuesto 04 (an expense without credit) or 05 (proportionality,
// applied in the return, not per document), else the document's whole
// MontoTotalImpuesto. A rejection (mensaje 3) credits nothing.
func CreditableTax(m *hacienda.MensajeReceptor) decimal.Decimal {
	switch {
	case m == nil || m.Mensaje == hacienda.ReceptorRechazado:
		return decimal.Zero
	case m.MontoTotalImpuestoAcreditar.IsSet():
		return m.MontoTotalImpuestoAcreditar.Decimal()
	case m.CondicionImpuesto == "04" || m.CondicionImpuesto == "05":
		return decimal.Zero
	}
	return m.MontoTotalImpuesto.Decimal()
}

// IVASource is one document a summary adds up, as an IVAStore reads it.
type IVASource struct {
	// Received says it is a received document (a purchase); else an
	// issued one.
	Received bool
	ID       int64
	// Clave is the document's clave (a received one: the supplier's), to
	// name it when it cannot be summed.
	Clave string
	// Tipo is the document's type (a received one: the supplier's).
	Tipo string
	// Breakdown is the stored breakdown; nil when there is none (a
	// document stored before breakdowns were kept), and then XML is the
	// document's signed XML (a received one: the supplier's) and Message
	// the company's signed message (received only).
	Breakdown []byte
	XML       []byte
	Message   []byte
}

// IVAQuery selects the documents of a company's month.
type IVAQuery struct {
	CompanyID int64
	Month     Month
	// Ambiente is the environment whose documents count: the company's
	// current one (a company trying the test environment sees its test
	// documents; once in production, only its production ones).
	Ambiente string
}

// IVAStore reads what the IVA summary adds up and keeps the breakdowns
// (both store adapters implement it).
type IVAStore interface {
	// IVASources calls fn, in no promised order, with every document of
	// the company that the month's summary counts: its issued documents
	// in estado 01 whose FechaEmision falls in the month, and its received
	// documents whose message (mensaje 1 or 2) is in estado 01 and was
	// judged (CheckedAt) in the month. An error from fn stops the read and
	// is returned.
	IVASources(ctx context.Context, q IVAQuery, fn func(IVASource) error) error
	// SaveIVABreakdown stores the breakdown of the document (received:
	// received document) id, replacing any. A missing row is ErrNotFound.
	// It is the summary's write-back of a breakdown computed from the
	// XML: a document's own is written by its reservation
	// (Document.IVABreakdown), in the transaction that numbers it.
	SaveIVABreakdown(ctx context.Context, received bool, id int64, breakdown []byte) error
	// HasIVABreakdown reports whether the document (received: received
	// document) id has a stored breakdown.
	HasIVABreakdown(ctx context.Context, received bool, id int64) (bool, error)
}

// IVARow is one line of the summary: a tax code and rate's figures for
// the month, rounded to 2 decimals.
type IVARow struct {
	Codigo, CodigoTarifaIVA, Tarifa string
	Base, Impuesto, Exento          decimal.Decimal
	Exonerado, NoSujeto             decimal.Decimal
	// Acreditable is the creditable tax of the purchases (purchase rows).
	Acreditable decimal.Decimal
	// Documentos counts the documents that add to the row (a credit note
	// counts one, though its figures are subtracted).
	Documentos int64
}

// IVASummary is a company's month.
type IVASummary struct {
	Periodo string
	Ventas  []IVARow
	Compras []IVARow
	// TotalVentas and TotalCompras are the columns' totals over each
	// list, summed from the unrounded figures and rounded once.
	TotalVentas, TotalCompras IVARow
}

// ivaSide is how a document adds to the summary: to sales or purchases,
// with sign +1 or −1; ok false when it does not count.
func ivaSide(received bool, tipo string) (purchase bool, sign int64, ok bool) {
	t := hacienda.DocumentType(tipo)
	if received {
		switch t {
		case hacienda.TypeFE, hacienda.TypeND, hacienda.TypeFEE:
			return true, 1, true
		case hacienda.TypeNC:
			return true, -1, true
		}
		return false, 0, false
	}
	switch t {
	case hacienda.TypeFE, hacienda.TypeTE, hacienda.TypeFEE, hacienda.TypeND:
		return false, 1, true
	case hacienda.TypeNC:
		return false, -1, true
	case hacienda.TypeFEC:
		return true, 1, true
	}
	// A payment receipt (REP) moves no IVA here: docs/design/iva-summary.md.
	return false, 0, false
}

// ivaAcc adds documents' breakdowns at full precision.
type ivaAcc struct {
	rows  map[[3]string]*IVARow
	total IVARow
}

func (a *ivaAcc) add(b IVABreakdown, sign int64) {
	s := decimal.NewFromInt(sign)
	if a.rows == nil {
		a.rows = map[[3]string]*IVARow{}
	}
	seen := map[[3]string]bool{}
	for _, c := range b.Cells {
		k := [3]string{c.Codigo, c.CodigoTarifaIVA, c.Tarifa}
		r := a.rows[k]
		if r == nil {
			r = &IVARow{Codigo: c.Codigo, CodigoTarifaIVA: c.CodigoTarifaIVA, Tarifa: c.Tarifa}
			a.rows[k] = r
		}
		for _, x := range []*IVARow{r, &a.total} {
			x.Base = x.Base.Add(c.Base.Mul(s))
			x.Impuesto = x.Impuesto.Add(c.Impuesto.Mul(s))
			x.Exento = x.Exento.Add(c.Exento.Mul(s))
			x.Exonerado = x.Exonerado.Add(c.Exonerado.Mul(s))
			x.NoSujeto = x.NoSujeto.Add(c.NoSujeto.Mul(s))
		}
		if !seen[k] {
			seen[k] = true
			r.Documentos++
		}
	}
	a.total.Acreditable = a.total.Acreditable.Add(b.Acreditable.Mul(s))
	a.total.Documentos++
	// The creditable tax is the document's, not a line's: it goes to the
	// row of the document's tax in proportion to that row's share of it.
	if b.Acreditable.IsZero() {
		return
	}
	tax := decimal.Zero
	for _, c := range b.Cells {
		tax = tax.Add(c.Impuesto)
	}
	if tax.Sign() == 0 {
		return
	}
	for _, c := range b.Cells {
		if c.Impuesto.Sign() == 0 {
			continue
		}
		r := a.rows[[3]string{c.Codigo, c.CodigoTarifaIVA, c.Tarifa}]
		share := b.Acreditable.Mul(c.Impuesto).DivRound(tax, hacienda.MoneyPlaces)
		r.Acreditable = r.Acreditable.Add(share.Mul(s))
	}
}

// round2 rounds half away from zero to 2 decimals (shopspring's Round).
func round2(d decimal.Decimal) decimal.Decimal { return d.Round(2) }

func (r IVARow) rounded() IVARow {
	r.Base, r.Impuesto, r.Exento = round2(r.Base), round2(r.Impuesto), round2(r.Exento)
	r.Exonerado, r.NoSujeto, r.Acreditable = round2(r.Exonerado), round2(r.NoSujeto), round2(r.Acreditable)
	return r
}

// list returns the rows rounded once, ordered by code, rate code and
// rate.
func (a *ivaAcc) list() []IVARow {
	out := make([]IVARow, 0, len(a.rows))
	for _, r := range a.rows {
		out = append(out, r.rounded())
	}
	slices.SortFunc(out, func(x, y IVARow) int {
		return cmp.Or(cmp.Compare(x.Codigo, y.Codigo), cmp.Compare(x.CodigoTarifaIVA, y.CodigoTarifaIVA),
			cmp.Compare(x.Tarifa, y.Tarifa))
	})
	return out
}

// ivaSummer adds documents up into the month's summary: each to sales or
// purchases by its side (ivaSide), every figure summed at full precision
// and rounded once, half away from zero, to 2 decimals.
type ivaSummer struct{ ventas, compras ivaAcc }

func (s *ivaSummer) add(received bool, tipo string, b IVABreakdown) {
	purchase, sign, ok := ivaSide(received, tipo)
	if !ok {
		return
	}
	if purchase {
		s.compras.add(b, sign)
	} else {
		s.ventas.add(b, sign)
	}
}

func (s *ivaSummer) summary(periodo string) IVASummary {
	return IVASummary{Periodo: periodo, Ventas: s.ventas.list(), Compras: s.compras.list(),
		TotalVentas: s.ventas.total.rounded(), TotalCompras: s.compras.total.rounded()}
}

// ivaStore is the Service's store as an IVAStore.
func (s *Service) ivaStore() (IVAStore, error) {
	st, ok := s.store.(IVAStore)
	if !ok {
		return nil, errors.New("tenant: the store keeps no IVA breakdowns")
	}
	return st, nil
}

// IVASummary adds up a company's month (periodo YYYY-MM, required) for
// anyone who manages the company: the admin, its reseller, its users (as
// the audit log). Another tenant's company is ErrNotFound; a malformed
// periodo a validation error on periodo.
//
// A document without a stored breakdown has its own computed from its
// stored XML (and the message's, for a received one) and stored, so that
// the next summary reads it. A document the month counts that has neither
// a breakdown nor XML that can be read is never left out silently: the
// summary fails with *IVAIncompleteError naming it (decision 112).
func (s *Service) IVASummary(ctx context.Context, p Principal, companyID int64, periodo string) (IVASummary, error) {
	if periodo == "" {
		e := newValidationError()
		e.Add(FieldPeriodo, msg.PeriodoRequired.With())
		return IVASummary{}, e
	}
	m, err := ParsePeriodo(periodo)
	if err != nil {
		return IVASummary{}, err
	}
	st, err := s.ivaStore()
	if err != nil {
		return IVASummary{}, err
	}
	c, err := s.companyFor(ctx, p, companyID)
	if err != nil {
		return IVASummary{}, err
	}
	var (
		sum     ivaSummer
		backlog []IVABreakdownWrite
		missing = &IVAIncompleteError{Periodo: m.Periodo}
		cause   error // the first missing document's
	)
	err = st.IVASources(ctx, IVAQuery{CompanyID: companyID, Month: m, Ambiente: AmbienteFor(c, s.ambiente)}, func(src IVASource) error {
		if _, _, ok := ivaSide(src.Received, src.Tipo); !ok {
			return nil // a REP: nothing to add, nothing to compute
		}
		var b IVABreakdown
		if src.Breakdown != nil {
			if err := json.Unmarshal(src.Breakdown, &b); err != nil {
				return fmt.Errorf("document %d: %w", src.ID, err)
			}
		} else {
			var err error
			if b, err = BreakdownFromXML(src.Received, src.XML, src.Message); err != nil {
				missing.add(src)
				if cause == nil {
					cause = err
				}
				return nil
			}
			if raw, err := json.Marshal(b); err == nil && len(backlog) < maxIVABackfill {
				backlog = append(backlog, IVABreakdownWrite{Received: src.Received, ID: src.ID, Breakdown: raw})
			}
		}
		sum.add(src.Received, src.Tipo, b)
		return nil
	})
	if err != nil {
		return IVASummary{}, fmt.Errorf("iva summary of company %d, %s: %w", companyID, m.Periodo, err)
	}
	s.backfillIVA(ctx, st, companyID, backlog)
	if missing.Count > 0 {
		s.log.WarnContext(ctx, "iva summary: documents without a breakdown whose XML cannot be read; the summary is refused",
			"company", companyID, "periodo", m.Periodo, "count", missing.Count, "claves", missing.Claves, "first_err", cause)
		return IVASummary{}, missing
	}
	return sum.summary(m.Periodo), nil
}

// IVAIncompleteError refuses a month the summary cannot add up whole:
// documents it counts have no stored breakdown and no stored XML it can
// read (decision 112). An IVA return filed from a summary that leaves a
// document out is wrong, so the summary names them instead of answering.
type IVAIncompleteError struct {
	Periodo string
	// Count is how many documents are missing; Claves names the first
	// maxIVAMissingNamed of them (a document's id where it has no clave).
	Count  int
	Claves []string
}

// maxIVAMissingNamed bounds the claves an IVAIncompleteError names.
const maxIVAMissingNamed = 20

func (e *IVAIncompleteError) add(src IVASource) {
	e.Count++
	if len(e.Claves) >= maxIVAMissingNamed {
		return
	}
	name := src.Clave
	if name == "" {
		name = fmt.Sprintf("id %d", src.ID)
	}
	if src.Received {
		name = "recibido " + name
	}
	e.Claves = append(e.Claves, name)
}

func (e *IVAIncompleteError) Error() string {
	more := ""
	if e.Count > len(e.Claves) {
		more = fmt.Sprintf(" and %d more", e.Count-len(e.Claves))
	}
	return fmt.Sprintf("The IVA summary of %s cannot be complete: %d document(s) of the month have no stored tax breakdown "+
		"and their XML cannot be read from the store: %s%s. The summary is refused rather than answered without them; "+
		"report these claves to the operator.", e.Periodo, e.Count, strings.Join(e.Claves, ", "), more)
}

// Describe is the refusal in the catalogue's words (Error's, rendered in
// the caller's language).
func (e *IVAIncompleteError) Describe() msg.Message {
	var more any = ""
	if e.Count > len(e.Claves) {
		more = msg.AndMore.With(e.Count - len(e.Claves))
	}
	return msg.IVAIncomplete.With(e.Periodo, e.Count, strings.Join(e.Claves, ", "), more)
}

// HTTPStatus is 409: the stored documents, not the request, are at fault,
// and asking again does not help until they are mended.
func (e *IVAIncompleteError) HTTPStatus() int { return 409 }

// IVABreakdownWrite is one breakdown a summary stores back.
type IVABreakdownWrite struct {
	Received  bool
	ID        int64
	Breakdown []byte
}

// IVABatchSaver is a store that writes many breakdowns in one call (both
// adapters do: one statement or one transaction a batch). Rows that no
// longer exist are skipped.
type IVABatchSaver interface {
	SaveIVABreakdowns(ctx context.Context, ws []IVABreakdownWrite) error
}

// ivaBackfillBatch is how many breakdowns one batched write stores.
const ivaBackfillBatch = 500

// backfillIVA stores the breakdowns a summary computed, so that the next
// summary reads them; one not stored is computed again then, so a failure
// costs only time. It writes in batches when the store can, stops at the
// first error of ctx (the route's timeout: every later write would fail
// too) and logs once, with the count left unstored.
func (s *Service) backfillIVA(ctx context.Context, st IVAStore, companyID int64, backlog []IVABreakdownWrite) {
	if len(backlog) == 0 {
		return
	}
	stored := 0
	var firstErr error
	if bs, ok := st.(IVABatchSaver); ok {
		for start := 0; start < len(backlog) && ctx.Err() == nil; start += ivaBackfillBatch {
			batch := backlog[start:min(start+ivaBackfillBatch, len(backlog))]
			if err := bs.SaveIVABreakdowns(ctx, batch); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			stored += len(batch)
		}
	} else {
		for _, w := range backlog {
			if ctx.Err() != nil {
				break
			}
			if err := st.SaveIVABreakdown(ctx, w.Received, w.ID, w.Breakdown); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			stored++
		}
	}
	if stored < len(backlog) {
		if firstErr == nil {
			firstErr = ctx.Err()
		}
		s.log.WarnContext(context.WithoutCancel(ctx), "iva summary: computed breakdowns not stored; the next summary computes them again",
			"company", companyID, "computed", len(backlog), "not_stored", len(backlog)-stored, "err", firstErr)
	}
}

// maxIVABackfill bounds the breakdowns one summary stores back (the rest
// are computed again by the next one), so that the first summary of a
// large month after an upgrade does not also write the month.
const maxIVABackfill = 10000

// BreakdownFromXML computes the breakdown of a document stored without
// one, from its signed XML (for a received one: the supplier's XML, and
// message the company's signed message, for the creditable tax). The
// summary computes a missing breakdown with it, and the archive's sweep
// before it drops a row's XML (pipeline/archivesweep), so that a document
// whose XML has left the store still adds up.
func BreakdownFromXML(received bool, xml, message []byte) (IVABreakdown, error) {
	if len(xml) == 0 {
		return IVABreakdown{}, errors.New("no stored XML")
	}
	doc, err := hacienda.ParseXML(xml)
	if err != nil {
		return IVABreakdown{}, err
	}
	b := BreakdownOf(doc)
	if received {
		msg, err := hacienda.ParseMensajeReceptor(message)
		if err != nil {
			return IVABreakdown{}, fmt.Errorf("the message: %w", err)
		}
		b.Acreditable = inColones(CreditableTax(msg), exchangeRate(doc))
	}
	return b, nil
}

// ReceivedBreakdown is the breakdown of a received document: its
// supplier's document's, with the creditable tax the company's message
// declares (in the document's currency, as the message's amounts are:
// converted to colones at its exchange rate).
func ReceivedBreakdown(doc *hacienda.Document, m *hacienda.MensajeReceptor) IVABreakdown {
	b := BreakdownOf(doc)
	b.Acreditable = inColones(CreditableTax(m), exchangeRate(doc))
	return b
}
