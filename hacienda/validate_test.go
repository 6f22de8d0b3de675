package hacienda

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// validFE is a complete, valid send request (FE) in JSON, as a client
// would send it.
const validFE = `{
  "id_externo": "pedido-1001",
  "tipo_documento": "01",
  "terminal": 1,
  "situacion": "1",
  "codigo_actividad_emisor": "522003",
  "fecha_emision": "2026-11-21T14:03:00",
  "condicion_venta": "01",
  "receptor": {
    "nombre": "Cliente de Prueba",
    "identificacion": {"tipo": "01", "numero": "114440555"},
    "ubicacion": {"provincia": 1, "canton": 1, "distrito": "02", "otrasSenas": "Frente al parque central"},
    "telefono": {"codigoPais": 506, "numTelefono": "88887777"},
    "correoElectronico": "a@cliente.cr;b@cliente.cr"
  },
  "detalleServicio": [
    {"numeroLinea": 1, "codigoCABYS": "2392000000000", "cantidad": 3, "unidadMedida": "Unid", "detalle": "Mercancía",
     "precioUnitario": 1250.5, "descuento": [{"porcentajeDescuento": 10, "codigoDescuento": "07"}],
     "impuesto": [{"codigo": "01", "codigoTarifaIVA": "08", "tarifa": 13}]}
  ],
  "resumenFactura": {"codigoTipoMoneda": {"codigoMoneda": "CRC", "tipoCambio": 1}, "medioPago": [{"tipoMedioPago": "01"}]}
}`

// mutate decodes validFE into a generic map, applies f and re-encodes it.
func mutate(t *testing.T, f func(m map[string]any)) []byte {
	t.Helper()
	return mutateJSON(t, validFE, f)
}

// mutateJSON decodes body, lets f change it and encodes it again.
func mutateJSON(t testing.TB, body string, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func obj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

func line0(m map[string]any) map[string]any {
	return m["detalleServicio"].([]any)[0].(map[string]any)
}

func sendErrors(t *testing.T, body []byte) map[string][]string {
	t.Helper()
	req, err := DecodeSendRequest(body)
	if err == nil {
		_, err = NewDocument(req, testIssuer(t))
	}
	if err == nil {
		return nil
	}
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("error %v is a %T, want *ValidationError", err, err)
	}
	return ve.FieldErrors()
}

func TestNewDocumentValid(t *testing.T) {
	req, err := DecodeSendRequest([]byte(validFE))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := NewDocument(req, testIssuer(t))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Emisor.Identificacion.Numero != "3101123456" || doc.Receptor.Identificacion.Numero != "114440555" {
		t.Errorf("parties: emisor %+v receptor %+v", doc.Emisor.Identificacion, doc.Receptor.Identificacion)
	}
	if got := doc.Receptor.CorreoElectronico; len(got) != 2 || got[1] != "b@cliente.cr" {
		t.Errorf("receptor e-mails = %v", got)
	}
	// The annex's rule takes letters outside ASCII: the XML carries the
	// addresses as given (the mailer writes them as its server can take).
	intl := strings.Replace(validFE, "a@cliente.cr;b@cliente.cr", "josé@ñandú.cr;b@cliente.cr", 1)
	if intl == validFE {
		t.Fatal("the fixture's addresses moved")
	}
	if req, err := DecodeSendRequest([]byte(intl)); err != nil {
		t.Fatal(err)
	} else if d, err := NewDocument(req, testIssuer(t)); err != nil {
		t.Errorf("an address outside ASCII: %v", err)
	} else if got := d.Receptor.CorreoElectronico; len(got) != 2 || got[0] != "josé@ñandú.cr" {
		t.Errorf("an address outside ASCII: receptor e-mails = %v", got)
	}
	if u := doc.Receptor.Ubicacion; u == nil || u.Canton != "01" || u.Distrito != "02" {
		t.Errorf("ubicacion = %+v, want canton 01 district 02", u)
	}
	if doc.FechaEmision.Format("2006-01-02T15:04:05-07:00") != "2026-11-21T14:03:00-06:00" {
		t.Errorf("FechaEmision = %v", doc.FechaEmision)
	}
	if req.TerminalOrDefault() != "00001" || doc.CodigoActividadEmisor != "522003" || doc.ProveedorSistemas != "3101123456" {
		t.Errorf("terminal %q activity %q provider %q", req.TerminalOrDefault(), doc.CodigoActividadEmisor, doc.ProveedorSistemas)
	}
	eq(t, "TotalComprobante", doc.ResumenFactura.TotalComprobante, "3815.2755")
}

