// Package docview renders stored documents in the JSON shapes of the API
// contract: the Document answer of A.5 and the received document of A.11.
// The gateway answers with them and the delivery events carry them as their
// data, so a webhook's receiver reads the very shape a read call returns.
package docview

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"facturad/hacienda"
	"facturad/tenant"
)

// Document is the Document answer of A.5, names exactly as the contract
// spells them. XML and XMLRespuesta are null unless asked for.
type Document struct {
	IDExterno              string   `json:"id_externo"`
	Consecutivo            string   `json:"consecutivo"`
	NumeroDocumento        string   `json:"numero_documento"`
	Clave                  string   `json:"clave"`
	Estado                 string   `json:"estado"`
	EstadoHumanizado       string   `json:"estado_humanizado"`
	XML                    *string  `json:"xml"`
	MensajeAPI             string   `json:"mensaje_api"`
	MensajeAPIKey          string   `json:"mensaje_api_key"`
	XMLRespuesta           *string  `json:"xml_respuesta"`
	CodigoMensajeHacienda  string   `json:"codigo_mensaje_hacienda"`
	MensajeHacienda        string   `json:"mensaje_hacienda"`
	DetalleMensajeHacienda []string `json:"detalle_mensaje_hacienda"`
}

// NewDocument renders a stored document. estado overrides the stored state
// when not empty; the XMLs are included (base64) only when asked for.
func NewDocument(d tenant.Document, estado tenant.State, withXML, withResponse bool) Document {
	if estado == "" {
		estado = d.Estado
	}
	a := Document{
		IDExterno:              d.IDExterno,
		Consecutivo:            d.Consecutivo,
		NumeroDocumento:        NumeroDocumento(d),
		Clave:                  d.Clave,
		Estado:                 string(estado),
		EstadoHumanizado:       estado.Humanized(),
		CodigoMensajeHacienda:  d.CodigoMensaje,
		MensajeHacienda:        d.MensajeHacienda,
		DetalleMensajeHacienda: d.DetalleMensaje,
	}
	if a.DetalleMensajeHacienda == nil {
		a.DetalleMensajeHacienda = []string{}
	}
	if withXML && len(d.SignedXML) > 0 {
		s := base64.StdEncoding.EncodeToString(d.SignedXML)
		a.XML = &s
	}
	if withResponse && len(d.ResponseXML) > 0 {
		s := base64.StdEncoding.EncodeToString(d.ResponseXML)
		a.XMLRespuesta = &s
	}
	return a
}

// StoredDocument is the read answer of a stored document (GET
// /api/documents/{clave}/v4 without the XMLs): its mensaje_api is the
// stored reason. It is the data of a documento.* event.
func StoredDocument(d tenant.Document) Document {
	a := NewDocument(d, "", false, false)
	a.MensajeAPI = d.LastError
	return a
}

// NumeroDocumento is the document's 10-digit sequence number: the last ten
// digits of its consecutivo.
func NumeroDocumento(d tenant.Document) string {
	if len(d.Consecutivo) == 20 {
		return d.Consecutivo[10:]
	}
	if d.Numero > 0 {
		return fmt.Sprintf("%010d", d.Numero)
	}
	return ""
}

// Party is a party of a supplier's document.
type Party struct {
	TipoIdentificacion   string `json:"tipoIdentificacion"`
	NumeroIdentificacion string `json:"numeroIdentificacion"`
	Nombre               string `json:"nombre,omitempty"`
}

// Received is the received document of A.11: the supplier's document (its
// clave, type, date, parties, totals and the signature policy its
// signature commits to) and the company's message about it (mensaje,
// consecutivoReceptor, its state and the tax authority's answer, named as
// in the Document answer).
type Received struct {
	IDExterno              string       `json:"id_externo"`
	Clave                  string       `json:"clave"`
	TipoDocumento          string       `json:"tipoDocumento"`
	FechaEmision           string       `json:"fechaEmision"`
	Emisor                 Party        `json:"emisor"`
	Receptor               Party        `json:"receptor"`
	MontoTotalImpuesto     *json.Number `json:"montoTotalImpuesto"`
	TotalFactura           json.Number  `json:"totalFactura"`
	PoliticaFirmaProveedor string       `json:"politicaFirmaProveedor"` // the supplier's signature policy; empty for XAdES-BES
	Mensaje                string       `json:"mensaje"`
	ConsecutivoReceptor    string       `json:"consecutivoReceptor"`
	FechaMensaje           string       `json:"fechaMensaje"`
	Estado                 string       `json:"estado"`
	EstadoHumanizado       string       `json:"estado_humanizado"`
	MensajeAPI             string       `json:"mensaje_api"`
	MensajeAPIKey          string       `json:"mensaje_api_key"`
	CodigoMensajeHacienda  string       `json:"codigo_mensaje_hacienda"`
	MensajeHacienda        string       `json:"mensaje_hacienda"`
	DetalleMensajeHacienda []string     `json:"detalle_mensaje_hacienda"`
}

// NewReceived renders a received document; estado overrides the stored
// state when not empty.
func NewReceived(r tenant.ReceivedDocument, estado tenant.State) Received {
	if estado == "" {
		estado = r.Estado
	}
	a := Received{
		IDExterno:              r.IDExterno,
		Clave:                  r.Clave,
		TipoDocumento:          r.TipoDocumento,
		FechaEmision:           LocalTime(r.FechaEmision),
		Emisor:                 Party{r.EmisorTipo, r.EmisorNumero, r.EmisorNombre},
		Receptor:               Party{TipoIdentificacion: r.ReceptorTipo, NumeroIdentificacion: r.ReceptorNumero},
		TotalFactura:           json.Number(r.TotalComprobante),
		PoliticaFirmaProveedor: r.FirmaPolitica,
		Mensaje:                r.Mensaje,
		ConsecutivoReceptor:    r.Consecutivo,
		FechaMensaje:           LocalTime(r.FechaMensaje),
		Estado:                 string(estado),
		EstadoHumanizado:       estado.Humanized(),
		CodigoMensajeHacienda:  r.CodigoMensaje,
		MensajeHacienda:        r.MensajeHacienda,
		DetalleMensajeHacienda: r.DetalleMensaje,
	}
	if r.TotalImpuesto != "" {
		n := json.Number(r.TotalImpuesto)
		a.MontoTotalImpuesto = &n
	}
	if a.DetalleMensajeHacienda == nil {
		a.DetalleMensajeHacienda = []string{}
	}
	return a
}

// StoredReceived is the read answer of a stored received document: its
// mensaje_api is the stored reason. It is the data of a recibido.* event.
func StoredReceived(r tenant.ReceivedDocument) Received {
	a := NewReceived(r, "")
	a.MensajeAPI = r.LastError
	return a
}

// DateLayout is the contract's local date-time without zone.
const DateLayout = "2006-01-02T15:04:05"

// LocalTime formats t as a Costa Rica local date-time; the zero time is
// "0001-01-01T00:00:00" (not set).
func LocalTime(t time.Time) string {
	if t.IsZero() {
		return "0001-01-01T00:00:00"
	}
	return t.In(hacienda.CostaRica).Format(DateLayout)
}
