package recepcion

import (
	"strings"

	"facturad/hacienda"
)

// NewSubmission builds the submission of a signed document from its model:
// the clave, FechaEmision, the Emisor's identification and, when it fits
// the API, the Receptor's.
//
// The API's JSON caps identification numbers at 12 characters (the XML
// allows 20 for foreign ids): a receptor whose number is longer, or is not
// all digits, is left out of the JSON, as the tax authority's schema
// requires (it stays in the XML). In a purchase invoice (08) the XML's
// Emisor is the seller; it is sent as emisor all the same, since the API
// names the issuer of the document as written.
func NewSubmission(doc *hacienda.Document, signedXML []byte) Submission {
	s := Submission{
		Clave:     doc.Clave,
		Fecha:     doc.FechaEmision,
		Emisor:    Party{TipoIdentificacion: doc.Emisor.Identificacion.Tipo, NumeroIdentificacion: doc.Emisor.Identificacion.Numero},
		SignedXML: signedXML,
	}
	if r := doc.Receptor; r != nil && fitsAPI(r.Identificacion) {
		s.Receptor = &Party{TipoIdentificacion: r.Identificacion.Tipo, NumeroIdentificacion: r.Identificacion.Numero}
	}
	return s
}

// fitsAPI reports whether an identification can be sent in the API's JSON:
// a type and at most 12 digits.
func fitsAPI(id hacienda.Identificacion) bool {
	n := id.Numero
	return id.Tipo != "" && n != "" && len(n) <= 12 && strings.Trim(n, "0123456789") == ""
}
