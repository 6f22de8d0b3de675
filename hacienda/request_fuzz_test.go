package hacienda

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeSendRequest: decoding, validating and calculating any body
// never panics, and a success always yields a document whose totals
// reconcile and whose JSON form is valid.
func FuzzDecodeSendRequest(f *testing.F) {
	f.Add([]byte(validFE))
	f.Add([]byte(calcBodyExample1))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"tipo_documento": "10", "detalleServicio": [{"montoTotal": "1e40"}]}`))
	f.Add([]byte(`{"detalleServicio": [{"cantidad": 1e999999, "precioUnitario": -0}]}`))
	f.Add([]byte(`{"receptor": {"telefono": "+506 8888-7777", "ubicacion": {"provincia": true}}}`))
	f.Add([]byte(`{"informacionReferencia": [{"tipoDoc": 1, "fechaEmision": 5}], "otros": {"otroTexto": ["a", {"codigo": 1}]}}`))
	f.Add([]byte(`{"id_externo": 1, "receptor": {"nombre": 5, "ubicacion": []}, "detalleServicio": [{"numeroLinea": "1",
		"impuesto": [{"codigo": 1, "exoneracion": {"numeroDocumento": 2}}]}, 7], "resumenFactura": {"medioPago": [{"tipoMedioPago": true}]}}`))
	for _, r := range generatedRequests(f, 8) {
		b, _ := json.Marshal(r)
		f.Add(b)
	}
	issuer := testIssuer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeSendRequest(body)
		if err != nil {
			if _, ok := err.(*ValidationError); !ok {
				t.Fatalf("decode error %T is not a *ValidationError", err)
			}
			return
		}
		doc, err := NewDocument(req, issuer)
		if err != nil {
			ve, ok := err.(*ValidationError)
			if !ok || ve.Len() == 0 {
				t.Fatalf("NewDocument error %v (%T) is not a non-empty *ValidationError", err, err)
			}
			return
		}
		r := doc.ResumenFactura
		total := r.TotalVentaNeta.Decimal().Add(r.TotalImpuesto.Decimal()).Add(r.TotalOtrosCargos.Decimal()).Sub(r.TotalIVADevuelto.Decimal())
		if total.Cmp(r.TotalComprobante.Decimal()) != 0 {
			t.Fatalf("TotalComprobante %s does not reconcile (%s)", r.TotalComprobante, total)
		}
		if _, err := json.Marshal(doc); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	})
}

// FuzzDecodeCalculateRequest: the calculate call never panics.
func FuzzDecodeCalculateRequest(f *testing.F) {
	f.Add([]byte(calcBodyExample1))
	f.Add([]byte(`{"tipo_documento": "10", "detalleServicio": [{"montoTotal": 5, "impuesto": [{"codigo": "08"}]}]}`))
	f.Add([]byte(`{"detalleServicio": [{"cantidad": "1", "precioUnitario": "1", "impuesto": [{"codigo": "04", "datosImpuestoEspecifico": {}}]}]}`))
	f.Add([]byte(`{"detalleServicio": [{"numeroLinea": 1.5, "descuento": [{"codigoDescuento": 7}], "impuesto": [{"codigo": "01", "exoneracion": []}]}],
		"otrosCargos": [{"tipoDocumentoOC": {}}], "resumenFactura": {"codigoTipoMoneda": "CRC"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeCalculateRequest(body)
		if err != nil {
			if ve, ok := err.(*ValidationError); !ok || ve.Len() == 0 {
				t.Fatalf("decode error %v (%T) is not a non-empty *ValidationError", err, err)
			}
			return
		}
		resp, err := CalculateAmounts(req)
		if err != nil {
			if _, ok := err.(*ValidationError); !ok {
				t.Fatalf("CalculateAmounts error %T is not a *ValidationError", err)
			}
			return
		}
		if _, err := json.Marshal(resp); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	})
}

// FuzzAmountJSON: any literal either reads as an exact amount that
// marshals back to a plain JSON number, or is marked invalid.
func FuzzAmountJSON(f *testing.F) {
	for _, s := range []string{`1`, `"2.5"`, `1e3`, `-0.000001`, `"x"`, `null`, `1e-40`, `"  7 "`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var a Amount
		if err := a.UnmarshalJSON(b); err != nil {
			t.Fatalf("UnmarshalJSON returned %v; it must never fail", err)
		}
		out, err := a.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !a.IsSet() || a.Invalid() {
			if string(out) != "null" {
				t.Fatalf("absent or invalid amount marshals as %s", out)
			}
			return
		}
		var back Amount
		_ = back.UnmarshalJSON(out)
		if back.Invalid() || back.Decimal().Cmp(a.Decimal().Round(5)) != 0 {
			t.Fatalf("%s → %s does not read back", b, out)
		}
		for _, c := range out {
			if c == 'e' || c == 'E' || c == '"' {
				t.Fatalf("output %s is not a plain JSON number", out)
			}
		}
	})
}
