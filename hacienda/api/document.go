package api

import "encoding/json"

// The document calls (A.5) and the received documents (A.11).

// The estado codes of a document and of a receiver's message (A.5).
const (
	EstadoPending    = "00" // stored, not submitted (an expired certificate, for one)
	EstadoAccepted   = "01" // the tax authority accepted it
	EstadoRejected   = "02" // the tax authority rejected it
	EstadoError      = "03" // the tax authority reported a processing error
	EstadoSent       = "04" // received by the tax authority, verdict not final yet
	EstadoNotSentYet = "05" // the tax authority was unreachable; the service retries
)

// final reports whether estado is a final verdict of the tax authority:
// accepted, rejected or error.
func final(estado string) bool {
	switch estado {
	case EstadoAccepted, EstadoRejected, EstadoError:
		return true
	}
	return false
}

// Document is the Document answer of the document calls (A.5): send,
// check, read, and each item of the listing. The check-only fields are
// there, empty, in every answer, so that one type reads them all.
type Document struct {
	IDExterno        string `json:"id_externo"`
	Consecutivo      string `json:"consecutivo"`
	NumeroDocumento  string `json:"numero_documento"`
	Clave            string `json:"clave"`
	Estado           string `json:"estado"`
	EstadoHumanizado string `json:"estado_humanizado"`
	// XML is the signed document, only when asked for (null otherwise);
	// the JSON carries it in base64.
	XML           []byte `json:"xml"`
	MensajeAPI    string `json:"mensaje_api"`
	MensajeAPIKey string `json:"mensaje_api_key"`
	// XMLRespuesta is the tax authority's signed answer, only when asked
	// for (null otherwise), in base64 like XML.
	XMLRespuesta           []byte   `json:"xml_respuesta"`
	CodigoMensajeHacienda  string   `json:"codigo_mensaje_hacienda"`
	MensajeHacienda        string   `json:"mensaje_hacienda"`
	DetalleMensajeHacienda []string `json:"detalle_mensaje_hacienda"`
	// Advertencias are what the registry checks found that did not
	// refuse the document (A.13), each "<field>: <what>"; only on the
	// send that issued it, and left out when there is nothing to say.
	Advertencias []string `json:"advertencias,omitempty"`
	// SaldoPendiente is what remains to be paid of a credit sale that
	// allows a payment receipt (an FE, ND or TE with CondicionVenta 08 or
	// 10; A.15): a decimal
	// string with 5 decimals in TotalComprobante terms, "0.00000" once
	// paid or credited; left out for any other document.
	SaldoPendiente string `json:"saldoPendiente,omitempty"`
}

// Final reports whether the tax authority's verdict is final: accepted,
// rejected or error. 00, 04 and 05 are not.
func (d *Document) Final() bool { return final(d.Estado) }

// ReceiveRequest is the body of the receive call (A.11). XML is the
// supplier's signed XML as received (the JSON carries it in base64);
// Mensaje is 1 accepted, 2 partially accepted, 3 rejected. Amounts are
// decimal strings ("3250.13"); empty fields are left out.
type ReceiveRequest struct {
	XML                         []byte `json:"xml"`
	Mensaje                     string `json:"mensaje"`
	DetalleMensaje              string `json:"detalleMensaje,omitempty"`
	CodigoActividad             string `json:"codigoActividad,omitempty"`
	CondicionImpuesto           string `json:"condicionImpuesto,omitempty"`
	MontoTotalImpuestoAcreditar string `json:"montoTotalImpuestoAcreditar,omitempty"`
	MontoTotalDeGastoAplicable  string `json:"montoTotalDeGastoAplicable,omitempty"`
	IDExterno                   string `json:"id_externo,omitempty"`
}

// Party is a party of a supplier's document.
type Party struct {
	TipoIdentificacion   string `json:"tipoIdentificacion"`
	NumeroIdentificacion string `json:"numeroIdentificacion"`
	Nombre               string `json:"nombre,omitempty"`
}

// ReceivedDocument is the answer of the received-document calls (A.11) and
// each item of their listing: the supplier's document (its clave, type,
// date, parties, totals and the signature policy its signature commits
// to) and the company's message about it (mensaje, consecutivoReceptor,
// its estado and the tax authority's answer, named as in Document).
type ReceivedDocument struct {
	IDExterno     string `json:"id_externo"`
	Clave         string `json:"clave"`
	TipoDocumento string `json:"tipoDocumento"`
	FechaEmision  string `json:"fechaEmision"`
	Emisor        Party  `json:"emisor"`
	Receptor      Party  `json:"receptor"`
	// MontoTotalImpuesto is null when the document has no tax.
	MontoTotalImpuesto *json.Number `json:"montoTotalImpuesto"`
	TotalFactura       json.Number  `json:"totalFactura"`
	// PoliticaFirmaProveedor is the policy the supplier's signature
	// commits to; empty for XAdES-BES.
	PoliticaFirmaProveedor string   `json:"politicaFirmaProveedor"`
	Mensaje                string   `json:"mensaje"`
	ConsecutivoReceptor    string   `json:"consecutivoReceptor"`
	FechaMensaje           string   `json:"fechaMensaje"`
	Estado                 string   `json:"estado"`
	EstadoHumanizado       string   `json:"estado_humanizado"`
	MensajeAPI             string   `json:"mensaje_api"`
	MensajeAPIKey          string   `json:"mensaje_api_key"`
	CodigoMensajeHacienda  string   `json:"codigo_mensaje_hacienda"`
	MensajeHacienda        string   `json:"mensaje_hacienda"`
	DetalleMensajeHacienda []string `json:"detalle_mensaje_hacienda"`
}

// Final reports whether the tax authority's verdict on the company's
// message is final: accepted, rejected or error.
func (r *ReceivedDocument) Final() bool { return final(r.Estado) }
