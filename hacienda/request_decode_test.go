package hacienda

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"facturad/hacienda/msg"
)

// richFE is validFE with every optional structure present (exoneration,
// other charges, references, commercial codes, Otros), as a base for the
// decoding tests. It decodes; it need not validate.
const richFE = `{
  "id_externo": "pedido-2002", "tipo_documento": "03", "terminal": 1, "situacion": "1", "clave": "",
  "registro_fiscal8707": "", "codigo_actividad_emisor": "522003", "codigo_actividad_receptor": "",
  "fecha_emision": "2026-11-21T14:03:00", "condicion_venta": "01", "condicion_venta_otros": "", "plazo_credito": "",
  "receptor": {
    "nombre": "Cliente de Prueba", "nombreComercial": "Cliente", "identificacionExtranjero": "",
    "identificacion": {"tipo": "01", "numero": "114440555"},
    "ubicacion": {"provincia": 1, "canton": 1, "distrito": "02", "barrio": "Carmen", "otrasSenas": "Frente al parque central"},
    "otrasSenasExtranjero": "", "telefono": "8888-7777", "correoElectronico": "a@cliente.cr"
  },
  "detalleServicio": [
    {"numeroLinea": 1, "codigoCABYS": "2392000000000", "codigoComercial": [{"tipo": "01", "codigo": "A-1"}],
     "cantidad": 3, "unidadMedida": "Unid", "detalle": "Mercancía", "numeroVINoSerie": ["VIN1"],
     "precioUnitario": 1250.5, "descuento": [{"porcentajeDescuento": 10, "codigoDescuento": "07", "naturalezaDescuento": "Promo"}],
     "impuesto": [{"codigo": "01", "codigoTarifaIVA": "08", "tarifa": 13,
       "exoneracion": {"tipoDocumentoEX1": "04", "numeroDocumento": "AL-1", "articulo": 1, "inciso": "2",
         "nombreInstitucion": "01", "fechaEmisionEX": "2026-01-01T00:00:00", "tarifaExonerada": 13}}]},
    {"numeroLinea": 2, "codigoCABYS": "8314100000000", "cantidad": 1, "unidadMedida": "Sp", "detalle": "Servicio",
     "precioUnitario": 100, "impuesto": [{"codigo": "04", "datosImpuestoEspecifico": {"cantidadUnidadMedida": 1, "porcentaje": 5}},
       {"codigo": "01", "codigoTarifaIVA": "08"}]}
  ],
  "otrosCargos": [{"tipoDocumentoOC": "04", "identificacionTercero": {"tipo": "01", "numero": "114440555"},
    "nombreTercero": "Tercero SA", "detalle": "Flete", "montoCargo": 10}],
  "resumenFactura": {"codigoTipoMoneda": {"codigoMoneda": "USD", "tipoCambio": "510.5"},
    "medioPago": [{"tipoMedioPago": "01", "totalMedioPago": 5}, {"tipoMedioPago": "99", "medioPagoOtros": "Trueque"}]},
  "informacionReferencia": [{"tipoDoc": 1, "numero": "50601", "fechaEmision": "2026-11-01", "codigo": 1, "razon": "Anula"},
    {"tipoDocIR": "99", "tipoDocRefOTRO": "Contrato", "codigo": "99", "codigoReferenciaOTRO": "Ajuste", "razon": "Otro"}],
  "otros": {"otroTexto": ["nota", {"codigo": "obs", "valor": "texto"}], "otroContenido": [{"valor": "x"}]}
}`

// twoLineFE is validFE with a second line, for paths with index 1.
func twoLineFE(m map[string]any) {
	lines := m["detalleServicio"].([]any)
	l2 := map[string]any{"numeroLinea": 2, "codigoCABYS": "8314100000000", "cantidad": 1, "unidadMedida": "Sp",
		"detalle": "Servicio", "precioUnitario": 100, "impuesto": []any{map[string]any{"codigo": "01", "codigoTarifaIVA": "08", "tarifa": 13}}}
	m["detalleServicio"] = append(lines, l2)
}

func tax0(m map[string]any, line int) map[string]any {
	return m["detalleServicio"].([]any)[line].(map[string]any)["impuesto"].([]any)[0].(map[string]any)
}

