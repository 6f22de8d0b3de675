package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/tenant"
)

// Derived documents (A.15, docs/design/credits-and-payments.md): a credit
// note voiding an accepted document, a new document re-issuing a rejected
// one, and a payment receipt (REP) of a credit sale. Each is built from the
// referenced document's stored request and signed XML, then goes through
// the send job like any document: numbering (with its claim on the
// referenced document, checked in the numbering's transaction), signing,
// submission, settlement and webhooks.
//
// The idempotency hash of a derived document is the hash of the route, the
// referenced clave and the caller's own body, never of the generated send
// request (which depends on the time and on the other claims): the same
// body again replays the same document. The stored Request is the
// generated send request, which the background worker finishes a document
// from.

// The routes' names in the idempotency hash.
const (
	derivedVoid    = "anular"
	derivedReissue = "reemitir"
	derivedPayment = "recibo-pago"
)

// VoidRequest is the body of POST /api/documents/{clave}/anular/v4, the
// contract's type in package hacienda/api.
type VoidRequest = api.VoidRequest

// VoidLine is one credited line of a VoidRequest.
type VoidLine = api.VoidLine

// PaymentRequest is the body of POST /api/documents/{clave}/recibo-pago/v4.
type PaymentRequest = api.PaymentRequest

// Void issues a credit note (NC, 03) for the accepted document clave.
func (p *Pipeline) Void(ctx context.Context, pr tenant.Principal, clave string, req *VoidRequest) (Outcome, error) {
	if req == nil {
		return Outcome{}, invalidField("body", msg.RequestRequired.With())
	}
	return p.derive(ctx, pr, clave, derivedVoid, req, func(ctx context.Context, o *original) (*hacienda.SendDocumentRequest, *tenant.Claim, error) {
		return p.buildVoid(ctx, o, req)
	})
}

// Reissue issues a new document from the rejected document clave's request
// with the fields of body (a send body without clave) merged over it.
func (p *Pipeline) Reissue(ctx context.Context, pr tenant.Principal, clave string, body []byte) (Outcome, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return Outcome{}, invalidField("body", msg.JSONObject.With())
	}
	if err := namedOnce(fields); err != nil {
		return Outcome{}, err
	}
	idExterno, err := reissueIDExterno(fields)
	if err != nil {
		return Outcome{}, err
	}
	return p.derive(ctx, pr, clave, derivedReissue, fields, func(ctx context.Context, o *original) (*hacienda.SendDocumentRequest, *tenant.Claim, error) {
		return buildReissue(o, fields, idExterno)
	})
}

// namedOnce refuses a body naming one field more than once: the send's
// decoder matches names without regard to case, so "id_externo" and
// "ID_EXTERNO" name one field, and which of them won would be up to a
// map's order. Each such name is a 400 of its own. With every name given
// once, lookupFold finds at most one.
func namedOnce(fields map[string]json.RawMessage) error {
	byFold := map[string][]string{}
	for k := range fields {
		// Upper then lower: ſ and K (Kelvin) fold as EqualFold folds them.
		f := strings.ToLower(strings.ToUpper(k))
		byFold[f] = append(byFold[f], k)
	}
	var e *fieldError
	for _, names := range byFold {
		if len(names) < 2 {
			continue
		}
		if e == nil {
			e = &fieldError{fields: map[string][]msg.Message{}}
		}
		for _, k := range names {
			e.fields[k] = append(e.fields[k], msg.NamedTwice.With())
		}
	}
	if e != nil {
		return e
	}
	return nil
}

// reissueIDExterno is a re-issue body's id_externo: a JSON string, as the
// send's (and the void's and the payment's) is. Anything else is refused
// here, before it is looked up: a number read as the string it spells
// could name another document.
func reissueIDExterno(fields map[string]json.RawMessage) (string, error) {
	raw, ok := lookupFold(fields, "id_externo")
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalidField("id_externo", msg.WrongJSONType.With(msg.JSONWantString.With(), jsonKind(raw)))
	}
	return strings.TrimSpace(s), nil
}

