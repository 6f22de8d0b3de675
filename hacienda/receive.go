package hacienda

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"facturad/hacienda/msg"
)

// ReceiveRequest is the body of POST /api/received/v4 (A.11), decoded:
// the supplier's signed XML (no longer base64), the company's answer and
// the caller's id_externo.
type ReceiveRequest struct {
	XML       []byte         `json:"xml"`
	Answer    ReceptorAnswer `json:"answer"`
	IDExterno string         `json:"id_externo"`
}

// receiveBody is the JSON of A.11 as it arrives.
type receiveBody struct {
	XML                         *string         `json:"xml"`
	Mensaje                     json.RawMessage `json:"mensaje"`
	DetalleMensaje              string          `json:"detalleMensaje"`
	CodigoActividad             string          `json:"codigoActividad"`
	CondicionImpuesto           string          `json:"condicionImpuesto"`
	MontoTotalImpuestoAcreditar Amount          `json:"montoTotalImpuestoAcreditar"`
	MontoTotalDeGastoAplicable  Amount          `json:"montoTotalDeGastoAplicable"`
	IDExterno                   string          `json:"id_externo"`
}

// receiveNames are the names of a receive body.
var receiveNames = sync.OnceValue(func() *objectNames { return namesOf(reflect.TypeFor[receiveBody]()) })

// maxReceivedIDExterno is the longest id_externo of a received
// document, as of a document.
const maxReceivedIDExterno = 100

// DecodeReceiveRequest reads the A.11 body. mensaje may be given as a
// string or a number; xml must be base64 (line breaks allowed). Every
// problem of the body's shape is reported at once, on the contract's field
// names, a name that is no field of the body or given twice among them
// (as [DecodeSendRequest] reports it); the answer's own rules are checked
// by NewMensajeReceptor.
func DecodeReceiveRequest(body []byte) (*ReceiveRequest, error) {
	var b receiveBody
	if err := json.Unmarshal(body, &b); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			// The body is valid JSON: its names are checked too.
			ve := &ValidationError{Fields: msg.One(te.Field, msg.JSONTypeOf.With(te.Value))}
			return nil, mergeErrors(ve, checkNames(body, receiveNames()))
		}
		return nil, &ValidationError{Fields: msg.One("body", msg.ReceivedBody.With())}
	}
	fe := &ValidationError{}
	add := fe.Add
	if bad := checkNames(body, receiveNames()); bad != nil {
		mergeErrors(fe, bad)
	}
	r := &ReceiveRequest{
		IDExterno: strings.TrimSpace(b.IDExterno),
		Answer: ReceptorAnswer{
			DetalleMensaje:              b.DetalleMensaje,
			CodigoActividad:             b.CodigoActividad,
			CondicionImpuesto:           b.CondicionImpuesto,
			MontoTotalImpuestoAcreditar: b.MontoTotalImpuestoAcreditar,
			MontoTotalDeGastoAplicable:  b.MontoTotalDeGastoAplicable,
		},
	}
	switch {
	case b.XML == nil || strings.TrimSpace(*b.XML) == "":
		add(FieldReceivedXML, msg.ReceivedXMLRequired.With())
	default:
		x, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(*b.XML), ""))
		if err != nil {
			add(FieldReceivedXML, msg.ReceivedXMLBase64.With())
		}
		r.XML = x
	}
	if m := bytes.TrimSpace(b.Mensaje); len(m) > 0 && string(m) != "null" {
		var s string
		if err := json.Unmarshal(m, &s); err != nil {
			var n json.Number
			if json.Unmarshal(m, &n) != nil {
				add("mensaje", msg.MensajeCode.With())
			}
			s = n.String()
		}
		r.Answer.Mensaje = s
	}
	if utf8.RuneCountInString(r.IDExterno) > maxReceivedIDExterno {
		add("id_externo", msg.MaxLength.With(maxReceivedIDExterno))
	}
	if fe.Len() > 0 {
		return nil, fe
	}
	return r, nil
}