func TestDecodeSendRequestTypeErrors(t *testing.T) {
	validExoneracion := func() map[string]any {
		return map[string]any{"tipoDocumentoEX1": "04", "numeroDocumento": "AL-1", "nombreInstitucion": "01",
			"fechaEmisionEX": "2026-01-01T00:00:00", "tarifaExonerada": 13}
	}
	noteRef := func(m map[string]any, ref map[string]any) {
		m["tipo_documento"] = "03"
		m["informacionReferencia"] = []any{ref}
	}
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		// want maps every expected path to a fragment of one of its
		// messages; no other path may have an error.
		want map[string]string
	}{
		{"error/line field", func(m map[string]any) { line0(m)["numeroLinea"] = "1" },
			map[string]string{"detalleServicio[0].numeroLinea": "must be a JSON number, not a string"}},
		{"error/line field not whole", func(m map[string]any) { line0(m)["numeroLinea"] = 1.5 },
			map[string]string{"detalleServicio[0].numeroLinea": "must be a whole number"}},
		{"error/second line's tax", func(m map[string]any) {
			twoLineFE(m)
			tax0(m, 1)["codigoTarifaIVA"] = 8
		}, map[string]string{"detalleServicio[1].impuesto[0].codigoTarifaIVA": "must be a JSON string, not a number"}},
		{"error/discount", func(m map[string]any) {
			line0(m)["descuento"].([]any)[0].(map[string]any)["codigoDescuento"] = 7
		}, map[string]string{"detalleServicio[0].descuento[0].codigoDescuento": "must be a JSON string, not a number"}},
		{"error/discount not an object", func(m map[string]any) { line0(m)["descuento"] = []any{"10%"} },
			map[string]string{"detalleServicio[0].descuento[0]": "must be a JSON object, not a string"}},
		{"error/tax codigo", func(m map[string]any) { tax0(m, 0)["codigo"] = 1 },
			map[string]string{"detalleServicio[0].impuesto[0].codigo": "must be a JSON string, not a number"}},
		{"error/exoneration field", func(m map[string]any) {
			x := validExoneracion()
			x["numeroDocumento"] = 12345
			tax0(m, 0)["exoneracion"] = x
		}, map[string]string{"detalleServicio[0].impuesto[0].exoneracion.numeroDocumento": "must be a JSON string, not a number"}},
		{"error/exoneration not an object", func(m map[string]any) { tax0(m, 0)["exoneracion"] = []any{validExoneracion()} },
			map[string]string{"detalleServicio[0].impuesto[0].exoneracion": "must be a JSON object, not an array"}},
		{"error/NUL in a line's detalle", func(m map[string]any) { line0(m)["detalle"] = "Mercancía\x00" },
			map[string]string{"detalleServicio[0].detalle": "U+0000 at position 10, which an XML document cannot carry"}},
		{"error/escape character in a discount's nature", func(m map[string]any) {
			line0(m)["descuento"].([]any)[0].(map[string]any)["naturalezaDescuento"] = "\x1b[1mPromo"
		}, map[string]string{"detalleServicio[0].descuento[0].naturalezaDescuento": "U+001B"}},
		{"error/U+FFFF in the receptor's name", func(m map[string]any) { obj(m, "receptor")["nombre"] = "Cliente\uFFFF" },
			map[string]string{"ReceptorRequest.Nombre": "U+FFFF"}},
		{"error/U+FFFE in a reference's reason", func(m map[string]any) {
			noteRef(m, map[string]any{"tipoDocIR": "01", "numero": "50601012600310112345600100001010000000001100000001", "fechaEmisionIR": "2026-11-01T00:00:00", "codigo": "01", "razon": "\uFFFE"})
		}, map[string]string{"informacionReferencia[0].razon": "U+FFFE"}},
		{"error/control character beside a type error", func(m map[string]any) {
			line0(m)["numeroLinea"] = "1"
			line0(m)["detalle"] = "\a"
		}, map[string]string{"detalleServicio[0].numeroLinea": "must be a JSON number", "detalleServicio[0].detalle": "U+0007"}},
		{"error/receptor field", func(m map[string]any) { obj(m, "receptor")["nombre"] = 5 },
			map[string]string{"ReceptorRequest.Nombre": "must be a JSON string, not a number"}},
		{"error/receptor e-mail list", func(m map[string]any) { obj(m, "receptor")["correoElectronico"] = []any{"a@cliente.cr"} },
			map[string]string{"ReceptorRequest.CorreoElectronico": "must be a JSON string, not an array"}},
		{"error/receptor location", func(m map[string]any) { obj(obj(m, "receptor"), "ubicacion")["otrasSenas"] = true },
			map[string]string{"ReceptorRequest.Ubicacion.OtrasSenas": "must be a JSON string, not a boolean"}},
		{"error/receptor identification", func(m map[string]any) { obj(m, "receptor")["identificacion"] = "114440555" },
			map[string]string{"ReceptorRequest.Identificacion": "must be a JSON object, not a string"}},
		{"error/receptor not an object", func(m map[string]any) { m["receptor"] = "Cliente" },
			map[string]string{"ReceptorRequest": "must be a JSON object, not a string"}},
		{"error/means of payment", func(m map[string]any) {
			obj(m, "resumenFactura")["medioPago"].([]any)[0].(map[string]any)["tipoMedioPago"] = 1
		}, map[string]string{"resumenFactura.medioPago[0].tipoMedioPago": "must be a JSON string, not a number"}},
		{"error/currency", func(m map[string]any) { obj(m, "resumenFactura")["codigoTipoMoneda"] = "CRC" },
			map[string]string{"resumenFactura.codigoTipoMoneda": "must be a JSON object, not a string"}},
		{"error/reference field", func(m map[string]any) {
			noteRef(m, map[string]any{"tipoDocIR": "01", "numero": strings.Repeat("5", 50), "fechaEmisionIR": "2026-11-01T00:00:00",
				"codigo": "01", "razon": 42})
		}, map[string]string{"informacionReferencia[0].razon": "must be a JSON string, not a number"}},
		{"error/reference with v4.3 spellings", func(m map[string]any) {
			noteRef(m, map[string]any{"tipoDoc": 1, "numero": strings.Repeat("5", 50), "fechaEmision": "2026-11-01",
				"codigo": 1, "tipoDocRefOTRO": []any{}})
		}, map[string]string{"informacionReferencia[0].tipoDocRefOTRO": "must be a JSON string, not an array",
			"informacionReferencia[0].razon": "is required"}},
		{"error/activity left to the company's records", func(m map[string]any) {
			delete(m, "codigo_actividad_emisor")
			line0(m)["numeroLinea"] = "1"
		}, map[string]string{"detalleServicio[0].numeroLinea": "must be a JSON number, not a string"}},
		{"error/metadata", func(m map[string]any) { m["id_externo"] = 1001 },
			map[string]string{"id_externo": "must be a JSON string, not a number"}},
		{"error/body part not an array", func(m map[string]any) { m["detalleServicio"] = map[string]any{"numeroLinea": 1} },
			map[string]string{"detalleServicio": "must be a JSON array, not an object"}},
		{"error/keys in another case", func(m map[string]any) {
			l := line0(m)
			delete(l, "numeroLinea")
			l["NUMEROLINEA"] = "uno"
			m["DetalleServicio"] = m["detalleServicio"]
			delete(m, "detalleServicio")
		}, map[string]string{"detalleServicio[0].numeroLinea": "must be a JSON number, not a string"}},
		{"error/several at once with validation errors", func(m map[string]any) {
			twoLineFE(m)
			m["id_externo"] = 7
			m["condicion_venta"] = "77"
			r := obj(m, "receptor")
			r["nombre"] = 5
			r["correoElectronico"] = "no-es-correo"
			line0(m)["numeroLinea"] = "1"
			line0(m)["cantidad"] = -1
			line0(m)["descuento"].([]any)[0].(map[string]any)["codigoDescuento"] = 7
			tax0(m, 1)["codigo"] = 1
			tax0(m, 1)["tarifa"] = 4
			x := validExoneracion()
			x["nombreInstitucion"] = 1
			tax0(m, 0)["exoneracion"] = x
			obj(m, "resumenFactura")["medioPago"].([]any)[0].(map[string]any)["medioPagoOtros"] = false
		}, map[string]string{
			"id_externo":                                                   "must be a JSON string, not a number",
			"ReceptorRequest.Nombre":                                       "must be a JSON string, not a number",
			"detalleServicio[0].numeroLinea":                               "must be a JSON number, not a string",
			"detalleServicio[0].descuento[0].codigoDescuento":              "must be a JSON string, not a number",
			"detalleServicio[0].impuesto[0].exoneracion.nombreInstitucion": "must be a JSON string, not a number",
			"detalleServicio[1].impuesto[0].codigo":                        "must be a JSON string, not a number",
			"resumenFactura.medioPago[0].medioPagoOtros":                   "must be a JSON string, not a boolean",
			// Ordinary validation errors of the same body.
			"condicion_venta":                   "nota-5",
			"ReceptorRequest.CorreoElectronico": "not a valid e-mail address",
			"detalleServicio[0].cantidad":       "",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeSendRequest(mutate(t, tt.mutate))
			if req != nil {
				t.Fatalf("a body with values of the wrong type decoded: %+v", req)
			}
			ve, ok := err.(*ValidationError)
			if !ok {
				t.Fatalf("err = %v (%T), want *ValidationError", err, err)
			}
			got := ve.FieldErrors()
			for p, frag := range tt.want {
				if msgs := strings.Join(got[p], " | "); len(got[p]) == 0 || !strings.Contains(msgs, frag) {
					t.Errorf("%s: got %q, want a message containing %q", p, msgs, frag)
				}
			}
			for _, p := range ve.Paths() {
				if _, ok := tt.want[p]; !ok {
					t.Errorf("unexpected error on %s: %q", p, got[p])
				}
			}
		})
	}
}