func TestNewDocumentFECSwapsParties(t *testing.T) {
	body := mutate(t, func(m map[string]any) {
		m["tipo_documento"] = "08"
		m["informacionReferencia"] = []any{map[string]any{"tipoDoc": "06", "numero": "CT-1", "fechaEmision": "2026-11-01T00:00:00",
			"codigo": "04", "razon": "Compra a proveedor no inscrito"}}
	})
	req, err := DecodeSendRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := NewDocument(req, testIssuer(t))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Emisor.Identificacion.Numero != "114440555" || doc.Receptor.Identificacion.Numero != "3101123456" {
		t.Fatalf("FEC: emisor %v receptor %v; want the seller as emisor and the company as receptor",
			doc.Emisor.Identificacion, doc.Receptor.Identificacion)
	}
	if doc.CodigoActividadReceptor != "522003" {
		t.Errorf("FEC CodigoActividadReceptor = %q, want the company's activity", doc.CodigoActividadReceptor)
	}
	if r := doc.InformacionReferencia[0]; r.TipoDocIR != "06" || r.FechaEmisionIR.IsZero() {
		t.Errorf("v4.3 spellings tipoDoc/fechaEmision not accepted: %+v", r)
	}
}

// TestNewDocumentFECSellerID: the seller of an FEC is the submission's
// JSON emisor, which the reception API caps at 12 characters, while the
// XML would take a foreign id of up to 20; the request is refused at the
// door rather than by the tax authority.
func TestNewDocumentFECSellerID(t *testing.T) {
	tests := []struct {
		name   string
		numero string
		bad    bool
	}{
		{"ok/12 characters", "GB1234567890", false},
		{"error/13 characters", "GB12345678901", true},
		{"error/20 characters", "GB123456789012345678", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := sendErrors(t, mutate(t, func(m map[string]any) {
				m["tipo_documento"] = "08"
				r := obj(m, "receptor")
				delete(r, "ubicacion")
				r["identificacion"] = map[string]any{"tipo": "05", "numero": tt.numero}
				r["otrasSenasExtranjero"] = "10 Downing Street, London"
				m["informacionReferencia"] = []any{map[string]any{"tipoDocIR": "16", "numero": "CT-1", "fechaEmisionIR": "2026-11-01T00:00:00",
					"codigo": "04", "razon": "Compra en el exterior"}}
			}))
			if !tt.bad {
				if errs != nil {
					t.Fatalf("errors %v, want none", errs)
				}
				return
			}
			const path = "ReceptorRequest.Identificacion.Numero"
			if msgs := strings.Join(errs[path], " | "); len(errs) != 1 || !strings.Contains(msgs, "at most 12 characters") {
				t.Fatalf("errors %v, want only one on %s about the reception API's 12 characters", errs, path)
			}
		})
	}
}

// TestReceptorIDDigits pins both bounds of every national identification
// type (nota 4): one digit fewer or more than allowed is refused.
func TestReceptorIDDigits(t *testing.T) {
	tests := []struct {
		tipo   string
		lo, hi int
	}{
		{"01", 9, 9},   // cédula física
		{"02", 10, 10}, // cédula jurídica
		{"03", 11, 12}, // DIMEX
		{"04", 10, 10}, // NITE
	}
	for _, tt := range tests {
		for n := tt.lo - 1; n <= tt.hi+1; n++ {
			ok := n >= tt.lo && n <= tt.hi
			name := fmt.Sprintf("error/%s of %d digits", tt.tipo, n)
			if ok {
				name = fmt.Sprintf("ok/%s of %d digits", tt.tipo, n)
			}
			t.Run(name, func(t *testing.T) {
				errs := sendErrors(t, mutate(t, func(m map[string]any) {
					obj(m, "receptor")["identificacion"] = map[string]any{"tipo": tt.tipo, "numero": strings.Repeat("1", n)}
				}))
				if got := len(errs["ReceptorRequest.Identificacion.Numero"]) == 0; got != ok {
					t.Fatalf("accepted = %v, want %v; errors %v", got, ok, errs)
				}
			})
		}
	}
}

func TestValidateSendErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		path   string
		frag   string
	}{
		{"error/missing id_externo", func(m map[string]any) { delete(m, "id_externo") }, "id_externo", "required"},
		{"error/unknown document type", func(m map[string]any) { m["tipo_documento"] = "05" }, "tipo_documento", "must be one of"},
		{"error/clave of another type", func(m map[string]any) {
			m["clave"] = "50621112600310112345600100001040000000001100000001"
		}, "clave", "does not match tipo_documento"},
		{"error/terminal too long", func(m map[string]any) { m["terminal"] = "123456" }, "terminal", "5 digits"},
		{"error/situación", func(m map[string]any) { m["situacion"] = 4 }, "situacion", "1 (normal)"},
		{"error/bad date", func(m map[string]any) { m["fecha_emision"] = "21/11/2026" }, "fecha_emision", "date-time"},
		{"error/condición for REP only", func(m map[string]any) { m["condicion_venta"] = "09" }, "condicion_venta", "not a nota-5 code"},
		{"error/credit without term", func(m map[string]any) { m["condicion_venta"] = "02" }, "plazo_credito", "required"},
		{"error/otros without description", func(m map[string]any) { m["condicion_venta"] = "99" }, "condicion_venta_otros", "required"},
		{"error/FE without receptor", func(m map[string]any) { delete(m, "receptor") }, "ReceptorRequest", "required"},
		{"error/cédula física of 8 digits", func(m map[string]any) {
			obj(obj(m, "receptor"), "identificacion")["numero"] = "11444055"
		}, "ReceptorRequest.Identificacion.Numero", "9 digits"},
		{"error/cédula jurídica with dashes", func(m map[string]any) {
			obj(obj(m, "receptor"), "identificacion")["tipo"] = "02"
			obj(obj(m, "receptor"), "identificacion")["numero"] = "3-101-123456"
		}, "ReceptorRequest.Identificacion.Numero", "10 digits"},
		{"error/cédula física with a leading zero", func(m map[string]any) {
			obj(obj(m, "receptor"), "identificacion")["numero"] = "014440555"
		}, "ReceptorRequest.Identificacion.Numero", "without leading zero"},
		{"error/DIMEX with a leading zero", func(m map[string]any) {
			obj(obj(m, "receptor"), "identificacion")["tipo"] = "03"
			obj(obj(m, "receptor"), "identificacion")["numero"] = "015581234567"
		}, "ReceptorRequest.Identificacion.Numero", "without leading zero"},
		{"error/DIMEX of 10 digits", func(m map[string]any) {
			obj(obj(m, "receptor"), "identificacion")["tipo"] = "03"
			obj(obj(m, "receptor"), "identificacion")["numero"] = "1558123456"
		}, "ReceptorRequest.Identificacion.Numero", "11 or 12"},
		{"error/NITE of 9 digits", func(m map[string]any) {
			obj(obj(m, "receptor"), "identificacion")["tipo"] = "04"
			obj(obj(m, "receptor"), "identificacion")["numero"] = "100012345"
		}, "ReceptorRequest.Identificacion.Numero", "NITE has 10"},
		{"error/unknown identification type", func(m map[string]any) {
			obj(obj(m, "receptor"), "identificacion")["tipo"] = "07"
		}, "ReceptorRequest.Identificacion.Tipo", "must be 01"},
		{"error/e-mail list with a space", func(m map[string]any) {
			obj(m, "receptor")["correoElectronico"] = "a@cliente.cr; b@cliente.cr"
		}, "ReceptorRequest.CorreoElectronico", "without spaces"},
		{"error/invalid e-mail", func(m map[string]any) {
			obj(m, "receptor")["correoElectronico"] = "a@cliente.cr;no-es-correo"
		}, "ReceptorRequest.CorreoElectronico", "not a valid e-mail"},
		{"error/an e-mail without a dot in its domain", func(m map[string]any) {
			obj(m, "receptor")["correoElectronico"] = "josé@localhost"
		}, "ReceptorRequest.CorreoElectronico", "not a valid e-mail"},
		{"error/too many e-mails", func(m map[string]any) {
			obj(m, "receptor")["correoElectronico"] = "a@x.cr;b@x.cr;c@x.cr;d@x.cr;e@x.cr"
		}, "ReceptorRequest.CorreoElectronico", "at most 4"},
		{"error/unknown district", func(m map[string]any) {
			obj(obj(m, "receptor"), "ubicacion")["distrito"] = "99"
		}, "ReceptorRequest.Ubicacion.Distrito", "nota-14"},
		{"error/short otras señas", func(m map[string]any) {
			obj(obj(m, "receptor"), "ubicacion")["otrasSenas"] = "x"
		}, "ReceptorRequest.Ubicacion.OtrasSenas", "between 5 and 250"},
		{"error/short phone", func(m map[string]any) {
			obj(obj(m, "receptor"), "telefono")["numTelefono"] = "8888"
		}, "ReceptorRequest.Telefono.NumTelefono", "8 to 20"},
		{"error/foreign address for a national", func(m map[string]any) {
			obj(m, "receptor")["otrasSenasExtranjero"] = "Somewhere abroad"
		}, "ReceptorRequest.OtrasSenasExtranjero", "tipo 05"},
		{"error/short receptor name", func(m map[string]any) { obj(m, "receptor")["nombre"] = "Al" }, "ReceptorRequest.Nombre", "between 3 and 100"},
		{"error/unknown unit", func(m map[string]any) { line0(m)["unidadMedida"] = "unid" }, "detalleServicio[0].unidadMedida", "nota-15"},
		{"error/short description", func(m map[string]any) { line0(m)["detalle"] = "x" }, "detalleServicio[0].detalle", "between 3 and 200"},
		{"error/line numbers out of order", func(m map[string]any) { line0(m)["numeroLinea"] = 2 }, "detalleServicio[0].numeroLinea", "must be 1"},
		{"error/quantity not a number", func(m map[string]any) { line0(m)["cantidad"] = "tres" }, "detalleServicio[0].cantidad", "must be a number"},
		{"error/rate does not match", func(m map[string]any) {
			line0(m)["impuesto"].([]any)[0].(map[string]any)["codigoTarifaIVA"] = "04"
		}, "detalleServicio[0].impuesto[0].tarifa", "expected 4"},
		{"error/discount 99 without its description", func(m map[string]any) {
			line0(m)["descuento"].([]any)[0].(map[string]any)["codigoDescuento"] = "99"
		}, "detalleServicio[0].descuento[0].codigoDescuentoOTRO", "required"},
		{"error/exoneration incomplete", func(m map[string]any) {
			line0(m)["impuesto"].([]any)[0].(map[string]any)["exoneracion"] = map[string]any{"tipoDocumentoEX1": "02", "tarifaExonerada": 13}
		}, "detalleServicio[0].impuesto[0].exoneracion.articulo", "required"},
		{"error/exoneration date", func(m map[string]any) {
			line0(m)["impuesto"].([]any)[0].(map[string]any)["exoneracion"] = map[string]any{"tipoDocumentoEX1": "04", "numeroDocumento": "AL-1",
				"nombreInstitucion": "01", "fechaEmisionEX": "ayer", "tarifaExonerada": 13}
		}, "detalleServicio[0].impuesto[0].exoneracion.fechaEmisionEX", "date-time"},
		{"error/note-only exoneration type", func(m map[string]any) {
			line0(m)["impuesto"].([]any)[0].(map[string]any)["exoneracion"] = map[string]any{"tipoDocumentoEX1": "05", "numeroDocumento": "AL-1",
				"nombreInstitucion": "01", "fechaEmisionEX": "2026-01-01T00:00:00", "tarifaExonerada": 13}
		}, "detalleServicio[0].impuesto[0].exoneracion.tipoDocumentoEX1", "credit and debit notes"},
		{"error/no payment on a cash sale", func(m map[string]any) { delete(obj(m, "resumenFactura"), "medioPago") }, "resumenFactura.medioPago", "required"},
		{"error/third-party charge without the third party", func(m map[string]any) {
			m["otrosCargos"] = []any{map[string]any{"tipoDocumentoOC": "04", "detalle": "Flete", "montoCargo": 10}}
		}, "otrosCargos[0].identificacionTercero", "required"},
		{"error/credit note without reference", func(m map[string]any) { m["tipo_documento"] = "03" }, "informacionReferencia", "at least one"},
		{"error/reference numero not a clave", func(m map[string]any) {
			m["tipo_documento"] = "03"
			m["informacionReferencia"] = []any{map[string]any{"tipoDocIR": "01", "numero": "123", "fechaEmisionIR": "2026-11-01T00:00:00",
				"codigo": "01", "razon": "Anula"}}
		}, "informacionReferencia[0].numero", "50-digit clave"},
		{"error/reference code 12 outside a credit note", func(m map[string]any) {
			m["tipo_documento"] = "02"
			m["informacionReferencia"] = []any{map[string]any{"tipoDocIR": "06", "numero": "CT-1", "fechaEmisionIR": "2026-11-01T00:00:00",
				"codigo": "12", "razon": "Ajuste"}}
		}, "informacionReferencia[0].codigo", "only allowed in a credit note"},
		{"error/FEC seller without address", func(m map[string]any) {
			m["tipo_documento"] = "08"
			delete(obj(m, "receptor"), "ubicacion")
			m["informacionReferencia"] = []any{map[string]any{"tipoDocIR": "06", "numero": "CT-1", "fechaEmisionIR": "2026-11-01T00:00:00",
				"codigo": "04", "razon": "Compra"}}
		}, "ReceptorRequest.Ubicacion", "required"},
		{"error/FEC foreign seller without reference 16", func(m map[string]any) {
			m["tipo_documento"] = "08"
			r := obj(m, "receptor")
			delete(r, "ubicacion")
			r["identificacion"] = map[string]any{"tipo": "05", "numero": "GB12345"}
			m["informacionReferencia"] = []any{map[string]any{"tipoDocIR": "06", "numero": "CT-1", "fechaEmisionIR": "2026-11-01T00:00:00",
				"codigo": "04", "razon": "Compra"}}
		}, "informacionReferencia", "type 16"},
		{"error/export goods without tariff heading", func(m map[string]any) { m["tipo_documento"] = "09" }, "detalleServicio[0].partidaArancelaria", "required"},
		{"error/tiquete with a transaction type", func(m map[string]any) {
			m["tipo_documento"] = "04"
			line0(m)["tipoTransaccion"] = "01"
		}, "detalleServicio[0].tipoTransaccion", "Tiquete"},
		{"error/wrong JSON type", func(m map[string]any) { m["detalleServicio"] = "no" }, "detalleServicio", "must be a JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := sendErrors(t, mutate(t, tt.mutate))
			msgs := strings.Join(errs[tt.path], " | ")
			if !strings.Contains(msgs, tt.frag) {
				t.Fatalf("errors on %s = %q, want one containing %q; all: %v", tt.path, msgs, tt.frag, errs)
			}
		})
	}
}

