package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/shopspring/decimal"

	"facturad/hacienda"
)

// Check judges one aspect of a received document. It returns the
// DetalleMensaje lines of the problems it found; none means the document
// passes this check.
type Check interface {
	Check(ctx context.Context, signedXML []byte) []string
}

// CheckFunc adapts a function to Check.
type CheckFunc func(ctx context.Context, signedXML []byte) []string

// Check calls f.
func (f CheckFunc) Check(ctx context.Context, signedXML []byte) []string { return f(ctx, signedXML) }

// Checks are the judgements the sandbox delegates, each optional (nil: not
// checked). The sandbox always checks the clave's consistency with the
// document itself.
type Checks struct {
	// Schema checks the document's structure against the v4.4 schema.
	Schema Check
	// Signature verifies the XAdES signature.
	Signature Check
	// Totals recomputes the document's amounts and compares them with the
	// ones it carries.
	Totals Check
}

// rootType is what the sandbox knows of a root element, from hacienda's
// table of document types: the codes a consecutivo under it may carry (05,
// 06 and 07 share MensajeReceptor) and the type's attributes, which those
// three share.
type rootType struct {
	codes []string
	hacienda.TypeInfo
}

// rootTypes maps each root element the tax authority receives to its
// rootType.
var rootTypes = func() map[string]rootType {
	m := map[string]rootType{}
	for _, t := range hacienda.TypeTable() {
		r, seen := m[t.Root]
		if !seen {
			r.TypeInfo = t
		}
		r.codes = append(r.codes, string(t.Code))
		m[t.Root] = r
	}
	return m
}()

// docInfo is what the sandbox reads from a received XML document.
type docInfo struct {
	root           string
	typ            rootType // the zero rootType for an unknown root
	clave          string
	consecutivo    string // NumeroConsecutivo, or NumeroConsecutivoReceptor
	fechaEmision   string
	emisorNombre   string
	emisorTipo     string
	emisorNumero   string
	receptorNombre string
	receptorTipo   string
	receptorNumero string
	totalImpuesto  string
	totalFactura   string
	refs           []docRef  // InformacionReferencia
	lines          []docLine // DetalleServicio's lines
}

// docLine is what the registry checks read of a LineaDetalle.
type docLine struct {
	numero string // NumeroLinea
	cabys  string // CodigoCABYS
	exons  []docExon
}

// docExon is one of a line's Exoneracion elements.
type docExon struct{ tipo, numero, tarifa string }

// readCheck is a Check that can take the document as the sandbox read it
// at reception, instead of reading it again.
type readCheck interface {
	checkRead(ctx context.Context, xml []byte, in docInfo) []string
}

// notWellFormed is the finding, and the refusal, for a document the
// sandbox cannot read.
const notWellFormed = "El comprobanteXml no es un documento XML bien formado."

// checkReading is a readCheck's Check: it reads the document first.
func checkReading(ctx context.Context, xml []byte, rc readCheck) []string {
	in, err := readDoc(xml)
	if err != nil {
		return []string{notWellFormed}
	}
	return rc.checkRead(ctx, xml, in)
}

// runCheck runs c on a document the sandbox has read: as read when c can
// take it, nothing for a nil c.
func runCheck(ctx context.Context, c Check, xml []byte, in docInfo) []string {
	switch c := c.(type) {
	case nil:
		return nil
	case readCheck:
		return c.checkRead(ctx, xml, in)
	default:
		return c.Check(ctx, xml)
	}
}

// claveIssuer is the identification the document's clave must carry: the
// Emisor's, but in a purchase invoice (08) the Receptor's, the buyer that
// issues it (spec §15.3). A receptor message's clave is the received
// document's, whose issuer is NumeroCedulaEmisor.
func (in docInfo) claveIssuer() string {
	if in.typ.IssuedByBuyer {
		return in.receptorNumero
	}
	return in.emisorNumero
}

// signerID is the identification of the taxpayer that must sign the
// document: the clave's issuer, except in a receptor message, which the
// receptor signs.
func (in docInfo) signerID() string {
	if in.typ.IsReceiverMessage() {
		return in.receptorNumero
	}
	return in.claveIssuer()
}

// docRef is one InformacionReferencia: its TipoDocIR and Numero.
type docRef struct{ tipo, numero string }