func TestDecodeCalculateRequestTypeErrors(t *testing.T) {
	body := `{"detalleServicio": [
	  {"codigoCABYS": "2392000000000", "cantidad": 1, "precioUnitario": 10, "impuesto": [{"codigo": "01", "codigoTarifaIVA": "08", "tarifa": 4}]},
	  {"numeroLinea": "2", "codigoCABYS": "2392000000000", "cantidad": 1, "precioUnitario": 10,
	   "impuesto": [{"codigo": 1, "codigoTarifaIVA": "08"}, {"codigo": "01", "codigoTarifaIVA": "08",
	     "exoneracion": {"tipoDocumentoEX1": 4, "numeroDocumento": "AL-1", "nombreInstitucion": "01", "fechaEmisionEX": "2026-01-01", "tarifaExonerada": 13}}]}],
	 "otrosCargos": [{"tipoDocumentoOC": 6, "detalle": "Servicio", "montoCargo": 5}],
	 "resumenFactura": {"codigoTipoMoneda": {"codigoMoneda": "CRC", "tipoCambio": 1}, "medioPago": [{"tipoMedioPago": ["01"]}]}}`
	_, err := DecodeCalculateRequest([]byte(body))
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("err = %v (%T), want *ValidationError", err, err)
	}
	want := map[string]string{
		"detalleServicio[1].numeroLinea":                              "must be a JSON number, not a string",
		"detalleServicio[1].impuesto[0].codigo":                       "must be a JSON string, not a number",
		"detalleServicio[1].impuesto[1].exoneracion.tipoDocumentoEX1": "must be a JSON string, not a number",
		"otrosCargos[0].tipoDocumentoOC":                              "must be a JSON string, not a number",
		"resumenFactura.medioPago[0].tipoMedioPago":                   "must be a JSON string, not an array",
		"detalleServicio[0].impuesto[0].tarifa":                       "does not match codigoTarifaIVA 08",
	}
	got := ve.FieldErrors()
	for p, frag := range want {
		if msgs := strings.Join(got[p], " | "); !strings.Contains(msgs, frag) || len(got[p]) == 0 {
			t.Errorf("%s: got %q, want a message containing %q", p, msgs, frag)
		}
	}
	for _, p := range ve.Paths() {
		if _, ok := want[p]; !ok {
			t.Errorf("unexpected error on %s: %q", p, got[p])
		}
	}
}

