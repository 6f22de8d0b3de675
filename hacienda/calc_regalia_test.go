package hacienda

import (
	"errors"
	"testing"
)

// A regalía or bonificación borne by the issuer (discount codes 01, 03)
// needs ImpuestoAsumidoEmisorFabrica, which FEC and FEE do not have: it is
// refused there, on the discount's code (decisions #42).
func TestRegaliaBorneByIssuerPerType(t *testing.T) {
	const path = "detalleServicio[0].descuento[0].codigoDescuento"
	for _, tt := range []struct {
		tipo    DocumentType
		codigo  string
		refused bool
	}{
		{TypeFE, "01", false},
		{TypeTE, "03", false},
		{TypeFEC, "01", true},
		{TypeFEC, "03", true},
		{TypeFEE, "01", true},
		{TypeFEC, "02", false},
		{TypeFEE, "02", false},
	} {
		name := "ok/"
		if tt.refused {
			name = "error/"
		}
		t.Run(name+string(tt.tipo)+"/"+tt.codigo, func(t *testing.T) {
			l := goods(1, "1", "1000", iva("08"))
			if tt.tipo == TypeFEE {
				l.Impuesto = []Impuesto{{Codigo: "01", CodigoTarifaIVA: "01", Tarifa: a("0")}}
			}
			l.Descuento = []Descuento{{PorcentajeDescuento: a("100"), CodigoDescuento: tt.codigo}}
			err := Calculate(crcDoc(tt.tipo, l))
			var ve *ValidationError
			refused := errors.As(err, &ve) && ve.Has(path)
			if refused != tt.refused {
				t.Fatalf("refused on %s = %v, want %v (error: %v)", path, refused, tt.refused, err)
			}
		})
	}
}