// readDoc reads the fields the sandbox needs, by local name in any
// namespace.
func readDoc(data []byte) (docInfo, error) {
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(data); err != nil {
		return docInfo{}, err
	}
	root := doc.Root()
	if root == nil {
		return docInfo{}, fmt.Errorf("no root element")
	}
	text := func(path ...string) string {
		el := root
		for _, p := range path {
			el = child(el, p)
			if el == nil {
				return ""
			}
		}
		return strings.TrimSpace(el.Text())
	}
	in := docInfo{root: root.Tag, typ: rootTypes[root.Tag], clave: text("Clave")}
	if in.typ.IsReceiverMessage() {
		in.consecutivo = text("NumeroConsecutivoReceptor")
		in.fechaEmision = text("FechaEmisionDoc")
		in.emisorNumero = text("NumeroCedulaEmisor")
		in.receptorNumero = text("NumeroCedulaReceptor")
		in.totalImpuesto = text("MontoTotalImpuesto")
		in.totalFactura = text("TotalFactura")
		return in, nil
	}
	in.consecutivo = text("NumeroConsecutivo")
	in.fechaEmision = text("FechaEmision")
	in.emisorNombre = text("Emisor", "Nombre")
	in.emisorTipo = text("Emisor", "Identificacion", "Tipo")
	in.emisorNumero = text("Emisor", "Identificacion", "Numero")
	in.receptorNombre = text("Receptor", "Nombre")
	in.receptorTipo = text("Receptor", "Identificacion", "Tipo")
	in.receptorNumero = text("Receptor", "Identificacion", "Numero")
	in.totalImpuesto = text("ResumenFactura", "TotalImpuesto")
	in.totalFactura = text("ResumenFactura", "TotalComprobante")
	if ds := child(root, "DetalleServicio"); ds != nil {
		for _, le := range ds.ChildElements() {
			if le.Tag != "LineaDetalle" {
				continue
			}
			l := docLine{numero: childText(le, "NumeroLinea"), cabys: childText(le, "CodigoCABYS")}
			for _, imp := range le.ChildElements() {
				if x := child(imp, "Exoneracion"); imp.Tag == "Impuesto" && x != nil {
					l.exons = append(l.exons, docExon{tipo: childText(x, "TipoDocumentoEX1"), numero: childText(x, "NumeroDocumento"),
						tarifa: childText(x, "TarifaExonerada")})
				}
			}
			in.lines = append(in.lines, l)
		}
	}
	for _, el := range root.ChildElements() {
		if el.Tag == "InformacionReferencia" {
			r := docRef{}
			if c := child(el, "TipoDocIR"); c != nil {
				r.tipo = strings.TrimSpace(c.Text())
			}
			if c := child(el, "Numero"); c != nil {
				r.numero = strings.TrimSpace(c.Text())
			}
			in.refs = append(in.refs, r)
		}
	}
	return in, nil
}

// childText is the trimmed text of el's child tag, "" when it has none.
func childText(el *etree.Element, tag string) string {
	if c := child(el, tag); c != nil {
		return strings.TrimSpace(c.Text())
	}
	return ""
}

func child(el *etree.Element, tag string) *etree.Element {
	for _, c := range el.ChildElements() {
		if c.Tag == tag {
			return c
		}
	}
	return nil
}

// consistency checks the clave against the document that carries it, as the
// tax authority does: country, date, issuer, consecutivo, situación, and
// the document type against the root element.
func consistency(in docInfo) []string {
	var out []string
	c := in.clave
	if len(c) != 50 {
		return []string{fmt.Sprintf("La clave %q no tiene 50 dígitos.", c)}
	}
	if c[:3] != "506" {
		out = append(out, "El código de país de la clave no es 506.")
	}
	types := in.typ.codes
	known := len(types) > 0
	if !known {
		out = append(out, fmt.Sprintf("El tipo de documento no corresponde (elemento raíz %s).", in.root))
	}
	if !in.typ.IsReceiverMessage() {
		if len(in.consecutivo) != 20 {
			out = append(out, "El NumeroConsecutivo no tiene 20 dígitos.")
		} else {
			if c[21:41] != in.consecutivo {
				out = append(out, "El NumeroConsecutivo no coincide con el de la clave.")
			}
			if known && !slices.Contains(types, in.consecutivo[8:10]) {
				out = append(out, "El tipo de documento no corresponde.")
			}
		}
		if f, err := time.Parse(time.RFC3339, in.fechaEmision); err != nil {
			out = append(out, fmt.Sprintf("La FechaEmision %q no es válida.", in.fechaEmision))
		} else if f.In(hacienda.CostaRica).Format("020106") != c[3:9] {
			out = append(out, "La fecha de la clave no coincide con la FechaEmision del comprobante.")
		}
	} else if len(in.consecutivo) != 20 || !slices.Contains(types, in.consecutivo[8:10]) {
		out = append(out, "El NumeroConsecutivoReceptor no corresponde a un mensaje receptor.")
	}
	if !hacienda.SameNumber(c[9:21], in.claveIssuer()) {
		out = append(out, "La identificación del emisor no coincide con la de la clave.")
	}
	if s := c[41]; s < '1' || s > '3' {
		out = append(out, "La situación del comprobante en la clave no es válida.")
	}
	return out
}