func TestDecodeBodyErrors(t *testing.T) {
	tests := []struct {
		name, body, frag string
	}{
		{"error/empty", "  ", "empty"},
		{"error/array", `[{"id_externo": "1"}]`, "must be a JSON object"},
		{"error/string", `"x"`, "must be a JSON object"},
		{"error/syntax", `{"id_externo": }`, "not valid JSON"},
		{"error/trailing data", `{"id_externo": "1"} {}`, "not valid JSON"},
		{"error/type error and syntax error", `{"id_externo": 1, "receptor": }`, "not valid JSON"},
		{"error/invalid UTF-8", "{\"id_externo\": \"caf\xe9\"}", "not valid UTF-8 (at byte 20)"},
		{"error/unpaired surrogate escape", `{"id_externo": "a\ud800b"}`, "unpaired surrogate escape at byte 18"},
		{"error/unpaired low surrogate", `{"receptor": {"nombre": "\udc00"}}`, "unpaired surrogate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, decode := range map[string]func([]byte) error{
				"send":      func(b []byte) error { _, err := DecodeSendRequest(b); return err },
				"calculate": func(b []byte) error { _, err := DecodeCalculateRequest(b); return err },
			} {
				ve, ok := decode([]byte(tt.body)).(*ValidationError)
				if !ok || ve.Len() != 1 || !strings.Contains(strings.Join(ve.FieldErrors()[bodyPath], "|"), tt.frag) {
					t.Errorf("%s: err = %v, want one error on %q containing %q", name, ve, bodyPath, tt.frag)
				}
			}
		})
	}
	// A key given twice: the walk sees only the last value, so the
	// decoder's own verdict is reported (without indexes, as it has none).
	_, err := DecodeSendRequest([]byte(`{"id_externo": 1, "id_externo": "a", "detalleServicio": [{"numeroLinea": "x", "numeroLinea": 1}]}`))
	if ve, ok := err.(*ValidationError); !ok || !ve.Has("id_externo") {
		t.Errorf("duplicated keys: err = %v, want an error on id_externo", err)
	}
	_, err1 := NewDocument(nil, testIssuer(t))
	_, err2 := CalculateAmounts(nil)
	for _, err := range []error{err1, err2} {
		if ve, ok := err.(*ValidationError); !ok || !ve.Has(bodyPath) {
			t.Errorf("nil request: err = %v, want an error on %q", err, bodyPath)
		}
	}
}

