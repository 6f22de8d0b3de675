package hacienda

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SendDocumentRequest is the body of POST /api/documents/v4 (contract A.5):
// metadata in snake_case, the document body in the model's camelCase
// shapes. JSON field matching is case-insensitive. Amounts and totals are
// computed by [NewDocument], never taken from the caller: [DecodeSendRequest]
// refuses them (except the payment amounts of a Recibo Electrónico de Pago
// and an editable BaseImponible).
type SendDocumentRequest struct {
	// IDExterno is the caller's own id, unique per branch.
	IDExterno string `json:"id_externo"`
	// TipoDocumento is 01 FE, 02 ND, 03 NC, 04 TE, 08 FEC, 09 FEE, 10 REP.
	TipoDocumento FlexString `json:"tipo_documento"`
	// Clave is optional: empty means the service numbers the document.
	Clave string `json:"clave"`
	// Terminal is the 5-digit terminal, default 00001.
	Terminal FlexString `json:"terminal"`
	// Situacion is 1 normal, 2 contingency, 3 no internet; default 1.
	Situacion FlexString `json:"situacion"`
	// RegistroFiscal8707 goes to the XML Emisor's Registrofiscal8707.
	RegistroFiscal8707      string     `json:"registro_fiscal8707"`
	CodigoActividadEmisor   FlexString `json:"codigo_actividad_emisor"`
	CodigoActividadReceptor FlexString `json:"codigo_actividad_receptor"`
	// FechaEmision is an ISO 8601 local date-time without zone
	// (2026-11-21T14:03:00), read as Costa Rica time; empty or
	// 0001-01-01T00:00:00 means "now" (the pipeline stamps it).
	FechaEmision        string     `json:"fecha_emision"`
	CondicionVenta      FlexString `json:"condicion_venta"`
	CondicionVentaOtros string     `json:"condicion_venta_otros"`
	// PlazoCredito is the credit term in days.
	PlazoCredito FlexString `json:"plazo_credito"`
	// Receptor is the counterparty: the buyer, or for an FEC (08) the
	// seller (who becomes the XML Emisor).
	Receptor *ReceptorRequest `json:"receptor"`

	DocumentBody
}

// DocumentBody is the part of a request shared by the send and calculate
// calls, in the model's shapes.
type DocumentBody struct {
	DetalleServicio       []LineaDetalle          `json:"detalleServicio"`
	OtrosCargos           []OtroCargo             `json:"otrosCargos"`
	ResumenFactura        ResumenFactura          `json:"resumenFactura"`
	InformacionReferencia []InformacionReferencia `json:"informacionReferencia"`
	Otros                 *Otros                  `json:"otros"`
}

// ReceptorRequest is the receptor object of the send request. Validation
// paths name it ReceptorRequest.<Field> (ReceptorRequest.CorreoElectronico).
type ReceptorRequest struct {
	Nombre         string                 `json:"nombre"`
	Identificacion *IdentificacionRequest `json:"identificacion"`
	// IdentificacionExtranjero is the v4.3 foreign id; v4.4 removed it.
	// When Identificacion is absent it becomes Tipo 05 with this Numero.
	IdentificacionExtranjero string     `json:"identificacionExtranjero"`
	NombreComercial          string     `json:"nombreComercial"`
	Ubicacion                *Ubicacion `json:"ubicacion"`
	OtrasSenasExtranjero     string     `json:"otrasSenasExtranjero"`
	Telefono                 *Telefono  `json:"telefono"`
	// CorreoElectronico holds one or more addresses separated by ";", no
	// spaces.
	CorreoElectronico string `json:"correoElectronico"`
}

// IdentificacionRequest is an identification as sent (numbers accepted for
// both fields).
type IdentificacionRequest struct {
	Tipo   FlexString `json:"tipo"`
	Numero FlexString `json:"numero"`
}

// CalculateRequest is the body of POST /api/documents/calculate/v4: the
// document body, plus an optional tipo_documento (default 01) that selects
// the per-type calculation rules, and condicion_venta for information.
type CalculateRequest struct {
	TipoDocumento  FlexString `json:"tipo_documento"`
	CondicionVenta FlexString `json:"condicion_venta"`
	DocumentBody
}

// FlexString is a string field that also accepts a JSON number (kept as
// written: "terminal": 1 reads "1") or any other JSON value (kept as its
// JSON text, so that validation rejects it by its path instead of the
// decoder failing on the first one). null reads as "".
type FlexString string

// UnmarshalJSON implements json.Unmarshaler; it never fails.
func (f *FlexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*f = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			*f = FlexString(b)
			return nil
		}
		*f = FlexString(s)
	default:
		*f = FlexString(b)
	}
	return nil
}

