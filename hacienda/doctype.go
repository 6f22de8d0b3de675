package hacienda

import (
	"slices"
	"strings"
)

// DocumentType is the two-digit document-type code of v4.4 (nota 3), used
// in NumeroConsecutivo positions 9–10: 01–04 and 08–10 for the documents a
// taxpayer issues, 05–07 for a receiver's messages.
type DocumentType string

// The document types this service issues.
const (
	TypeFE  DocumentType = "01" // Factura Electrónica
	TypeND  DocumentType = "02" // Nota de Débito Electrónica
	TypeNC  DocumentType = "03" // Nota de Crédito Electrónica
	TypeTE  DocumentType = "04" // Tiquete Electrónico
	TypeFEC DocumentType = "08" // Factura Electrónica de Compra
	TypeFEE DocumentType = "09" // Factura Electrónica de Exportación
	TypeREP DocumentType = "10" // Recibo Electrónico de Pago
)

// TypeInfo is everything the service knows about one document type. The
// table of them (TypeTable) is the one place where the types are listed:
// every list of types, root element or namespace elsewhere is derived from
// it.
type TypeInfo struct {
	Code DocumentType
	// Abbrev is the annex's short name: FE, ND, NC, TE, FEC, FEE, REP; the
	// receiver's messages have none.
	Abbrev string
	// Name is the Spanish name, as printed on the document.
	Name string
	// Root is the XML root element; Namespace its v4.4 target namespace
	// (the schema is <Root>_V4.4.xsd).
	Root, Namespace string
	// Mensaje is, for a receiver's message (05, 06, 07), the value of its
	// Mensaje element that the type numbers (ReceptorAceptado,
	// ReceptorParcial, ReceptorRechazado); 0 for the issued documents.
	Mensaje int
	// Note marks a credit or debit note.
	Note bool
	// IssuedByBuyer marks a purchase invoice: the company that issues it is
	// the buyer, written as the XML Receptor, and the seller is the XML
	// Emisor. The clave carries the buyer's identification, and the
	// counterparty of the document is its Emisor.
	IssuedByBuyer bool
	// ReceptorRequired says the counterparty is required, with its
	// identification: the receptor in an FE or REP, the seller in an FEC
	// (decision 29).
	ReceptorRequired bool
	// Answerable says a company that receives a document of this type
	// answers it with a receiver's message, and so may register it as a
	// received document. A tiquete names no buyer for a tax credit; a
	// purchase invoice and a payment receipt are the buyer's own.
	Answerable bool
	// TipoDocIR is the reference-document code (nota 10) that names a
	// document of this type in InformacionReferencia, whose Numero is then
	// its clave; "" for the types that code list does not name by type.
	TipoDocIR string
}

// IsReceiverMessage reports whether the type is a receiver's message (05,
// 06, 07) rather than an issued document.
func (i TypeInfo) IsReceiverMessage() bool { return i.Mensaje != 0 }

// namespaceBase is the prefix of every v4.4 namespace.
const namespaceBase = "https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/"

// NamespaceMensajeReceptor is the target namespace of MensajeReceptor_V4.4.xsd.
const NamespaceMensajeReceptor = namespaceBase + "mensajeReceptor"

// typeTable is the table, in code order.
var typeTable = []TypeInfo{
	{Code: TypeFE, Abbrev: "FE", Name: "Factura Electrónica", Root: "FacturaElectronica", Namespace: namespaceBase + "facturaElectronica",
		ReceptorRequired: true, Answerable: true, TipoDocIR: "01"},
	{Code: TypeND, Abbrev: "ND", Name: "Nota de Débito Electrónica", Root: "NotaDebitoElectronica", Namespace: namespaceBase + "notaDebitoElectronica",
		Note: true, Answerable: true, TipoDocIR: "02"},
	{Code: TypeNC, Abbrev: "NC", Name: "Nota de Crédito Electrónica", Root: "NotaCreditoElectronica", Namespace: namespaceBase + "notaCreditoElectronica",
		Note: true, Answerable: true, TipoDocIR: "03"},
	{Code: TypeTE, Abbrev: "TE", Name: "Tiquete Electrónico", Root: "TiqueteElectronico", Namespace: namespaceBase + "tiqueteElectronico",
		TipoDocIR: "04"},
	{Code: "05", Name: "Confirmación de aceptación", Root: "MensajeReceptor", Namespace: NamespaceMensajeReceptor,
		Mensaje: ReceptorAceptado},
	{Code: "06", Name: "Confirmación de aceptación parcial", Root: "MensajeReceptor", Namespace: NamespaceMensajeReceptor,
		Mensaje: ReceptorParcial},
	{Code: "07", Name: "Confirmación de rechazo", Root: "MensajeReceptor", Namespace: NamespaceMensajeReceptor,
		Mensaje: ReceptorRechazado},
	{Code: TypeFEC, Abbrev: "FEC", Name: "Factura Electrónica de Compra", Root: "FacturaElectronicaCompra", Namespace: namespaceBase + "facturaElectronicaCompra",
		IssuedByBuyer: true, ReceptorRequired: true},
	{Code: TypeFEE, Abbrev: "FEE", Name: "Factura Electrónica de Exportación", Root: "FacturaElectronicaExportacion", Namespace: namespaceBase + "facturaElectronicaExportacion",
		Answerable: true},
	{Code: TypeREP, Abbrev: "REP", Name: "Recibo Electrónico de Pago", Root: "ReciboElectronicoPago", Namespace: namespaceBase + "reciboElectronicoPago",
		ReceptorRequired: true},
}

