// Package docview renders stored documents as the API's answers (package
// hacienda/api): the Document answer of A.5 and the received document of
// A.11. The gateway answers with them and the delivery events carry them
// as their data, so a webhook's receiver reads the very shape a read call
// returns.
package docview

import (
	"encoding/json"
	"fmt"

	"facturad/hacienda/api"
	"facturad/tenant"
)

// NewDocument renders a stored document. estado overrides the stored state
// when not empty; the XMLs are included only when asked for.
func NewDocument(d tenant.Document, estado tenant.State, withXML, withResponse bool) api.Document {
	if estado == "" {
		estado = d.Estado
	}
	a := api.Document{
		IDExterno:              d.IDExterno,
		Consecutivo:            d.Consecutivo,
		NumeroDocumento:        NumeroDocumento(d),
		Clave:                  d.Clave,
		Estado:                 string(estado),
		EstadoHumanizado:       estado.Humanized(),
		CodigoMensajeHacienda:  d.CodigoMensaje,
		MensajeHacienda:        d.MensajeHacienda,
		DetalleMensajeHacienda: d.DetalleMensaje,
		SaldoPendiente:         d.SaldoPendiente,
	}
	if a.DetalleMensajeHacienda == nil {
		a.DetalleMensajeHacienda = []string{}
	}
	if withXML && len(d.SignedXML) > 0 {
		a.XML = d.SignedXML
	}
	if withResponse && len(d.ResponseXML) > 0 {
		a.XMLRespuesta = d.ResponseXML
	}
	return a
}

// StoredDocument is the read answer of a stored document (GET
// /api/documents/{clave}/v4 without the XMLs): its mensaje_api is the
// stored reason. It is the data of a documento.* event.
func StoredDocument(d tenant.Document) api.Document {
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

// NewReceived renders a received document; estado overrides the stored
// state when not empty.
func NewReceived(r tenant.ReceivedDocument, estado tenant.State) api.ReceivedDocument {
	if estado == "" {
		estado = r.Estado
	}
	a := api.ReceivedDocument{
		IDExterno:              r.IDExterno,
		Clave:                  r.Clave,
		TipoDocumento:          r.TipoDocumento,
		FechaEmision:           api.LocalTime(r.FechaEmision),
		Emisor:                 api.Party{TipoIdentificacion: r.EmisorTipo, NumeroIdentificacion: r.EmisorNumero, Nombre: r.EmisorNombre},
		Receptor:               api.Party{TipoIdentificacion: r.ReceptorTipo, NumeroIdentificacion: r.ReceptorNumero},
		TotalFactura:           json.Number(r.TotalComprobante),
		PoliticaFirmaProveedor: r.FirmaPolitica,
		Mensaje:                r.Mensaje,
		ConsecutivoReceptor:    r.Consecutivo,
		FechaMensaje:           api.LocalTime(r.FechaMensaje),
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
func StoredReceived(r tenant.ReceivedDocument) api.ReceivedDocument {
	a := NewReceived(r, "")
	a.MensajeAPI = r.LastError
	return a
}
