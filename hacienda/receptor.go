package hacienda

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/beevik/etree"

	"facturad/hacienda/msg"
)

// Values of MensajeReceptor's Mensaje element (nota 11, spec §10.17).
const (
	ReceptorAceptado  = 1 // the receiver accepts the document (type 05)
	ReceptorParcial   = 2 // the receiver accepts it in part (type 06)
	ReceptorRechazado = 3 // the receiver rejects it (type 07)
)

// CondicionesImpuesto are the codes of nota 18 (spec §10.17):
// 01 full IVA credit, 02 partial credit, 03 capital goods, 04 current
// expense without credit, 05 proportionality.
var CondicionesImpuesto = []string{"01", "02", "03", "04", "05"}

// MensajeReceptor is a receiver's message (spec §14.2): its acceptance,
// partial acceptance or rejection of a document a supplier issued to it.
// Clave is the supplier's document's; the message has its own
// NumeroConsecutivoReceptor (type 05, 06 or 07).
type MensajeReceptor struct {
	Clave                       string
	NumeroCedulaEmisor          string // the supplier (the document's Emisor)
	FechaEmisionDoc             time.Time
	Mensaje                     int // ReceptorAceptado, ReceptorParcial or ReceptorRechazado
	DetalleMensaje              string
	MontoTotalImpuesto          Amount // the document's TotalImpuesto; absent when it has none
	CodigoActividad             string
	CondicionImpuesto           string
	MontoTotalImpuestoAcreditar Amount
	MontoTotalDeGastoAplicable  Amount
	TotalFactura                Amount // the document's TotalComprobante
	NumeroCedulaReceptor        string // the receiver, which signs the message
	NumeroConsecutivoReceptor   string
}

// ReceptorAnswer is what a receiver decides about a supplier's document:
// the A.11 body without the document itself and id_externo. Amounts that
// are not set are absent.
type ReceptorAnswer struct {
	Mensaje                     string // "1", "2" or "3"
	DetalleMensaje              string
	CodigoActividad             string
	CondicionImpuesto           string
	MontoTotalImpuestoAcreditar Amount
	MontoTotalDeGastoAplicable  Amount
}

// The A.11 field names the receiver's answer is reported on.
const (
	FieldReceivedXML         = "xml"
	fieldMensaje             = "mensaje"
	fieldDetalleMensaje      = "detalleMensaje"
	fieldCodigoActividad     = "codigoActividad"
	fieldCondicionImpuesto   = "condicionImpuesto"
	fieldImpuestoAcreditar   = "montoTotalImpuestoAcreditar"
	fieldGastoAplicable      = "montoTotalDeGastoAplicable"
	detalleMensajeMinRunes   = 5
	detalleMensajeMaxRunes   = 160
	codigoActividadMaxLength = 6
)

// CheckAnswerable reports why a receiver may not answer a document of
// type t with a MensajeReceptor, or nil when it may: the types whose
// TypeInfo is Answerable (FE, ND, NC, FEE). A tiquete names no receiver to
// claim a credit; a purchase invoice and a payment receipt are the
// company's own documents.
func CheckAnswerable(t DocumentType) error {
	info, ok := t.Info()
	switch {
	case !ok || info.IsReceiverMessage():
		return &NotAnswerableError{Problem: msg.NotAnswerableType.With(string(t))}
	case info.Answerable:
		return nil
	case t == TypeTE:
		return &NotAnswerableError{Problem: msg.NotAnswerableTE.With(answerableList())}
	}
	return &NotAnswerableError{Problem: msg.NotAnswerableBuyer.With(t.Name(), string(t), answerableList())}
}

// NotAnswerableError is CheckAnswerable's refusal: why a receiver may not
// answer the document, in the catalogue's words.
type NotAnswerableError struct {
	Problem msg.Message
}

func (e *NotAnswerableError) Error() string { return e.Problem.String() }

// Describe is why the document is not answered.
func (e *NotAnswerableError) Describe() msg.Message { return e.Problem }

