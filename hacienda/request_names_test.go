package hacienda

import (
	"encoding/json"
	"errors"
	"facturad/hacienda/msg"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestDecodeNamesRefused: each name a send body may not hold is refused on
// its exact path, with its message, and nothing else is said of it.
func TestDecodeNamesRefused(t *testing.T) {
	for _, tt := range []struct {
		name   string
		body   []byte
		path   string
		msg    string
		decode func([]byte) error
	}{
		{"error/misplaced discount amount", mutateJSON(t, richFE, func(m map[string]any) { line0(m)["montoDescuento"] = 10.4 }),
			"detalleServicio[0].montoDescuento", "is not a field here; it is a field of descuento", nil},
		{"error/top-level typo", mutateJSON(t, richFE, func(m map[string]any) { m["condicion_vent"] = "01" }),
			"condicion_vent", "is not a field of this call; did you mean condicion_venta?", nil},
		{"error/camel case for snake case", mutateJSON(t, richFE, func(m map[string]any) { m["plazoCredito"] = 30; delete(m, "plazo_credito") }),
			"plazoCredito", "is not a field of this call; did you mean plazo_credito?", nil},
		{"error/no suggestion", mutateJSON(t, richFE, func(m map[string]any) { m["xyzzy"] = 1 }),
			"xyzzy", "is not a field of this call", nil},
		{"error/receptor", mutateJSON(t, richFE, func(m map[string]any) { m["receptor"].(map[string]any)["foo"] = "x" }),
			"ReceptorRequest.Foo", "is not a field of this call", nil},
		{"error/receptor identification", mutateJSON(t, richFE, func(m map[string]any) {
			m["receptor"].(map[string]any)["identificacion"].(map[string]any)["tipoIdentificacion"] = "01"
		}), "ReceptorRequest.Identificacion.TipoIdentificacion", "is not a field of this call; did you mean tipo?", nil},
		{"error/receptor location", mutateJSON(t, richFE, func(m map[string]any) {
			m["receptor"].(map[string]any)["ubicacion"].(map[string]any)["otrasSeñas"] = "x"
		}), "ReceptorRequest.Ubicacion.OtrasSeñas", "is not a field of this call; did you mean otrasSenas?", nil},
		{"error/receptor phone", mutateJSON(t, richFE, func(m map[string]any) {
			m["receptor"].(map[string]any)["telefono"] = map[string]any{"codigoPais": "506", "numero": "88887777"}
		}), "ReceptorRequest.Telefono.Numero", "is not a field of this call", nil},
		{"error/discount", mutateJSON(t, richFE, func(m map[string]any) {
			line0(m)["descuento"].([]any)[0].(map[string]any)["porcentaje"] = 5
		}), "detalleServicio[0].descuento[0].porcentaje", "is not a field of this call; did you mean porcentajeDescuento?", nil},
		{"error/second line tax", mutateJSON(t, richFE, func(m map[string]any) {
			m["detalleServicio"].([]any)[1].(map[string]any)["impuesto"].([]any)[1].(map[string]any)["tarifaIVA"] = 13
		}), "detalleServicio[1].impuesto[1].tarifaIVA", "is not a field of this call; did you mean tarifa?", nil},
		{"error/exoneration", mutateJSON(t, richFE, func(m map[string]any) {
			line0(m)["impuesto"].([]any)[0].(map[string]any)["exoneracion"].(map[string]any)["porcentajeExoneracion"] = 13
		}), "detalleServicio[0].impuesto[0].exoneracion.porcentajeExoneracion", "is not a field of this call", nil},
		{"error/specific tax data", mutateJSON(t, richFE, func(m map[string]any) {
			m["detalleServicio"].([]any)[1].(map[string]any)["impuesto"].([]any)[0].(map[string]any)["datosImpuestoEspecifico"].(map[string]any)["porcentage"] = 5
		}), "detalleServicio[1].impuesto[0].datosImpuestoEspecifico.porcentage", "is not a field of this call; did you mean porcentaje?", nil},
		{"error/commercial code", mutateJSON(t, richFE, func(m map[string]any) {
			line0(m)["codigoComercial"].([]any)[0].(map[string]any)["codig"] = "01"
		}), "detalleServicio[0].codigoComercial[0].codig", "is not a field of this call; did you mean codigo?", nil},
		{"error/other charge", mutateJSON(t, richFE, func(m map[string]any) {
			m["otrosCargos"].([]any)[0].(map[string]any)["monto"] = 10
		}), "otrosCargos[0].monto", "is not a field of this call; did you mean montoCargo?", nil},
		{"error/other charge third party", mutateJSON(t, richFE, func(m map[string]any) {
			m["otrosCargos"].([]any)[0].(map[string]any)["identificacionTercero"].(map[string]any)["numro"] = "1"
		}), "otrosCargos[0].identificacionTercero.numro", "is not a field of this call; did you mean numero?", nil},
		{"error/means of payment", mutateJSON(t, richFE, func(m map[string]any) {
			m["resumenFactura"].(map[string]any)["medioPago"].([]any)[0].(map[string]any)["monto"] = 5
		}), "resumenFactura.medioPago[0].monto", "is not a field of this call", nil},
		{"error/currency", mutateJSON(t, richFE, func(m map[string]any) {
			m["resumenFactura"].(map[string]any)["codigoTipoMoneda"].(map[string]any)["tipoDeCambio"] = 1
		}), "resumenFactura.codigoTipoMoneda.tipoDeCambio", "is not a field of this call; did you mean tipoCambio?", nil},
		{"error/currency at the top", mutateJSON(t, richFE, func(m map[string]any) { m["codigoMoneda"] = "USD" }),
			"codigoMoneda", "is not a field here; it is a field of resumenFactura.codigoTipoMoneda", nil},
		{"error/reference", mutateJSON(t, richFE, func(m map[string]any) {
			m["informacionReferencia"].([]any)[1].(map[string]any)["fecha"] = "2026-01-01"
		}), "informacionReferencia[1].fecha", "is not a field of this call; did you mean fechaEmisionIR?", nil},
		{"error/other text", mutateJSON(t, richFE, func(m map[string]any) {
			m["otros"].(map[string]any)["otroContenido"].([]any)[0].(map[string]any)["value"] = "x"
		}), "otros.otroContenido[0].value", "is not a field of this call; did you mean valor?", nil},
		{"error/computed line total", mutateJSON(t, richFE, func(m map[string]any) { line0(m)["montoTotalLinea"] = 100 }),
			"detalleServicio[0].montoTotalLinea", msg.ComputedField.With().String(), nil},
		{"error/computed line total as text", mutateJSON(t, richFE, func(m map[string]any) { line0(m)["MontoTotalLinea"] = "100" }),
			"detalleServicio[0].montoTotalLinea", msg.ComputedField.With().String(), nil},
		{"error/computed tax", mutateJSON(t, richFE, func(m map[string]any) { line0(m)["impuesto"].([]any)[0].(map[string]any)["monto"] = 1 }),
			"detalleServicio[0].impuesto[0].monto", msg.ComputedField.With().String(), nil},
		{"error/computed exoneration", mutateJSON(t, richFE, func(m map[string]any) {
			line0(m)["impuesto"].([]any)[0].(map[string]any)["exoneracion"].(map[string]any)["montoExoneracion"] = 1
		}), "detalleServicio[0].impuesto[0].exoneracion.montoExoneracion", msg.ComputedField.With().String(), nil},
		{"error/computed total", mutateJSON(t, richFE, func(m map[string]any) { m["resumenFactura"].(map[string]any)["totalComprobante"] = 1 }),
			"resumenFactura.totalComprobante", msg.ComputedField.With().String(), nil},
		{"error/computed total at the top", mutateJSON(t, richFE, func(m map[string]any) { m["totalComprobante"] = 1 }),
			"totalComprobante", msg.ComputedField.With().String(), nil},
		{"error/computed line amount outside a receipt", mutateJSON(t, richFE, func(m map[string]any) { line0(m)["montoTotal"] = 1 }),
			"detalleServicio[0].montoTotal", msg.ComputedUnlessREP.With().String(), nil},
		{"error/computed subtotal outside a receipt", mutateJSON(t, richFE, func(m map[string]any) { line0(m)["subTotal"] = 1 }),
			"detalleServicio[0].subTotal", msg.ComputedUnlessREP.With().String(), nil},
		{"error/computed base", mutateJSON(t, richFE, func(m map[string]any) { line0(m)["baseImponible"] = 1 }),
			"detalleServicio[0].baseImponible", msg.ComputedBaseUnless.With().String(), nil},
		{"error/computed base in calculate", mutateJSON(t, calcBodyExample1, func(m map[string]any) { line0(m)["baseImponible"] = 1 }),
			"detalleServicio[0].baseImponible", msg.ComputedBaseUnless.With().String(), decodeCalculate},
		{"error/unknown in calculate", mutateJSON(t, calcBodyExample1, func(m map[string]any) { line0(m)["montoDescuento"] = 1 }),
			"detalleServicio[0].montoDescuento", "is not a field here; it is a field of descuento", decodeCalculate},
		{"error/repeated in another case", []byte(strings.Replace(richFE, `"cantidad": 3,`, `"cantidad": 3, "Cantidad": 30,`, 1)),
			"detalleServicio[0].cantidad", "is given more than once (as cantidad and Cantidad); give it once", nil},
		{"error/repeated", []byte(strings.Replace(richFE, `"cantidad": 3,`, `"cantidad": 3, "cantidad": 30,`, 1)),
			"detalleServicio[0].cantidad", msg.RepeatedField.With().String(), nil},
		{"error/repeated with the older spelling", []byte(strings.Replace(richFE, `{"tipoDoc": 1,`, `{"tipoDoc": 1, "tipoDocIR": "01",`, 1)),
			"informacionReferencia[0].tipoDocIR", "is given more than once (as tipoDoc and tipoDocIR); give it once", nil},
		{"error/older spelling misspelt", mutateJSON(t, richFE, func(m map[string]any) {
			r := m["informacionReferencia"].([]any)[0].(map[string]any)
			r["tipoDc"] = r["tipoDoc"]
			delete(r, "tipoDoc")
		}), "informacionReferencia[0].tipoDc", "is not a field of this call; did you mean tipoDocIR?", nil},
		{"error/receive", []byte(`{"xml": "PEZFLz4=", "mensage": "1", "id_externo": "r-1"}`),
			"mensage", "is not a field of this call; did you mean mensaje?", decodeReceive},
		{"error/receive repeated", []byte(`{"xml": "PEZFLz4=", "mensaje": "1", "Mensaje": 3}`),
			"mensaje", "is given more than once (as mensaje and Mensaje); give it once", decodeReceive},
		{"error/receive with a type error", []byte(`{"xml": 5, "mensaje": "1", "detalle": "x"}`),
			"detalle", "is not a field of this call; did you mean detalleMensaje?", decodeReceive},
		{"error/escaped name", []byte(strings.Replace(richFE, `"cantidad": 3,`, `"cantidad": 3, "cant\u0069dades": 30,`, 1)),
			"detalleServicio[0].cantidades", "is not a field of this call; did you mean cantidad?", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			decode := tt.decode
			if decode == nil {
				decode = decodeSend
			}
			err := decode(tt.body)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v, want a *ValidationError", err)
			}
			if got := msg.Render(ve.Fields, msg.English)[tt.path]; !slices.Equal(got, []string{tt.msg}) {
				t.Errorf("errors[%q] = %q, want [%q]\nall: %v", tt.path, got, tt.msg, ve.Fields)
			}
		})
	}
}