// String returns the value trimmed of surrounding spaces.
func (f FlexString) String() string { return strings.TrimSpace(string(f)) }

// Code returns the value as a two-digit code: a single digit, as a client
// sending "tipo_documento": 1 writes it, is padded to "01".
func (f FlexString) Code() string { return pad2(f.String()) }

// DecodeSendRequest decodes the send body. A body that is empty, not JSON
// or not a JSON object is a *ValidationError on "body". Decoding is
// strict: a name that is no field of its object (matched without regard
// to case), a field named twice, and an amount the service computes are
// refused on their exact paths (detalleServicio[0].montoDescuento), a
// close name suggested. Values of the wrong JSON type for their field
// ("codigo": 1 where a string is expected) are each reported on their
// exact path (detalleServicio[1].impuesto[0].codigo). Those problems come
// back all at once and together with every problem [ValidateSend] finds
// in the rest of the body that does not depend on the company's own data;
// the request is then not returned. Amounts and code fields never fail to
// decode: their problems are reported by [ValidateSend] with every other
// one.
func DecodeSendRequest(body []byte) (*SendDocumentRequest, error) {
	var r SendDocumentRequest
	found, err := decodeBody(body, &r, sendNames())
	if err != nil {
		return nil, err
	}
	var given errs
	givenComputed(DocumentType(r.TipoDocumento.Code()), r.DetalleServicio, &given)
	if found = mergeErrors(found, given.v); found != nil {
		var e errs
		buildDocument(&r, nil, &e)
		return nil, withTypeErrors(found, e.v)
	}
	return &r, nil
}

// DecodeStoredSendRequest decodes a send request the service stored when
// it accepted it (the canonical form of a document's request), as the
// version that accepted it read it: names no field takes and amounts the
// service computes are left out, not refused. Anything else is as
// [DecodeSendRequest].
func DecodeStoredSendRequest(body []byte) (*SendDocumentRequest, error) {
	var r SendDocumentRequest
	found, err := decodeBody(body, &r, nil)
	if err != nil {
		return nil, err
	}
	if found != nil {
		var e errs
		buildDocument(&r, nil, &e)
		return nil, withTypeErrors(found, e.v)
	}
	return &r, nil
}

// CheckGivenAmounts refuses, in a decoded request of type t, the line
// amounts the service computes in that type that the caller gave
// (montoTotal and subTotal but in a payment receipt, baseImponible but
// with iVACobradoFabrica 01 or an IVA of code 07), as [DecodeSendRequest]
// does: a *ValidationError, or nil.
func CheckGivenAmounts(t DocumentType, lines []LineaDetalle) error {
	var e errs
	givenComputed(t, lines, &e)
	return e.err()
}

// sendNames are the names of a send body, which the calculate call takes
// as well.
var sendNames = sync.OnceValue(func() *objectNames { return namesOf(reflect.TypeFor[SendDocumentRequest]()) })

// DecodeCalculateRequest decodes the calculate body, like
// DecodeSendRequest: values of the wrong JSON type and the names refused
// come back with every problem [CalculateAmounts] finds in the rest of
// the body. A whole send body is accepted: the send's own fields are
// names of this call too, which it does not read.
func DecodeCalculateRequest(body []byte) (*CalculateRequest, error) {
	var r CalculateRequest
	found, err := decodeBody(body, &r, sendNames())
	if err != nil {
		return nil, err
	}
	t := DocumentType(r.TipoDocumento.Code())
	if t == "" {
		t = TypeFE
	}
	var given errs
	givenComputed(t, r.DetalleServicio, &given)
	if found = mergeErrors(found, given.v); found != nil {
		var e errs
		var doc Document
		calculateRequest(&r, &doc, &e)
		return nil, withTypeErrors(found, e.v)
	}
	return &r, nil
}

// ParseDateTime reads a contract date-time: ISO 8601 local without zone
// (2026-11-21T14:03:00, fractional seconds allowed), taken as Costa Rica
// time, or RFC 3339 with a zone, or a plain date (2026-11-21, midnight).
// An empty string and 0001-01-01T00:00:00 give the zero time ("not set").
func ParseDateTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasPrefix(s, "0001-01-01") {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, CostaRica); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, errors.New("must be a date-time like 2026-11-21T14:03:00")
}

// jsonDateTime is a date-time field inside the document body: it accepts
// what ParseDateTime accepts and never fails to decode (a bad value is kept
// for validation to report).
type jsonDateTime struct {
	t   time.Time
	raw string
	bad bool
}

func (d *jsonDateTime) UnmarshalJSON(b []byte) error {
	var s FlexString
	_ = s.UnmarshalJSON(b)
	d.raw = s.String()
	t, err := ParseDateTime(d.raw)
	d.t, d.bad = t, err != nil
	return nil
}