// TestValidateSendAllErrorsAtOnce: metadata, receptor, structural and
// calculation errors of one request come back together.
func TestValidateSendAllErrorsAtOnce(t *testing.T) {
	body := mutate(t, func(m map[string]any) {
		delete(m, "id_externo")
		m["situacion"] = "9"
		obj(m, "receptor")["correoElectronico"] = "no es correo"
		obj(obj(m, "receptor"), "identificacion")["numero"] = "1"
		l := line0(m)
		l["unidadMedida"] = "xx"
		l["cantidad"] = -1
		l["impuesto"].([]any)[0].(map[string]any)["tarifa"] = 4
		obj(m, "resumenFactura")["medioPago"] = []any{map[string]any{"tipoMedioPago": "01", "totalMedioPago": 1},
			map[string]any{"tipoMedioPago": "02", "totalMedioPago": 1}}
		m["detalleServicio"] = append(m["detalleServicio"].([]any), map[string]any{"numeroLinea": 2, "codigoCABYS": "8314100000000",
			"cantidad": 1, "unidadMedida": "Sp", "detalle": "Servicio", "precioUnitario": 100,
			"impuesto": []any{map[string]any{"codigo": "01", "codigoTarifaIVA": "06"}}})
	})
	errs := sendErrors(t, body)
	for _, p := range []string{
		"id_externo", "situacion", "ReceptorRequest.CorreoElectronico", "ReceptorRequest.Identificacion.Numero",
		"detalleServicio[0].unidadMedida", "detalleServicio[0].cantidad", "detalleServicio[0].impuesto[0].tarifa",
		"detalleServicio[1].impuesto[0].codigoTarifaIVA",
	} {
		if len(errs[p]) == 0 {
			t.Errorf("no error on %s; got %v", p, errs)
		}
	}
}