func decodeSend(b []byte) error {
	_, err := DecodeSendRequest(b)
	return err
}

func decodeReceive(b []byte) error {
	_, err := DecodeReceiveRequest(b)
	return err
}

func decodeCalculate(b []byte) error {
	_, err := DecodeCalculateRequest(b)
	return err
}

// TestDecodeNamesAccepted: every case and older spelling of the known
// names, the amounts a caller may give, and a whole send body at the
// calculate call are taken.
func TestDecodeNamesAccepted(t *testing.T) {
	for _, tt := range []struct {
		name   string
		body   []byte
		decode func([]byte) error
	}{
		{"ok/rich body", []byte(richFE), decodeSend},
		{"ok/every name upper-cased", []byte(upperKeys(t, richFE)), decodeSend},
		{"ok/long s folds to s", []byte(strings.Replace(richFE, `"descuento"`, `"deſcuento"`, 1)), decodeSend},
		{"ok/computed null", mutateJSON(t, richFE, func(m map[string]any) {
			line0(m)["montoTotalLinea"] = nil
			m["resumenFactura"].(map[string]any)["totalVenta"] = ""
			line0(m)["montoTotal"] = nil
		}), decodeSend},
		{"ok/receipt amounts", []byte(`{"tipo_documento": "10", "detalleServicio": [{"montoTotal": 100, "subTotal": 100}]}`), decodeSend},
		{"ok/base with factory IVA", mutateJSON(t, richFE, func(m map[string]any) {
			line0(m)["iVACobradoFabrica"] = "01"
			line0(m)["baseImponible"] = 10
		}), decodeSend},
		{"ok/base with IVA 07", mutateJSON(t, richFE, func(m map[string]any) {
			line0(m)["impuesto"].([]any)[0].(map[string]any)["codigo"] = "07"
			line0(m)["baseImponible"] = 10
		}), decodeSend},
		{"ok/a send body at calculate", []byte(richFE), decodeCalculate},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.decode(tt.body)
			var ve *ValidationError
			if errors.As(err, &ve) {
				for p, msgs := range ve.Fields {
					for _, m := range msgs {
						if s := m.String(); strings.Contains(s, "field") || strings.Contains(s, "computed") || strings.Contains(s, "more than once") {
							t.Errorf("%s: %s", p, m)
						}
					}
				}
			} else if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// upperKeys upper-cases every object name of body.
func upperKeys(t *testing.T, body string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	var up func(v any) any
	up = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				out[strings.ToUpper(k)] = up(e)
			}
			return out
		case []any:
			for i := range x {
				x[i] = up(x[i])
			}
		}
		return v
	}
	b, err := json.Marshal(up(v))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDecodeNamesEveryProblemAtOnce: the names refused come with the other
