package hacienda

import (
	"encoding/json"
	"strings"
	"testing"
)

const calcBodyExample1 = `{
  "detalleServicio": [
    {"numeroLinea": 1, "codigoCABYS": "2392000000000", "cantidad": 3, "unidadMedida": "Unid", "detalle": "Mercancía",
     "precioUnitario": "1250.50", "descuento": [{"porcentajeDescuento": 10, "codigoDescuento": "07"}],
     "impuesto": [{"codigo": "01", "codigoTarifaIVA": "08", "tarifa": 13}]},
    {"numeroLinea": 2, "CodigoCabys": "8314100000000", "cantidad": 2, "unidadMedida": "Sp", "detalle": "Servicio",
     "precioUnitario": 15000, "impuesto": [{"codigo": "01", "codigoTarifaIVA": "04"}]},
    {"numeroLinea": 3, "codigoCABYS": "2392000000000", "cantidad": 1.5, "unidadMedida": "Kg", "detalle": "Exento",
     "precioUnitario": 2000, "impuesto": [{"codigo": "01", "codigoTarifaIVA": "10"}]}
  ],
  "resumenFactura": {"codigoTipoMoneda": {"codigoMoneda": "CRC", "tipoCambio": 1}, "medioPago": [{"tipoMedioPago": "01"}]}
}`

func TestCalculateAmountsEndToEnd(t *testing.T) {
	req, err := DecodeCalculateRequest([]byte(calcBodyExample1))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := CalculateAmounts(req)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		`"montoDescuento":375.15`, `"porcentajeDescuento":10`, `"subTotal":3376.35`, `"monto":438.9255`,
		`"totalComprobante":38015.2755`, `"totalServExonerado":0`, `"totalIVADevuelto":0`, `"otrosCargos":null`,
		`"factorCalculoIVA":null`, `"exoneracion":null`, `"totalMedioPago":38015.2755`, `"medioPagoOtros":null`,
		`{"codigo":"01","codigoTarifaIVA":"10","totalMontoImpuesto":0}`, `"codigoCABYS":"8314100000000"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("answer lacks %s\n%s", want, s)
		}
	}
	if strings.ContainsAny(s, "eE") && strings.Contains(s, "e+") {
		t.Errorf("answer uses an exponent: %s", s)
	}
}

func TestCalculateAmountsErrors(t *testing.T) {
	body := `{"detalleServicio": [
	  {"codigoCABYS": "2392000000000", "cantidad": "abc", "precioUnitario": 10, "impuesto": [{"codigo": "01", "codigoTarifaIVA": "08"}]},
	  {"codigoCABYS": "2392000000000", "cantidad": 1, "precioUnitario": 10, "impuesto": [{"codigo": "01", "codigoTarifaIVA": "08", "tarifa": 4}]},
	  {"codigoCABYS": "2392000000000", "cantidad": 1, "precioUnitario": 10,
	   "descuento": [{"montoDescuento": 11, "codigoDescuento": "07"}], "impuesto": [{"codigo": "01", "codigoTarifaIVA": "13"}]}],
	 "resumenFactura": {"codigoTipoMoneda": {"codigoMoneda": "USD"},
	   "medioPago": [{"tipoMedioPago": "01", "totalMedioPago": 1}, {"tipoMedioPago": "02", "totalMedioPago": 1}]}}`
	req, err := DecodeCalculateRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	_, err = CalculateAmounts(req)
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("err = %v, want *ValidationError", err)
	}
	want := map[string]string{
		"detalleServicio[0].cantidad":                    "must be a number",
		"detalleServicio[1].impuesto[0].tarifa":          "does not match codigoTarifaIVA 08",
		"detalleServicio[2].descuento[0].montoDescuento": "must not exceed",
		"detalleServicio[2].impuesto[0].codigoTarifaIVA": "nota-8.1",
		"resumenFactura.codigoTipoMoneda.tipoCambio":     "is required",
	}
	for p, frag := range want {
		msgs := ve.FieldErrors()[p]
		if len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "|"), frag) {
			t.Errorf("%s: got %q, want a message containing %q (all: %v)", p, msgs, frag, ve.FieldErrors())
		}
	}
}