// TestLooseTypesComplete: every type reachable from the request structs
// that decodes itself is in looseTypes, and looseTypes holds nothing else,
// so that the walk of a refused body judges types as the decoder does.
func TestLooseTypesComplete(t *testing.T) {
	unmarshaler := reflect.TypeFor[json.Unmarshaler]()
	seen := map[reflect.Type]bool{}
	var visit func(reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if seen[t] {
			return
		}
		seen[t] = true
		rule, loose := looseTypes[t]
		if t.Kind() != reflect.Struct || rule.anyValue || (!loose && reflect.PointerTo(t).Implements(unmarshaler)) {
			return // it decodes itself: what is inside is its business
		}
		// The fields the decoder (or the type's own UnmarshalJSON)
		// reaches, as the walk sees them.
		for _, f := range jsonFields(t) {
			if !slices.ContainsFunc(rule.anyKeys, func(k string) bool { return strings.EqualFold(k, f.name) }) {
				visit(f.typ)
			}
		}
	}
	visit(reflect.TypeFor[SendDocumentRequest]())
	visit(reflect.TypeFor[CalculateRequest]())
	for typ := range seen {
		_, listed := looseTypes[typ]
		if reflect.PointerTo(typ).Implements(unmarshaler) && !listed {
			t.Errorf("%v has its own UnmarshalJSON but is not in looseTypes", typ)
		}
	}
	for typ := range looseTypes {
		if !reflect.PointerTo(typ).Implements(unmarshaler) {
			t.Errorf("looseTypes lists %v, which has no UnmarshalJSON", typ)
		}
		if !seen[typ] {
			t.Errorf("looseTypes lists %v, which no request reaches", typ)
		}
	}
}