// jsonKind names the JSON type of a value that is not a string.
func jsonKind(raw json.RawMessage) msg.Message {
	switch b := strings.TrimSpace(string(raw)); {
	case b == "true" || b == "false":
		return msg.JSONGotBoolean.With()
	case strings.HasPrefix(b, "{"):
		return msg.JSONGotObject.With()
	case strings.HasPrefix(b, "["):
		return msg.JSONGotArray.With()
	}
	return msg.JSONGotNumber.With()
}

// Pay issues a payment receipt (REP, 10) for the credit sale clave.
func (p *Pipeline) Pay(ctx context.Context, pr tenant.Principal, clave string, req *PaymentRequest) (Outcome, error) {
	if req == nil {
		return Outcome{}, invalidField("body", msg.RequestRequired.With())
	}
	return p.derive(ctx, pr, clave, derivedPayment, req, func(ctx context.Context, o *original) (*hacienda.SendDocumentRequest, *tenant.Claim, error) {
		return p.buildPayment(ctx, o, req)
	})
}

// original is the referenced document: as stored, its request, and its
// signed XML read back (the amounts and the exchange rate it was issued
// with).
type original struct {
	d   tenant.Document
	req *hacienda.SendDocumentRequest
	xml *hacienda.Document
}

// deriveBuild builds a derived document's send request (without
// id_externo handling) and its claim on the original.
type deriveBuild func(ctx context.Context, o *original) (*hacienda.SendDocumentRequest, *tenant.Claim, error)