// UnmarshalJSON reads an exoneration, accepting a contract date-time for
// FechaEmisionEX and numbers or strings for Articulo and Inciso.
func (x *Exoneracion) UnmarshalJSON(b []byte) error {
	type plain Exoneracion
	var aux struct {
		plain
		FechaEmisionEX jsonDateTime `json:"fechaEmisionEX"`
		Articulo       FlexString   `json:"articulo"`
		Inciso         FlexString   `json:"inciso"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*x = Exoneracion(aux.plain)
	x.FechaEmisionEX = aux.FechaEmisionEX.t
	x.badFecha = aux.FechaEmisionEX.bad
	x.Articulo, x.badArticulo = flexInt(aux.Articulo)
	x.Inciso, x.badInciso = flexInt(aux.Inciso)
	return nil
}

// UnmarshalJSON reads a reference, accepting the v4.3 spellings tipoDoc and
// fechaEmision and a contract date-time.
func (r *InformacionReferencia) UnmarshalJSON(b []byte) error {
	type plain InformacionReferencia
	var aux struct {
		plain
		FechaEmisionIR jsonDateTime `json:"fechaEmisionIR"`
		TipoDoc        FlexString   `json:"tipoDoc"`
		FechaEmision   jsonDateTime `json:"fechaEmision"`
		TipoDocIR      FlexString   `json:"tipoDocIR"`
		Codigo         FlexString   `json:"codigo"`
		Numero         FlexString   `json:"numero"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*r = InformacionReferencia(aux.plain)
	r.TipoDocIR = aux.TipoDocIR.Code()
	if r.TipoDocIR == "" {
		r.TipoDocIR = aux.TipoDoc.Code()
	}
	r.Codigo = aux.Codigo.Code()
	r.Numero = aux.Numero.String()
	f := aux.FechaEmisionIR
	if f.raw == "" {
		f = aux.FechaEmision
	}
	r.FechaEmisionIR, r.badFecha = f.t, f.bad
	return nil
}

// UnmarshalJSON reads a location, accepting numbers or strings for the
// codes and padding canton and district to two digits ("1" → "01").
func (u *Ubicacion) UnmarshalJSON(b []byte) error {
	var aux struct {
		Provincia  FlexString `json:"provincia"`
		Canton     FlexString `json:"canton"`
		Distrito   FlexString `json:"distrito"`
		Barrio     FlexString `json:"barrio"`
		OtrasSenas string     `json:"otrasSenas"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*u = Ubicacion{
		Provincia:  aux.Provincia.String(),
		Canton:     pad2(aux.Canton.String()),
		Distrito:   pad2(aux.Distrito.String()),
		Barrio:     aux.Barrio.String(),
		OtrasSenas: aux.OtrasSenas,
	}
	return nil
}

func pad2(s string) string {
	if len(s) == 1 && s[0] >= '0' && s[0] <= '9' {
		return "0" + s
	}
	return s
}

// UnmarshalJSON reads a phone: an object {codigoPais, numTelefono} (numbers
// or strings), or a plain string or number holding the digits (country code
// 506 assumed).
func (t *Telefono) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var aux struct {
			CodigoPais  FlexString `json:"codigoPais"`
			NumTelefono FlexString `json:"numTelefono"`
		}
		if err := json.Unmarshal(b, &aux); err != nil {
			return err
		}
		*t = Telefono{CodigoPais: aux.CodigoPais.String(), NumTelefono: aux.NumTelefono.String()}
		return nil
	}
	var s FlexString
	_ = s.UnmarshalJSON(b)
	num := strings.NewReplacer("-", "", " ", "", "+", "").Replace(s.String())
	*t = Telefono{CodigoPais: "506", NumTelefono: num}
	return nil
}

// flexInt reads an optional non-negative integer of at most 9 digits; the
// second result reports a value that is not one.
func flexInt(f FlexString) (int, bool) {
	s := f.String()
	if s == "" {
		return 0, false
	}
	if !isDigits(s, 1, 9) {
		return 0, true
	}
	n, _ := strconv.Atoi(s)
	return n, false
}

// UnmarshalJSON reads an OtroTexto/OtroContenido: an object {codigo, valor}
// or a plain string.
func (o *OtroTexto) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		type plain OtroTexto
		var p plain
		if err := json.Unmarshal(b, &p); err != nil {
			return err
		}
		*o = OtroTexto(p)
		return nil
	}
	var s FlexString
	_ = s.UnmarshalJSON(b)
	*o = OtroTexto{Valor: string(s)}
	return nil
}
