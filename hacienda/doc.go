// Package hacienda holds everything facturad knows about Costa Rica's tax
// authority (Ministerio de Hacienda, Dirección General de Tributación) and its
// electronic-document format v4.4.
//
// It is the leaf of the module: it imports nothing of ours, and every other
// package may import it.
//
// # The document model
//
// [Document] is one v4.4 electronic document of any type this service issues
// ([DocumentType]: FE 01, ND 02, NC 03, TE 04, FEC 08, FEE 09, REP 10). Its
// fields are named exactly like the XML elements of the official schemas and
// carry JSON tags built by the contract's naming rule: the element name with
// its first letter lower-cased; a repeated element is a slice under its
// singular name (Descuento → "descuento"). Money, quantities and rates are
// [Amount] values: exact decimals (shopspring/decimal) that remember whether
// they were given at all, so that an absent optional element is never
// confused with a zero.
//
// # Calculation
//
// [Calculate] fills every computed amount of a Document in place (line
// amounts, taxes, exonerations, summary totals, the tax breakdown and the
// payment amounts), following the v4.4 rules with 5-decimal rounding half
// away from zero; every total is derived from already rounded line amounts,
// so that sums reconcile exactly. The rules as implemented are described in
// the project's docs/design/calculation.md; every reading of an ambiguous
// point of the official annex is listed in calc_interpretations.go and in
// docs/decisions-v44.md.
//
// # Requests and validation
//
// [SendDocumentRequest] is the body of the send call (snake_case metadata,
// camelCase document body); [DecodeSendRequest] decodes it, [ValidateSend]
// checks it whole and reports every problem at once as a [*ValidationError]
// whose field paths use the request's own names
// (detalleServicio[1].impuesto[0].codigoTarifaIVA,
// ReceptorRequest.CorreoElectronico, id_externo). The calculate call has its
// own pair: [DecodeCalculateRequest] and [CalculateAmounts]. Decoding is
// strict: a name that is no field of its object, an amount the service
// computes and one field given twice are refused on their paths, the field
// meant suggested ([CheckNames] checks other bodies so); a request stored
// when it was accepted is read again by [DecodeStoredSendRequest].
package hacienda