// timely checks a document's FechaEmision against its reception (spec §4
// FechaEmision, §10.16, §17 item 12). A receptor message's date is its own
// confirmation's, checked the same way.
func (s *Sandbox) timely(d *document) []string {
	f, err := time.Parse(time.RFC3339, d.info.fechaEmision)
	if err != nil {
		return nil // consistency reports it
	}
	situacion := hacienda.SituacionNormal
	if len(d.Clave) == 50 {
		situacion = d.Clave[41:42]
	}
	// The tax authority's window: no bound for situación 3.
	w := hacienda.EmissionWindow{Ahead: s.opts.FechaAhead, Behind: s.opts.FechaBehind, Offline: -1}
	switch off := w.Outside(f, situacion, d.ReceivedAt); {
	case off > 0:
		return []string{fmt.Sprintf(`-11, "La FechaEmision del comprobante (%s) es posterior a la fecha de recepción (%s).", 0, 0`,
			d.info.fechaEmision, d.ReceivedAt.In(hacienda.CostaRica).Format(time.RFC3339))}
	case off < 0:
		return []string{fmt.Sprintf(`-16, "El archivo XML fue enviado de manera extemporánea: la FechaEmision (%s) es anterior a la recepción (%s) y la situación del comprobante no es 3 (sin internet).", 0, 0`,
			d.info.fechaEmision, d.ReceivedAt.In(hacienda.CostaRica).Format(time.RFC3339))}
	}
	return nil
}

// referencedTypes are the TipoDocIR codes that name an electronic
// document by its type (FE, ND, NC, TE), whose Numero is a clave the tax
// authority knows.
var referencedTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range hacienda.TypeTable() {
		if t.TipoDocIR != "" {
			m[t.TipoDocIR] = true
		}
	}
	return m
}()

// references checks a note's or a payment receipt's references to
// electronic documents, as the tax authority cross-checks them: each must
// be a document it received (a receipt pays a credit sale it knows), and
// a credit note may not credit more than what is left of the referenced
// document's total after the credit notes accepted before. It returns the
// findings and, for a credit note, the amounts to record once it is
// accepted. The caller holds refMu and has checked that d is a note or a
// receipt.
func (s *Sandbox) references(d *document) (lines []string, credits map[*document]decimal.Decimal) {
	for _, r := range d.info.refs {
		if !referencedTypes[r.tipo] || !digits(r.numero, 50) {
			continue
		}
		ref := s.lookup(r.numero)
		if ref == nil {
			lines = append(lines, fmt.Sprintf("La referencia %s (TipoDocIR %s) no corresponde a un comprobante recibido.", r.numero, r.tipo))
			continue
		}
		if d.info.typ.Code != hacienda.TypeNC {
			continue
		}
		t, refT := amount(d.info.totalFactura), amount(ref.info.totalFactura)
		if !t.IsSet() || !refT.IsSet() {
			continue // the schema and totals checks report unreadable amounts
		}
		total, refTotal := t.Decimal(), refT.Decimal()
		left := refTotal.Sub(ref.credited)
		if total.GreaterThan(left) {
			lines = append(lines, fmt.Sprintf("El monto de la nota de crédito (%s) excede el saldo del comprobante de referencia %s (%s de %s).",
				total.String(), r.numero, left.String(), refTotal.String()))
			continue
		}
		if credits == nil {
			credits = map[*document]decimal.Decimal{}
		}
		credits[ref] = total
	}
	return lines, credits
}