func TestDecodeSendRequest(t *testing.T) {
	tests := []struct {
		name string
		body string
		path string
	}{
		{"error/empty", "", "body"},
		{"error/array", "[]", "body"},
		{"error/syntax", `{"id_externo": }`, "body"},
		{"error/type", `{"id_externo": "x", "receptor": 5}`, "ReceptorRequest"},
		{"error/nested type", `{"detalleServicio": [{"numeroLinea": "uno"}]}`, "detalleServicio[0].numeroLinea"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeSendRequest([]byte(tt.body))
			ve, ok := err.(*ValidationError)
			if !ok || !ve.Has(tt.path) {
				t.Fatalf("DecodeSendRequest(%q) = %v, want an error on %s", tt.body, err, tt.path)
			}
		})
	}
	// Case-insensitive field names and numbers for codes.
	req, err := DecodeSendRequest([]byte(`{"ID_EXTERNO": "a", "Tipo_Documento": 1, "RECEPTOR": {"Nombre": "Ana María"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.IDExterno != "a" || req.TipoDocumento != "1" || req.TipoDocumento.Code() != "01" || req.Receptor == nil || req.Receptor.Nombre != "Ana María" {
		t.Fatalf("case-insensitive decoding failed: %+v", req)
	}
}

func TestNewDocumentChecksTheIssuer(t *testing.T) {
	req, err := DecodeSendRequest([]byte(validFE))
	if err != nil {
		t.Fatal(err)
	}
	is := testIssuer(t)
	is.Identificacion.Numero = "3-101-123456"
	is.Ubicacion = &Ubicacion{Provincia: "1", Canton: "1", Distrito: "1", OtrasSenas: "Avenida central"}
	is.CorreoElectronico = nil
	is.ProveedorSistemas = ""
	_, err = NewDocument(req, is)
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("err = %v, want *ValidationError", err)
	}
	for _, p := range []string{"emisor.Identificacion.Numero", "emisor.CorreoElectronico"} {
		if !ve.Has(p) {
			t.Errorf("no error on %s: %v", p, ve.FieldErrors())
		}
	}
	if ve.Has("emisor.Ubicacion.Canton") || ve.Has("emisor.Ubicacion.Distrito") {
		t.Errorf("one-digit canton/district codes should be padded, got %v", ve.FieldErrors())
	}

	// A valid company without a provider id issues with its own id.
	is = testIssuer(t)
	is.ProveedorSistemas = ""
	req, _ = DecodeSendRequest([]byte(validFE))
	doc, err := NewDocument(req, is)
	if err != nil {
		t.Fatal(err)
	}
	if doc.ProveedorSistemas != "3101123456" {
		t.Errorf("ProveedorSistemas = %q, want the company's own id", doc.ProveedorSistemas)
	}
}