// typeIndex finds a row of typeTable by code.
var typeIndex = func() map[DocumentType]int {
	m := make(map[DocumentType]int, len(typeTable))
	for i, t := range typeTable {
		m[t.Code] = i
	}
	return m
}()

// TypeTable returns the table of document types, in code order: the issued
// types and the receiver's messages.
func TypeTable() []TypeInfo { return slices.Clone(typeTable) }

// TypeCodes returns, in code order, the codes of the types for which keep
// is true.
func TypeCodes(keep func(TypeInfo) bool) []string {
	var out []string
	for _, t := range typeTable {
		if keep(t) {
			out = append(out, string(t.Code))
		}
	}
	return out
}

// DocumentTypes lists the issued types in code order.
var DocumentTypes = func() []DocumentType {
	var out []DocumentType
	for _, t := range typeTable {
		if !t.IsReceiverMessage() {
			out = append(out, t.Code)
		}
	}
	return out
}()

// issuedTypesList is the issued types for messages: "01, 02, …, 10", or
// with their abbrevs "01 (FE), 02 (ND), …".
func issuedTypesList(abbrevs bool) string {
	parts := make([]string, len(DocumentTypes))
	for i, t := range DocumentTypes {
		parts[i] = string(t)
		if abbrevs {
			parts[i] += " (" + t.Abbrev() + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// Info returns the type's row of the table; ok is false for a code that is
// not in it.
func (t DocumentType) Info() (info TypeInfo, ok bool) {
	i, ok := typeIndex[t]
	if !ok {
		return TypeInfo{}, false
	}
	return typeTable[i], true
}

// info is Info without ok: the zero TypeInfo for an unknown code.
func (t DocumentType) info() TypeInfo { i, _ := t.Info(); return i }

// Valid reports whether t is one of the issued document types (a receiver's
// message is not one).
func (t DocumentType) Valid() bool { i, ok := t.Info(); return ok && !i.IsReceiverMessage() }

// Abbrev returns the short name used in the annex (FE, ND, NC, TE, FEC,
// FEE, REP), or "" for a receiver's message or an unknown type.
func (t DocumentType) Abbrev() string { return t.info().Abbrev }

// Name returns the Spanish name of the type, or "".
func (t DocumentType) Name() string { return t.info().Name }

// RootElement returns the XML root element name (FacturaElectronica, ...),
// or "".
func (t DocumentType) RootElement() string { return t.info().Root }

// Namespace returns the v4.4 target namespace of the type's schema, or "".
func (t DocumentType) Namespace() string { return t.info().Namespace }

// IsNote reports whether t is a credit or debit note.
func (t DocumentType) IsNote() bool { return t.info().Note }

// isConsecutivoType reports whether s is a document-type code a
// consecutivo may carry (01 to 10).
func isConsecutivoType(s string) bool { _, ok := DocumentType(s).Info(); return ok }

// ReceptorMessageType is the consecutivo document type of a receiver's
// message with that Mensaje: 05, 06 or 07; empty for any other value.
func ReceptorMessageType(mensaje int) string {
	for _, t := range typeTable {
		if t.IsReceiverMessage() && t.Mensaje == mensaje {
			return string(t.Code)
		}
	}
	return ""
}