// problems of the body.
func TestDecodeNamesEveryProblemAtOnce(t *testing.T) {
	body := mutateJSON(t, richFE, func(m map[string]any) {
		line0(m)["montoDescuento"] = 1
		line0(m)["cantidad"] = -1
		m["receptor"].(map[string]any)["correo"] = "a@b.cr"
		m["terminal"] = true
	})
	_, err := DecodeSendRequest(body)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v", err)
	}
	for _, p := range []string{"detalleServicio[0].montoDescuento", "detalleServicio[0].cantidad", "ReceptorRequest.Correo", "terminal"} {
		if len(ve.Fields[p]) == 0 {
			t.Errorf("no error on %s: %v", p, ve.Fields)
		}
	}
}

// TestStoredRequestLenient: a request stored by an earlier version, with
// a name no field takes and an amount the service computes, is read again
// as it was read then.
func TestStoredRequestLenient(t *testing.T) {
	body := mutateJSON(t, richFE, func(m map[string]any) {
		line0(m)["montoDescuento"] = 1
		line0(m)["montoTotalLinea"] = 1
		line0(m)["montoTotal"] = 1
	})
	if _, err := DecodeSendRequest(body); err == nil {
		t.Fatal("the strict decoder took it")
	}
	r, err := DecodeStoredSendRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.DetalleServicio) != 2 {
		t.Errorf("%d lines", len(r.DetalleServicio))
	}
}