// derive runs a derived document's call: the caller's body, hashed with
// the route and the clave, is its idempotency; a repeat replays (or
// resumes, from the stored request) without building anything again.
func (p *Pipeline) derive(ctx context.Context, pr tenant.Principal, clave, route string, body any, build deriveBuild) (Outcome, error) {
	if err := p.admitIssuer(pr, route); err != nil {
		return Outcome{}, err
	}
	od, err := p.Document(ctx, pr, clave)
	if err != nil {
		return Outcome{}, err
	}
	canonBody, err := json.Marshal(body)
	if err != nil {
		return Outcome{}, fmt.Errorf("encode the request: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", route, od.Clave)
	h.Write(canonBody)
	hash := h.Sum(nil)

	idExterno := derivedIDExterno(body)
	if idExterno == "" {
		return Outcome{}, invalidField("id_externo", msg.IDExternoRequired.With())
	}

	return p.inLane(ctx, pr, func(ctx context.Context) (Outcome, error) {
		j, err := p.deriveJob(ctx, pr, od, idExterno, hash, build)
		if err != nil {
			return Outcome{}, err
		}
		return j.run(ctx)
	})
}

// deriveJob is the send job of a derived call, in its lane: a repeat of
// idExterno replays, refuses a different body or resumes the document from
// its stored request; a first call builds the request and its claim from
// the original od.
func (p *Pipeline) deriveJob(ctx context.Context, pr tenant.Principal, od tenant.Document, idExterno string, hash []byte, build deriveBuild) (*job, error) {
	j := &job{p: p, pr: pr, hash: hash, send: true}
	prev, err := p.o.Store.DocumentByExternalID(ctx, pr.BranchID, idExterno)
	switch {
	case err == nil:
		req, derr := hacienda.DecodeStoredSendRequest(prev.Request)
		if derr != nil {
			req = &hacienda.SendDocumentRequest{IDExterno: idExterno}
		}
		j.req, j.canon = req, prev.Request
	case errors.Is(err, tenant.ErrNotFound):
		if od.CompanyID != pr.CompanyID {
			return nil, fmt.Errorf("document %s: %w", od.Clave, tenant.ErrNotFound)
		}
		o, err := p.readOriginal(od)
		if err != nil {
			return nil, err
		}
		req, claim, err := build(ctx, o)
		if err != nil {
			return nil, err
		}
		req.IDExterno = idExterno
		canon, _, err := canonicalRequest(req)
		if err != nil {
			return nil, err
		}
		j.req, j.canon, j.claim = req, canon, claim
	default:
		return nil, fmt.Errorf("look up id_externo: %w", err)
	}
	return j, nil
}

// derivedIDExterno is the id_externo of a derived call's body.
func derivedIDExterno(body any) string {
	switch b := body.(type) {
	case *VoidRequest:
		return strings.TrimSpace(b.IDExterno)
	case *PaymentRequest:
		return strings.TrimSpace(b.IDExterno)
	case map[string]json.RawMessage:
		id, _ := reissueIDExterno(b)
		return id
	}
	return ""
}

// readOriginal reads the stored request and signed XML of the referenced
// document.
func (p *Pipeline) readOriginal(d tenant.Document) (*original, error) {
	o := &original{d: d}
	if len(d.Request) == 0 || len(d.SignedXML) == 0 {
		return nil, invalidField("clave", msg.NotRebuildable.With())
	}
	req, err := hacienda.DecodeStoredSendRequest(d.Request)
	if err != nil {
		return nil, fmt.Errorf("document %s: read its request: %w", d.Clave, err)
	}
	x, err := hacienda.ParseXML(d.SignedXML)
	if err != nil {
		return nil, fmt.Errorf("document %s: read its signed XML: %w", d.Clave, err)
	}
	o.req, o.xml = req, x
	return o, nil
}

// claims reads the live claims on the original.
func (p *Pipeline) claims(ctx context.Context, id int64) (tenant.Claims, error) {
	cs, ok := p.o.Store.(tenant.ClaimStore)
	if !ok {
		return tenant.Claims{}, errors.New("the store keeps no claims")
	}
	m, err := cs.DocumentClaims(ctx, []int64{id})
	if err != nil {
		return tenant.Claims{}, err
	}
	return m[id], nil
}

// voidTipoDocIR is the TipoDocIR a credit note names each type it can void
// with: FE, ND and TE (the types whose reference code names them, nota 10).
var voidTipoDocIR = map[string]string{"01": "01", "02": "02", "04": "04"}

// payable reports whether a document of type tipo can be paid by a
// payment receipt of this service, and so open a balance: FE, ND and TE
// (the types Pay accepts).
func payable(tipo string) bool {
	_, ok := voidTipoDocIR[tipo]
	return ok
}

// credited sums the quantities the live credit notes credit per line.
func credited(live []tenant.Claim) (map[int]decimal.Decimal, int) {
	out := map[int]decimal.Decimal{}
	n := 0
	for _, c := range live {
		if c.Kind != tenant.ClaimCredit {
			continue
		}
		n++
		for line, q := range c.Lines {
			v, err := decimal.NewFromString(q)
			if err != nil {
				continue
			}
			out[line] = out[line].Add(v)
		}
	}
	return out, n
}

// creditLine is one line a credit note credits: the original's line number,
// its index in the original's request, and the quantity.
type creditLine struct {
	numero, index int
	cantidad      decimal.Decimal
	path          string // the caller's field, or "clave" for an implied line
}

func (p *Pipeline) buildVoid(ctx context.Context, o *original, v *VoidRequest) (*hacienda.SendDocumentRequest, *tenant.Claim, error) {
	tipoIR, ok := voidTipoDocIR[o.d.Tipo]
	switch {
	case !ok:
		return nil, nil, invalidField("clave", msg.VoidType.With(o.d.Tipo))
	case o.d.Estado != tenant.StateAccepted:
		return nil, nil, invalidField("clave", msg.VoidState.With(string(o.d.Estado)))
	}
	razon := strings.TrimSpace(v.Razon)
	if n := len([]rune(razon)); n < 3 || n > 180 {
		return nil, nil, invalidField("razon", msg.RazonRequired.With())
	}
	lines := numberedLines(o.req.DetalleServicio)
	claims, err := p.claims(ctx, o.d.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("read the credits of %s: %w", o.d.Clave, err)
	}
	done, previous := credited(claims.On)

	chosen, err := chooseLines(lines, done, v.Lineas)
	if err != nil {
		return nil, nil, err
	}
	code, full := creditCode(lines, chosen, previous)

	nc := *o.req
	nc.TipoDocumento = hacienda.FlexString(hacienda.TypeNC)
	nc.Clave, nc.FechaEmision, nc.Situacion = "", "", ""
	nc.DetalleServicio = make([]hacienda.LineaDetalle, 0, len(chosen))
	for k, c := range chosen {
		l := scaleLine(lines[c.index], c.cantidad)
		l.NumeroLinea = k + 1
		nc.DetalleServicio = append(nc.DetalleServicio, l)
	}
	if !full {
		// Other charges are not split by line: a partial credit credits
		// lines only.
		nc.OtrosCargos = nil
	}
	nc.ResumenFactura = hacienda.ResumenFactura{CodigoTipoMoneda: o.xml.ResumenFactura.CodigoTipoMoneda}
	if mp := o.xml.ResumenFactura.MedioPago; len(mp) > 0 {
		nc.ResumenFactura.MedioPago = []hacienda.MedioPago{{TipoMedioPago: mp[0].TipoMedioPago, MedioPagoOtros: mp[0].MedioPagoOtros}}
	}
	nc.InformacionReferencia = []hacienda.InformacionReferencia{{
		TipoDocIR: tipoIR, Numero: o.d.Clave, FechaEmisionIR: o.d.FechaEmision, Codigo: code, Razon: razon,
	}}

	want := map[int]string{}
	for _, c := range chosen {
		want[c.numero] = c.cantidad.String()
	}
	claim := &tenant.Claim{Kind: tenant.ClaimCredit, RefID: o.d.ID, Lines: want,
		Check: func(live []tenant.Claim) error {
			done, previous := credited(live)
			if full && previous > 0 {
				return invalidField("clave", msg.CreditedMeanwhile.With())
			}
			for _, c := range chosen {
				if c.cantidad.GreaterThan(lines[c.index].Cantidad.Decimal().Sub(done[c.numero])) {
					return invalidField(c.path, msg.LineOverCredit.With(c.numero))
				}
			}
			return nil
		}}
	return &nc, claim, nil
}

// numberedLines are the original's request lines with the numbers its
// document carries: a send may leave numeroLinea out (0), and the
// validation numbers line i as i+1 (any other number it refuses). The
// void names lines, and its claim counts them, by these numbers.
func numberedLines(in []hacienda.LineaDetalle) []hacienda.LineaDetalle {
	out := make([]hacienda.LineaDetalle, len(in))
	copy(out, in)
	for i := range out {
		if out[i].NumeroLinea == 0 {
			out[i].NumeroLinea = i + 1
		}
	}
	return out
}

// chooseLines picks the lines a credit note credits from the original's
// lines, given what the live credit notes credited of each (done): every
// line with what remains of it when asked names none, else the lines
// asked for, each at most what remains of it.
func chooseLines(lines []hacienda.LineaDetalle, done map[int]decimal.Decimal, asked []VoidLine) ([]creditLine, error) {
	byNumero := map[int]int{}
	for i, l := range lines {
		byNumero[l.NumeroLinea] = i
	}
	var chosen []creditLine
	if len(asked) == 0 {
		for i, l := range lines {
			left := l.Cantidad.Decimal().Sub(done[l.NumeroLinea])
			if left.Sign() > 0 {
				chosen = append(chosen, creditLine{numero: l.NumeroLinea, index: i, cantidad: left, path: "clave"})
			}
		}
		if len(chosen) == 0 {
			return nil, invalidField("clave", msg.FullyCredited.With())
		}
		return chosen, nil
	}
	seen := map[int]bool{}
	for i, l := range asked {
		path := fmt.Sprintf("lineas[%d]", i)
		n := l.NumeroLinea
		idx, ok := byNumero[n]
		if !ok {
			return nil, invalidField(path+".numeroLinea", msg.LineUnknown.With(n))
		}
		if seen[n] {
			return nil, invalidField(path+".numeroLinea", msg.LineTwice.With(n))
		}
		seen[n] = true
		q, err := decimal.NewFromString(l.Cantidad.String())
		if err != nil || q.Sign() <= 0 || q.Exponent() < -3 {
			return nil, invalidField(path+".cantidad", msg.CreditQuantity.With())
		}
		left := lines[idx].Cantidad.Decimal().Sub(done[n])
		if q.GreaterThan(left) {
			return nil, invalidField(path+".cantidad", msg.LineOverCreditQty.With(n, left.String()))
		}
		chosen = append(chosen, creditLine{numero: n, index: idx, cantidad: q, path: path + ".cantidad"})
	}
	return chosen, nil
}

// creditCode is the credit note's reference code (nota 9) for the chosen
// lines of the original's lines, previous being how many live credit
// notes came before: 01 (anula, full) when it credits every line whole
// and none came before; else 06 (devolución de mercancía) when every line
// credited is goods (a CAByS starting 0–4), else 02 (corrige monto).
func creditCode(lines []hacienda.LineaDetalle, chosen []creditLine, previous int) (code string, full bool) {
	full = previous == 0 && len(chosen) == len(lines)
	goods := true
	for _, c := range chosen {
		if !c.cantidad.Equal(lines[c.index].Cantidad.Decimal()) {
			full = false
		}
		if cabys := lines[c.index].CodigoCABYS; cabys == "" || cabys[0] > '4' {
			goods = false
		}
	}
	switch {
	case full:
		return "01", true
	case goods:
		return "06", false
	}
	return "02", false
}

// scaleLine is a line of the original at quantity q: its discounts given
// as amounts are scaled pro rata (MontoDescuento × q / Cantidad, to 5
// decimals, half away from zero); those given as a percentage stay one.
// The calculation computes every other amount again.
func scaleLine(l hacienda.LineaDetalle, q decimal.Decimal) hacienda.LineaDetalle {
	orig := l.Cantidad.Decimal()
	l.Cantidad = hacienda.NewAmount(q)
	if len(l.Descuento) > 0 {
		ds := make([]hacienda.Descuento, len(l.Descuento))
		copy(ds, l.Descuento)
		for i := range ds {
			if ds[i].PorcentajeDescuento.IsSet() || !ds[i].MontoDescuento.IsSet() || orig.Sign() == 0 {
				continue
			}
			ds[i].MontoDescuento = hacienda.NewAmount(ds[i].MontoDescuento.Decimal().Mul(q).DivRound(orig, 10).Round(hacienda.MoneyPlaces))
		}
		l.Descuento = ds
	}
	return l
}

// buildReissue merges the caller's fields over the rejected document's
// request (a shallow merge by field name, without regard to case) and
// references the rejected document (TipoDocIR 10, Codigo 04).
//
// A credit note or payment receipt (03, 10) is not re-issued: the re-issue
// would carry no claim on the document it credits or pays (its lines may
// be replaced whole), so that document could then be credited or paid
// twice; the void or the payment is issued again by its own route, which
// claims what it takes (decision 102).
func buildReissue(o *original, fields map[string]json.RawMessage, idExterno string) (*hacienda.SendDocumentRequest, *tenant.Claim, error) {
	if o.d.Estado != tenant.StateRejected {
		return nil, nil, invalidField("clave", msg.ReissueState.With(string(o.d.Estado)))
	}
	switch hacienda.DocumentType(o.d.Tipo) {
	case hacienda.TypeNC:
		return nil, nil, invalidField("clave", msg.ReissueCreditNote.With())
	case hacienda.TypeREP:
		return nil, nil, invalidField("clave", msg.ReissuePayment.With())
	}
	var base map[string]json.RawMessage
	if err := json.Unmarshal(o.d.Request, &base); err != nil {
		return nil, nil, fmt.Errorf("document %s: read its request: %w", o.d.Clave, err)
	}
	for k, v := range fields {
		if strings.EqualFold(k, "clave") {
			return nil, nil, invalidField("clave", msg.ReissueClave.With())
		}
		for bk := range base {
			if strings.EqualFold(bk, k) {
				delete(base, bk)
			}
		}
		base[k] = v
	}
	delete(base, "clave")
	if _, given := lookupFold(fields, "fecha_emision"); !given {
		delete(base, "fecha_emision")
	}
	merged, err := json.Marshal(base)
	if err != nil {
		return nil, nil, fmt.Errorf("merge the request: %w", err)
	}
	// The stored request is read as it was accepted; the caller's fields
	// as a send's are (their names: the gateway, hacienda.CheckNames).
	req, err := hacienda.DecodeStoredSendRequest(merged)
	if err != nil {
		return nil, nil, err
	}
	if _, given := lookupFold(fields, "detalleServicio"); given {
		if err := hacienda.CheckGivenAmounts(hacienda.DocumentType(req.TipoDocumento.Code()), req.DetalleServicio); err != nil {
			return nil, nil, err
		}
	}
	req.Clave, req.IDExterno = "", idExterno
	req.InformacionReferencia = append(req.InformacionReferencia, hacienda.InformacionReferencia{
		TipoDocIR: "10", Numero: o.d.Clave, FechaEmisionIR: o.d.FechaEmision, Codigo: "04",
		Razon: "Sustituye el comprobante rechazado " + o.d.Consecutivo,
	})
	return req, nil, nil
}

// lookupFold is the value of m's name that matches key without regard to
// case: the one name, as Reissue refuses a body that gives one twice
// (namedOnce).
func lookupFold(m map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

// repCondicion is the REP's CondicionVenta for the original's (nota 5).
var repCondicion = map[string]string{"08": "09", "10": "11"}

// Balance is what remains to be paid of a document that allows a payment
// receipt: its TotalComprobante less the live credit notes' and payment
// receipts' amounts, never below 0. ok is false for a document that opens
// no balance.
func Balance(c tenant.Claims) (saldo decimal.Decimal, ok bool) {
	if c.Balance == nil {
		return decimal.Zero, false
	}
	total, err := decimal.NewFromString(c.Balance.Amount)
	if err != nil {
		return decimal.Zero, false
	}
	for _, x := range c.On {
		if x.Kind != tenant.ClaimCredit && x.Kind != tenant.ClaimPayment {
			continue
		}
		if a, err := decimal.NewFromString(x.Amount); err == nil {
			total = total.Sub(a)
		}
	}
	if total.Sign() < 0 {
		total = decimal.Zero
	}
	return total, true
}

// FormatBalance writes a balance as the API shows it: 5 decimals.
func FormatBalance(d decimal.Decimal) string { return d.StringFixed(hacienda.MoneyPlaces) }

// taxGroup is one (codigo, codigoTarifaIVA) group of the original's taxes.
type taxGroup struct {
	key             string
	codigo, tarifa  string
	rate            decimal.Decimal // percent
	total           decimal.Decimal // the original's tax of the group
	codigoImpuestoO string
}

func (p *Pipeline) buildPayment(ctx context.Context, o *original, r *PaymentRequest) (*hacienda.SendDocumentRequest, *tenant.Claim, error) {
	cond, ok := repCondicion[o.xml.CondicionVenta]
	if !ok {
		return nil, nil, invalidField("condicion_venta", msg.PaymentCondicion.With(o.xml.CondicionVenta))
	}
	tipoIR, ok := voidTipoDocIR[o.d.Tipo]
	switch {
	case !ok:
		return nil, nil, invalidField("clave", msg.PaymentType.With(o.d.Tipo))
	case o.d.Estado != tenant.StateAccepted:
		return nil, nil, invalidField("clave", msg.PaymentState.With(string(o.d.Estado)))
	}
	monto, err := decimal.NewFromString(r.Monto.String())
	if err != nil || monto.Sign() <= 0 || monto.Exponent() < -hacienda.MoneyPlaces {
		return nil, nil, invalidField("monto", msg.PaymentAmount.With())
	}
	medio := r.MedioPago.Code()
	if medio < "01" || medio > "07" || len(medio) != 2 {
		return nil, nil, invalidField("medioPago", msg.PaymentMedio.With())
	}
	now := p.o.Clock().In(hacienda.CostaRica)
	fecha := now
	if s := strings.TrimSpace(r.Fecha); s != "" {
		t, err := hacienda.ParseDateTime(s)
		if err != nil {
			return nil, nil, invalidField("fecha", msg.DateTime.With())
		}
		if t.After(now) {
			return nil, nil, invalidField("fecha", msg.PaymentFuture.With())
		}
		fecha = t.In(hacienda.CostaRica)
	}
	total := o.xml.ResumenFactura.TotalComprobante.Decimal()
	if total.Sign() <= 0 {
		return nil, nil, invalidField("clave", msg.PaymentNothing.With())
	}

	groups, err := taxGroups(o.xml)
	if err != nil {
		return nil, nil, err
	}

	claims, err := p.claims(ctx, o.d.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("read the payments of %s: %w", o.d.Clave, err)
	}
	saldo, _ := Balance(tenant.Claims{Balance: &tenant.Claim{Amount: total.String()}, On: claims.On})
	if monto.GreaterThan(saldo) {
		return nil, nil, invalidField("monto", msg.PaymentOverBalance.With(FormatBalance(saldo)))
	}
	last := settlesExactly(claims.On, monto, saldo)
	paid := map[string]decimal.Decimal{}
	npaid := 0
	for _, c := range claims.On {
		if c.Kind != tenant.ClaimPayment {
			continue
		}
		npaid++
		for k, v := range c.Taxes {
			if d, err := decimal.NewFromString(v); err == nil {
				paid[k] = paid[k].Add(d)
			}
		}
	}

	detalle := fmt.Sprintf("Pago %d del comprobante %s, recibido el %s", npaid+1, o.d.Consecutivo, fecha.Format("2006-01-02"))
	lines, taxes := splitPayment(groups, total, monto, paid, last, detalle)

	rep := &hacienda.SendDocumentRequest{
		TipoDocumento:  hacienda.FlexString(hacienda.TypeREP),
		Terminal:       o.req.Terminal,
		CondicionVenta: hacienda.FlexString(cond),
		Receptor:       o.req.Receptor,
	}
	rep.DetalleServicio = lines
	rep.ResumenFactura = hacienda.ResumenFactura{CodigoTipoMoneda: o.xml.ResumenFactura.CodigoTipoMoneda,
		MedioPago: []hacienda.MedioPago{{TipoMedioPago: medio}}}
	rep.InformacionReferencia = []hacienda.InformacionReferencia{{
		TipoDocIR: tipoIR, Numero: o.d.Clave, FechaEmisionIR: o.d.FechaEmision, Codigo: "04",
		Razon: "Pago de venta a crédito",
	}}
	claim := &tenant.Claim{Kind: tenant.ClaimPayment, RefID: o.d.ID, Amount: monto.String(), Taxes: taxes,
		Check: func(live []tenant.Claim) error {
			now, _ := Balance(tenant.Claims{Balance: &tenant.Claim{Amount: total.String()}, On: live})
			if monto.GreaterThan(now) {
				return invalidField("monto", msg.PaymentOverBalance.With(FormatBalance(now)))
			}
			if last && !monto.Equal(now) {
				return invalidField("monto", msg.BalanceChanged.With())
			}
			return nil
		}}
	return rep, claim, nil
}

// taxGroups are the original's tax groups (its TotalDesgloseImpuesto),
// with their rates read from its lines. A tax of code 08 (a factor, not a
// rate) cannot be split by this call.
func taxGroups(x *hacienda.Document) ([]*taxGroup, error) {
	var groups []*taxGroup
	byKey := map[string]*taxGroup{}
	for _, g := range x.ResumenFactura.TotalDesgloseImpuesto {
		key := g.Codigo + "/" + g.CodigoTarifaIVA
		tg := &taxGroup{key: key, codigo: g.Codigo, tarifa: g.CodigoTarifaIVA, total: g.TotalMontoImpuesto.Decimal()}
		byKey[key] = tg
		groups = append(groups, tg)
	}
	for _, l := range x.DetalleServicio {
		for _, t := range l.Impuesto {
			if t.Codigo == "08" {
				return nil, invalidField("clave", msg.PaymentBienesUsados.With())
			}
			if tg := byKey[t.Codigo+"/"+t.CodigoTarifaIVA]; tg != nil && t.Tarifa.IsSet() {
				tg.rate = t.Tarifa.Decimal()
				tg.codigoImpuestoO = t.CodigoImpuestoOTRO
			}
		}
	}
	return groups, nil
}

// settlesExactly reports whether a payment of monto, with the balance at
// saldo and live the live claims on the document, takes each tax group's
// exact remainder: when it settles the balance and no credit note is on
// the document. A credit note credited part of the document's taxes,
// which its claim does not split by group, so the remainders of the
// original's groups are not what is owed; the payment is then split pro
// rata like any other.
func settlesExactly(live []tenant.Claim, monto, saldo decimal.Decimal) bool {
	if !monto.Equal(saldo) {
		return false
	}
	for _, c := range live {
		if c.Kind == tenant.ClaimCredit {
			return false
		}
	}
	return true
}

// splitPayment builds a payment receipt's lines for monto paid of a
// document of TotalComprobante total whose tax groups are groups, paid
// being the tax the earlier live receipts took of each group (by key):
// one line per taxed group, its tax monto × group tax / total (5
// decimals, half away from zero), or with last (the payment that settles
// the balance) what remains of the group's tax; its base the tax × 100 /
// rate (5 decimals), which the calculation turns back into the same tax.
// One more untaxed line carries the rest of monto (exempt sales, other
// charges, the bases' rounding), so the lines' amounts add up to monto; a
// rest below 0 is taken off the last line's MontoTotal. taxes is each
// group's tax by key, for the claim.
func splitPayment(groups []*taxGroup, total, monto decimal.Decimal, paid map[string]decimal.Decimal, last bool, detalle string) ([]hacienda.LineaDetalle, map[string]string) {
	taxes := map[string]string{}
	var lines []hacienda.LineaDetalle
	rest := monto
	for _, g := range groups {
		if g.total.Sign() == 0 || g.rate.Sign() == 0 {
			continue
		}
		t := monto.Mul(g.total).DivRound(total, 10).Round(hacienda.MoneyPlaces)
		if last {
			t = g.total.Sub(paid[g.key])
		}
		if t.Sign() <= 0 {
			continue
		}
		base := t.Mul(decimal.New(100, 0)).DivRound(g.rate, hacienda.MoneyPlaces)
		if base.Sign() <= 0 {
			continue
		}
		taxes[g.key] = t.String()
		imp := hacienda.Impuesto{Codigo: g.codigo, CodigoTarifaIVA: g.tarifa, CodigoImpuestoOTRO: g.codigoImpuestoO}
		if g.codigo != hacienda.ImpuestoIVA && g.codigo != hacienda.ImpuestoIVAEspecial {
			imp.Tarifa = hacienda.NewAmount(g.rate)
		}
		lines = append(lines, hacienda.LineaDetalle{Detalle: detalle, MontoTotal: hacienda.NewAmount(base),
			SubTotal: hacienda.NewAmount(base), Impuesto: []hacienda.Impuesto{imp}})
		rest = rest.Sub(base).Sub(t)
	}
	switch {
	case rest.Sign() > 0:
		lines = append(lines, hacienda.LineaDetalle{Detalle: detalle, MontoTotal: hacienda.NewAmount(rest), SubTotal: hacienda.NewAmount(rest)})
	case rest.Sign() < 0 && len(lines) > 0:
		l := &lines[len(lines)-1]
		l.MontoTotal = hacienda.NewAmount(l.MontoTotal.Decimal().Add(rest))
	}
	for i := range lines {
		lines[i].NumeroLinea = i + 1
	}
	return lines, taxes
}

// mayOwe reports whether d can carry a balance, from its row: a payable
// type (FE, ND, TE) whose stored request sells on credit (CondicionVenta
// 08 or 10). A row without its request (a listing may leave it out) may.
func mayOwe(d tenant.Document) bool {
	if !payable(d.Tipo) {
		return false
	}
	if len(d.Request) == 0 {
		return true
	}
	var r struct {
		CondicionVenta hacienda.FlexString `json:"condicion_venta"`
	}
	if err := json.Unmarshal(d.Request, &r); err != nil {
		return true
	}
	_, ok := repCondicion[r.CondicionVenta.Code()]
	return ok
}

// withBalances sets SaldoPendiente on the documents that allow a payment
// receipt (of a type Pay accepts, with a balance opened), with one read of
// the claims. A failure to read them leaves the
// documents without it (and is logged): the reads still answer.
func (p *Pipeline) withBalances(ctx context.Context, docs []tenant.Document) {
	cs, ok := p.o.Store.(tenant.ClaimStore)
	if !ok || len(docs) == 0 {
		return
	}
	ids := make([]int64, 0, len(docs))
	for _, d := range docs {
		if mayOwe(d) {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	m, err := cs.DocumentClaims(ctx, ids)
	if err != nil {
		p.log.WarnContext(ctx, "read the balances of documents", "err", err)
		return
	}
	for i := range docs {
		if saldo, ok := Balance(m[docs[i].ID]); ok {
			docs[i].SaldoPendiente = FormatBalance(saldo)
		}
	}
}