// answerableList names the answerable types: "FE, ND, NC and FEE".
func answerableList() any {
	var names []string
	for _, t := range typeTable {
		if t.Answerable {
			names = append(names, t.Abbrev)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return msg.ListAnd.With(strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// NewMensajeReceptor builds the receiver's message for the supplier's
// document doc (as ParseXML read it) from the receiver's answer. The
// totals come from the document: MontoTotalImpuesto is its TotalImpuesto
// (written whenever the document carries one), TotalFactura its
// TotalComprobante. The answer is checked against them and against the
// rules of spec §14.2 and nota 18; every problem is reported at once in a
// *ValidationError on the A.11 field names (the document's own problems
// on "xml"). FechaEmisionDoc and NumeroConsecutivoReceptor are the
// caller's to set when it numbers the message.
func NewMensajeReceptor(doc *Document, a ReceptorAnswer) (*MensajeReceptor, error) {
	ve := &ValidationError{Message: DefaultValidationMessage}
	if doc == nil {
		ve.Add(FieldReceivedXML, msg.SupplierDocMissing.With())
		return nil, ve
	}
	if err := CheckAnswerable(doc.Type); err != nil {
		ve.Add(FieldReceivedXML, err.(*NotAnswerableError).Problem)
		return nil, ve
	}
	m := &MensajeReceptor{
		Clave:              doc.Clave,
		NumeroCedulaEmisor: doc.Emisor.Identificacion.Numero,
		MontoTotalImpuesto: doc.ResumenFactura.TotalImpuesto,
		TotalFactura:       doc.ResumenFactura.TotalComprobante,
	}
	if !isNDigits(m.Clave, ClaveLen) {
		ve.Add(FieldReceivedXML, msg.SupplierClave.With())
	}
	if !cedulaDigits(m.NumeroCedulaEmisor) {
		ve.Add(FieldReceivedXML, msg.SupplierEmisorID.With())
	}
	if doc.Receptor == nil || doc.Receptor.Identificacion.IsZero() {
		ve.Add(FieldReceivedXML, msg.SupplierNoReceptor.With())
	} else {
		m.NumeroCedulaReceptor = doc.Receptor.Identificacion.Numero
		if !cedulaDigits(m.NumeroCedulaReceptor) {
			ve.Add(FieldReceivedXML, msg.SupplierReceptorID.With())
		}
	}
	if !m.TotalFactura.IsSet() {
		ve.Add(FieldReceivedXML, msg.SupplierNoTotal.With())
	}

	switch strings.TrimSpace(a.Mensaje) {
	case "1":
		m.Mensaje = ReceptorAceptado
	case "2":
		m.Mensaje = ReceptorParcial
	case "3":
		m.Mensaje = ReceptorRechazado
	case "":
		ve.Add(fieldMensaje, msg.MensajeRequired.With())
	default:
		ve.Add(fieldMensaje, msg.MensajeValue.With())
	}

	m.DetalleMensaje = strings.TrimSpace(a.DetalleMensaje)
	switch n := utf8.RuneCountInString(m.DetalleMensaje); {
	case n == 0 && (m.Mensaje == ReceptorParcial || m.Mensaje == ReceptorRechazado):
		ve.Add(fieldDetalleMensaje, msg.DetalleRequired.With())
	case n > 0 && n < detalleMensajeMinRunes:
		ve.Add(fieldDetalleMensaje, msg.DetalleMin.With(detalleMensajeMinRunes))
	case n > detalleMensajeMaxRunes:
		ve.Add(fieldDetalleMensaje, msg.DetalleMax.With(detalleMensajeMaxRunes))
	}

	m.CondicionImpuesto = strings.TrimSpace(a.CondicionImpuesto)
	if m.CondicionImpuesto != "" && !containsString(CondicionesImpuesto, m.CondicionImpuesto) {
		ve.Add(fieldCondicionImpuesto, msg.CondicionImpuesto.With())
	}
	m.CodigoActividad = strings.TrimSpace(a.CodigoActividad)
	switch {
	case m.CodigoActividad == "":
	case len(m.CodigoActividad) > codigoActividadMaxLength || strings.Trim(m.CodigoActividad, "0123456789.") != "":
		ve.Add(fieldCodigoActividad, msg.ActividadReceptor.With())
	case m.CondicionImpuesto == "05":
		ve.Add(fieldCodigoActividad, msg.ActividadWith05.With())
	}

	tax := m.MontoTotalImpuesto
	if !tax.IsSet() {
		tax = AmountFromInt(0)
	}
	m.MontoTotalImpuestoAcreditar = a.MontoTotalImpuestoAcreditar
	m.MontoTotalDeGastoAplicable = a.MontoTotalDeGastoAplicable
	checkReceptorAmount(ve, fieldImpuestoAcreditar, a.MontoTotalImpuestoAcreditar)
	checkReceptorAmount(ve, fieldGastoAplicable, a.MontoTotalDeGastoAplicable)
	if acr := a.MontoTotalImpuestoAcreditar; acr.IsSet() && !acr.Invalid() && acr.Sign() >= 0 {
		switch {
		case m.Mensaje == ReceptorRechazado:
			ve.Add(fieldImpuestoAcreditar, msg.CreditOnRejected.With())
		case m.CondicionImpuesto == "05":
			ve.Add(fieldImpuestoAcreditar, msg.AcreditarWith05.With())
		case m.CondicionImpuesto == "04" && acr.Sign() > 0:
			ve.Add(fieldImpuestoAcreditar, msg.AcreditarWith04.With())
		case acr.Cmp(tax) > 0:
			ve.Add(fieldImpuestoAcreditar, msg.AcreditarExceeds.With(acr.String(), tax.String()))
		case m.CondicionImpuesto == "01" && acr.Cmp(tax) != 0:
			ve.Add(fieldImpuestoAcreditar, msg.AcreditarFull.With(tax.String()))
		case m.CondicionImpuesto == "02" && acr.Cmp(tax) == 0 && tax.Sign() > 0:
			ve.Add(fieldImpuestoAcreditar, msg.AcreditarPartial.With(tax.String()))
		}
	} else if !acr.IsSet() && m.CondicionImpuesto == "02" && m.Mensaje != ReceptorRechazado {
		ve.Add(fieldImpuestoAcreditar, msg.AcreditarRequired.With())
	}
	if g := a.MontoTotalDeGastoAplicable; g.IsSet() && !g.Invalid() && g.Sign() >= 0 {
		switch {
		case m.Mensaje == ReceptorRechazado:
			ve.Add(fieldGastoAplicable, msg.GastoOnRejected.With())
		case m.CondicionImpuesto == "05":
			ve.Add(fieldGastoAplicable, msg.GastoWith05.With())
		case m.TotalFactura.IsSet() && g.Cmp(m.TotalFactura) > 0:
			ve.Add(fieldGastoAplicable, msg.GastoExceeds.With(g.String(), m.TotalFactura.String()))
		}
	}
	if len(ve.Fields) > 0 {
		return nil, ve
	}
	return m, nil
}

// checkReceptorAmount checks an optional amount of the answer: a decimal,
// not negative, that fits DecimalDineroType (13 integer digits, 5
// decimals).
func checkReceptorAmount(ve *ValidationError, field string, a Amount) {
	switch {
	case a.Invalid():
		ve.Add(field, msg.AnswerAmountDecimal.With(field))
	case !a.IsSet():
	case a.Sign() < 0:
		ve.Add(field, msg.AnswerAmountNegative.With(field))
	case a.IntegerDigits() > 13 || a.SignificantPlaces() > 5:
		ve.Add(field, msg.AnswerAmountDigits.With(field))
	}
}

// cedulaDigits reports whether s is 9 to 12 digits: what MensajeReceptor
// accepts for either party.
func cedulaDigits(s string) bool {
	return len(s) >= 9 && len(s) <= 12 && strings.Trim(s, "0123456789") == ""
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// MarshalMensajeReceptor writes m as an unsigned MensajeReceptor in the
// element order of MensajeReceptor_V4.4.xsd, without insignificant
// whitespace; the caller signs it (the signature is appended to the
// root). Optional elements that are empty are omitted.
func MarshalMensajeReceptor(m *MensajeReceptor) ([]byte, error) {
	if m == nil {
		return nil, errors.New("marshal MensajeReceptor: nil message")
	}
	if ReceptorMessageType(m.Mensaje) == "" {
		return nil, fmt.Errorf("marshal MensajeReceptor: Mensaje %d is not 1, 2 or 3", m.Mensaje)
	}
	if !isNDigits(m.NumeroConsecutivoReceptor, ConsecutivoLen) {
		return nil, fmt.Errorf("marshal MensajeReceptor: NumeroConsecutivoReceptor %q is not %d digits", m.NumeroConsecutivoReceptor, ConsecutivoLen)
	}
	if t := m.NumeroConsecutivoReceptor[8:10]; t != ReceptorMessageType(m.Mensaje) {
		return nil, fmt.Errorf("marshal MensajeReceptor: NumeroConsecutivoReceptor has type %s, Mensaje %d wants %s", t, m.Mensaje, ReceptorMessageType(m.Mensaje))
	}
	w := &xmlWriter{buf: make([]byte, 0, 1024)}
	w.buf = append(w.buf, xmlDeclaration...)
	w.buf = append(w.buf, "<MensajeReceptor"...)
	w.attr("xmlns", NamespaceMensajeReceptor)
	w.buf = append(w.buf, '>')
	w.str("Clave", m.Clave)
	w.str("NumeroCedulaEmisor", m.NumeroCedulaEmisor)
	w.dateTime("FechaEmisionDoc", m.FechaEmisionDoc)
	w.start("Mensaje")
	w.buf = strconv.AppendInt(w.buf, int64(m.Mensaje), 10)
	w.end("Mensaje")
	w.optStr("DetalleMensaje", m.DetalleMensaje)
	w.optAmount("MontoTotalImpuesto", m.MontoTotalImpuesto)
	w.optStr("CodigoActividad", m.CodigoActividad)
	w.optStr("CondicionImpuesto", m.CondicionImpuesto)
	w.optAmount("MontoTotalImpuestoAcreditar", m.MontoTotalImpuestoAcreditar)
	w.optAmount("MontoTotalDeGastoAplicable", m.MontoTotalDeGastoAplicable)
	w.amount("TotalFactura", m.TotalFactura)
	w.str("NumeroCedulaReceptor", m.NumeroCedulaReceptor)
	w.str("NumeroConsecutivoReceptor", m.NumeroConsecutivoReceptor)
	w.end("MensajeReceptor")
	if w.err != nil {
		return nil, fmt.Errorf("marshal MensajeReceptor: %w", w.err)
	}
	return w.buf, nil
}

// ErrNotMensajeReceptor is wrapped by ParseMensajeReceptor when the bytes
// are not a v4.4 MensajeReceptor.
var ErrNotMensajeReceptor = errors.New("not a v4.4 MensajeReceptor")

// mensajeReceptorOrder is the schema's element order.
var mensajeReceptorOrder = []string{
	"Clave", "NumeroCedulaEmisor", "FechaEmisionDoc", "Mensaje", "DetalleMensaje", "MontoTotalImpuesto",
	"CodigoActividad", "CondicionImpuesto", "MontoTotalImpuestoAcreditar", "MontoTotalDeGastoAplicable",
	"TotalFactura", "NumeroCedulaReceptor", "NumeroConsecutivoReceptor", "Signature",
}

// ParseMensajeReceptor reads a v4.4 MensajeReceptor, signed or not. The
// root must be MensajeReceptor in the v4.4 namespace; its elements must
// come in the schema's order, once each, with the required ones present;
// dates, integers and decimals must read as such. A ds:Signature is
// skipped (the signer's verifier judges it).
func ParseMensajeReceptor(b []byte) (*MensajeReceptor, error) {
	doc := etree.NewDocument()
	doc.ReadSettings.Permissive = false
	if err := doc.ReadFromBytes(b); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotMensajeReceptor, err)
	}
	root := doc.Root()
	if root == nil || root.Tag != "MensajeReceptor" || root.NamespaceURI() != NamespaceMensajeReceptor {
		return nil, fmt.Errorf("%w: the root element is not MensajeReceptor in %s", ErrNotMensajeReceptor, NamespaceMensajeReceptor)
	}
	m := &MensajeReceptor{}
	next := 0
	seen := map[string]bool{}
	for _, el := range root.ChildElements() {
		pos := -1
		for i := next; i < len(mensajeReceptorOrder); i++ {
			if mensajeReceptorOrder[i] == el.Tag {
				pos = i
				break
			}
		}
		if pos < 0 {
			return nil, fmt.Errorf("MensajeReceptor: element %s is unknown, repeated or out of order", el.Tag)
		}
		next = pos + 1
		seen[el.Tag] = true
		v := el.Text()
		var err error
		switch el.Tag {
		case "Clave":
			m.Clave = v
		case "NumeroCedulaEmisor":
			m.NumeroCedulaEmisor = v
		case "FechaEmisionDoc":
			m.FechaEmisionDoc, err = parseXMLDateTime(strings.TrimSpace(v))
		case "Mensaje":
			m.Mensaje, err = strconv.Atoi(strings.TrimSpace(v))
		case "DetalleMensaje":
			m.DetalleMensaje = v
		case "MontoTotalImpuesto":
			m.MontoTotalImpuesto, err = ParseAmount(strings.TrimSpace(v))
		case "CodigoActividad":
			m.CodigoActividad = v
		case "CondicionImpuesto":
			m.CondicionImpuesto = v
		case "MontoTotalImpuestoAcreditar":
			m.MontoTotalImpuestoAcreditar, err = ParseAmount(strings.TrimSpace(v))
		case "MontoTotalDeGastoAplicable":
			m.MontoTotalDeGastoAplicable, err = ParseAmount(strings.TrimSpace(v))
		case "TotalFactura":
			m.TotalFactura, err = ParseAmount(strings.TrimSpace(v))
		case "NumeroCedulaReceptor":
			m.NumeroCedulaReceptor = v
		case "NumeroConsecutivoReceptor":
			m.NumeroConsecutivoReceptor = v
		case "Signature":
			if el.NamespaceURI() != NamespaceXMLDSig {
				return nil, errors.New("MensajeReceptor: Signature is not a ds:Signature")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("MensajeReceptor: %s: %w", el.Tag, err)
		}
	}
	for _, req := range []string{"Clave", "NumeroCedulaEmisor", "FechaEmisionDoc", "Mensaje", "TotalFactura", "NumeroCedulaReceptor", "NumeroConsecutivoReceptor"} {
		if !seen[req] {
			return nil, fmt.Errorf("MensajeReceptor: %s is missing", req)
		}
	}
	if ReceptorMessageType(m.Mensaje) == "" {
		return nil, fmt.Errorf("MensajeReceptor: Mensaje %d is not 1, 2 or 3", m.Mensaje)
	}
	if !isNDigits(m.Clave, ClaveLen) {
		return nil, fmt.Errorf("MensajeReceptor: Clave %q is not %d digits", m.Clave, ClaveLen)
	}
	if !isNDigits(m.NumeroConsecutivoReceptor, ConsecutivoLen) {
		return nil, fmt.Errorf("MensajeReceptor: NumeroConsecutivoReceptor %q is not %d digits", m.NumeroConsecutivoReceptor, ConsecutivoLen)
	}
	return m, nil
}
