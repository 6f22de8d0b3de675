package hacienda_test

import (
	"errors"
	"fmt"

	"facturad/hacienda"
	"facturad/hacienda/sample"
)

// The calculate call: decode the body, calculate, read the totals.
func ExampleCalculateAmounts() {
	body := []byte(`{
	  "detalleServicio": [{"codigoCABYS": "2392000000000", "cantidad": 3, "unidadMedida": "Unid",
	    "detalle": "Mercancía", "precioUnitario": 1250.50,
	    "descuento": [{"porcentajeDescuento": 10, "codigoDescuento": "07"}],
	    "impuesto": [{"codigo": "01", "codigoTarifaIVA": "08"}]}],
	  "resumenFactura": {"codigoTipoMoneda": {"codigoMoneda": "CRC", "tipoCambio": 1},
	    "medioPago": [{"tipoMedioPago": "01"}]}}`)
	req, err := hacienda.DecodeCalculateRequest(body)
	if err != nil {
		panic(err)
	}
	resp, err := hacienda.CalculateAmounts(req)
	if err != nil {
		panic(err)
	}
	l := resp.DetalleServicio[0]
	fmt.Println("descuento", l.Descuento[0].MontoDescuento, "IVA", l.Impuesto[0].Monto)
	fmt.Println("total", resp.ResumenFactura.TotalComprobante)
	// Output:
	// descuento 375.15 IVA 438.9255
	// total 3815.2755
}

// Validation reports every problem at once, by the request's field paths.
func ExampleValidateSend() {
	req, _ := hacienda.DecodeSendRequest([]byte(`{"id_externo": "A-1", "tipo_documento": "01", "condicion_venta": "01",
	  "receptor": {"nombre": "Cliente", "identificacion": {"tipo": "01", "numero": "12345"}},
	  "detalleServicio": [{"codigoCABYS": "2392000000000", "cantidad": 0, "unidadMedida": "Unid", "detalle": "Mercancía",
	    "precioUnitario": 10, "impuesto": [{"codigo": "01", "codigoTarifaIVA": "08", "tarifa": 4}]}],
	  "resumenFactura": {"codigoTipoMoneda": {"codigoMoneda": "CRC"}, "medioPago": [{"tipoMedioPago": "01"}]}}`))
	err := hacienda.ValidateSend(req, sample.Issuer())
	var ve *hacienda.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Paths() {
			fmt.Println(p+":", ve.FieldErrors()[p][0])
		}
	}
	// Output:
	// ReceptorRequest.Identificacion.Numero: a cédula física has 9 digits, without leading zero or dashes
	// detalleServicio[0].cantidad: must be greater than 0
	// detalleServicio[0].impuesto[0].tarifa: does not match codigoTarifaIVA 08 (expected 13)
}
