package api

import "facturad/hacienda"

// The bodies of the calls that issue a document referencing another one
// (A.15): a void, a re-issue (a send body's fields, without a type of its
// own) and a payment receipt. Each is answered with a Document, like a
// send. The service refuses a field these types do not name.

// VoidRequest is the body of POST /api/documents/{clave}/anular/v4: a
// credit note (NC) crediting the accepted document, whole or in part.
type VoidRequest struct {
	// IDExterno is the caller's own id of the credit note, unique per
	// branch; it is required and makes the call safe to repeat.
	IDExterno string `json:"id_externo"`
	// Razon is the reference's reason (3 to 180 characters).
	Razon string `json:"razon"`
	// Lineas are the lines credited, by the voided document's line number,
	// with the quantity credited; none credits every line with what
	// remains of it (a full void when nothing was credited before).
	Lineas []VoidLine `json:"lineas,omitempty"`
}

// VoidLine is one credited line of a void: the voided document's
// NumeroLinea (a JSON integer) and the quantity credited (a JSON number or
// a string holding one, "1.5"; up to 3 decimals).
type VoidLine struct {
	NumeroLinea int                 `json:"numeroLinea"`
	Cantidad    hacienda.FlexString `json:"cantidad"`
}

// PaymentRequest is the body of POST /api/documents/{clave}/recibo-pago/v4:
// a payment receipt (REP) of a credit sale.
type PaymentRequest struct {
	// IDExterno is the caller's own id of the receipt, unique per branch;
	// it is required and makes the call safe to repeat.
	IDExterno string `json:"id_externo"`
	// Monto is the amount paid, taxes included, in the document's
	// currency (up to 5 decimals; at most the document's saldoPendiente).
	Monto hacienda.FlexString `json:"monto"`
	// MedioPago is one TipoMedioPago code, 01 to 07.
	MedioPago hacienda.FlexString `json:"medioPago"`
	// Fecha is the date the payment was received (2026-11-21, or a
	// date-time), not in the future; empty is today.
	Fecha string `json:"fecha,omitempty"`
}