// TestNameRulesComplete: every type reachable from the request structs
// that reads itself from JSON has a name rule (buildNames panics on one
// without, and on a name that is not ASCII), every name is unique without
// regard to case in its object, and the objects nest no deeper than the
// scan's path holds.
func TestNameRulesComplete(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[SendDocumentRequest](), reflect.TypeFor[CalculateRequest](), reflect.TypeFor[receiveBody]()} {
		var walk func(o *objectNames, where string, depth int)
		walk = func(o *objectNames, where string, depth int) {
			if depth >= maxNameDepth {
				t.Errorf("%s: objects nest %d deep, more than the scan's path holds", where, depth)
				return
			}
			for i, f := range o.fields {
				for _, g := range o.fields[i+1:] {
					if strings.EqualFold(f.spelling, g.spelling) {
						t.Errorf("%s: %s and %s fold alike", where, f.spelling, g.spelling)
					}
				}
				if f.obj != nil {
					d := depth + 1
					if f.array {
						d++
					}
					walk(f.obj, where+"."+f.name, d)
				}
			}
		}
		walk(namesOf(typ), typ.Name(), 0)
	}
}

// TestComputedNamesComplete: every amount of the calculate answer is, on
// input, either a field the caller gives or one the decoder refuses as
// computed; so a computed field added to the answer cannot be taken on
// input and left out without a word.
func TestComputedNamesComplete(t *testing.T) {
	given := map[reflect.Type][]string{
		reflect.TypeFor[CalculatedLine](): {"numeroLinea", "codigoCABYS", "unidadMedida", "detalle", "iVACobradoFabrica",
			"cantidad", "precioUnitario", "descuento", "impuesto",
			"montoTotal", "subTotal", "baseImponible"}, // refused by givenComputed where they are computed
		reflect.TypeFor[CalculatedImpuesto](): {"codigo", "codigoTarifaIVA", "tarifa", "factorCalculoIVA", "datosImpuestoEspecifico", "exoneracion"},
		reflect.TypeFor[CalculatedResumen]():  {"codigoTipoMoneda", "medioPago"},
	}
	model := map[reflect.Type]reflect.Type{
		reflect.TypeFor[CalculatedLine]():     reflect.TypeFor[LineaDetalle](),
		reflect.TypeFor[CalculatedImpuesto](): reflect.TypeFor[Impuesto](),
		reflect.TypeFor[CalculatedResumen]():  reflect.TypeFor[ResumenFactura](),
	}
	for answer, inputs := range given {
		o := namesOf(model[answer])
		for _, jf := range jsonFields(answer) {
			f, ok := o.lookup([]byte(jf.name))
			switch {
			case !ok:
				t.Errorf("%s.%s is no field of %s", answer.Name(), jf.name, model[answer].Name())
			case slices.Contains(inputs, jf.name) && f.computed:
				t.Errorf("%s.%s is given by the caller, yet refused as computed", model[answer].Name(), jf.name)
			case !slices.Contains(inputs, jf.name) && !f.computed:
				t.Errorf("%s.%s is computed, yet taken on input", model[answer].Name(), jf.name)
			}
		}
	}
	x, ok := namesOf(reflect.TypeFor[Exoneracion]()).lookup([]byte("montoExoneracion"))
	if !ok || !x.computed {
		t.Error("exoneracion.montoExoneracion is taken on input")
	}
}