// TestTypeWalkAgreesWithDecoder replaces every value of a rich body, one at
// a time, with values of every JSON type, and checks that the walk finds a
// mismatch exactly when encoding/json refuses the body, finds exactly one,
// and that the body without it decodes.
func TestTypeWalkAgreesWithDecoder(t *testing.T) {
	replacements := []any{"texto", json.Number("7"), json.Number("1.5"), json.Number("-3"), true, []any{}, []any{"x"},
		map[string]any{}, map[string]any{"valor": 1}}
	for _, base := range []struct {
		name string
		body string
		typ  reflect.Type
	}{
		{"send", richFE, reflect.TypeFor[SendDocumentRequest]()},
		{"calculate", calcBodyExample1, reflect.TypeFor[CalculateRequest]()},
	} {
		var spots int
		forEachValue(t, base.body, func(where string, mutated []byte) {
			spots++
			fresh := reflect.New(base.typ)
			refused := json.Unmarshal(mutated, fresh.Interface()) != nil
			typeErrs, err := decodeBody(mutated, reflect.New(base.typ).Interface(), nil)
			switch {
			case err != nil:
				t.Errorf("%s %s: body-level error %v", base.name, where, err)
			case refused && typeErrs.Len() != 1:
				t.Errorf("%s %s: the decoder refuses it; the walk found %v", base.name, where, typeErrs.FieldErrors())
			case !refused && typeErrs != nil:
				t.Errorf("%s %s: the decoder takes it; the walk found %v", base.name, where, typeErrs.FieldErrors())
			}
		}, replacements)
		if spots < 100 {
			t.Errorf("%s: only %d mutations tried", base.name, spots)
		}
	}
}

// forEachValue calls f with body where one value (object member or array
// element, at any depth) is replaced by each replacement.
func forEachValue(t *testing.T, body string, f func(where string, mutated []byte), replacements []any) {
	t.Helper()
	var count func(v any) int
	count = func(v any) int {
		n := 1
		switch x := v.(type) {
		case map[string]any:
			for _, c := range x {
				n += count(c)
			}
		case []any:
			for _, c := range x {
				n += count(c)
			}
		}
		return n
	}
	parse := func() any {
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	total := count(parse())
	for target := 1; target < total; target++ {
		for _, r := range replacements {
			tree := parse()
			n := 0
			where := ""
			var replace func(v any, path string) any
			replace = func(v any, path string) any {
				if n == target {
					n++
					where = path
					return r
				}
				n++
				switch x := v.(type) {
				case map[string]any:
					for _, k := range slices.Sorted(maps.Keys(x)) {
						x[k] = replace(x[k], path+"."+k)
					}
				case []any:
					for i := range x {
						x[i] = replace(x[i], idx(path, i))
					}
				}
				return v
			}
			tree = replace(tree, "$")
			b, err := json.Marshal(tree)
			if err != nil {
				t.Fatal(err)
			}
			f(where+" = "+string(mustJSON(r)), b)
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestWithTypeErrorsDropsCoveredPaths(t *testing.T) {
	typ, drop, keep := msg.BodyEmpty.With(), msg.NotANumber.With(), msg.Required.With()
	typeErrs := &ValidationError{Fields: map[string][]msg.Message{"detalleServicio[1].impuesto[0]": {typ}, "ReceptorRequest": {typ}}}
	others := &ValidationError{Fields: map[string][]msg.Message{
		"detalleServicio[1].impuesto[0]":        {drop},
		"detalleServicio[1].impuesto[0].codigo": {drop},
		"detalleServicio[1].impuesto[0]x":       {keep},
		"detalleServicio[1].impuesto":           {keep},
		"detalleServicio[1].impuesto[01]":       {keep},
		"ReceptorRequest.Nombre":                {drop},
		"ReceptorRequestX":                      {keep},
	}}
	ve := withTypeErrors(typeErrs, others).(*ValidationError)
	var kept []string
	for _, p := range ve.Paths() {
		if slices.ContainsFunc(ve.Fields[p], keep.Equal) {
			kept = append(kept, p)
		}
		if slices.ContainsFunc(ve.Fields[p], drop.Equal) {
			t.Errorf("%s kept a message it covers", p)
		}
	}
	if len(kept) != 4 || ve.Len() != 6 {
		t.Errorf("kept %v of %v", kept, ve.FieldErrors())
	}
	if ve.Message != DefaultValidationMessage {
		t.Errorf("message %q", ve.Message)
	}
}
