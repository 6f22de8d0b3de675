package signer_test

import (
	"strings"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/sandbox"
	"facturad/signer"
)

// TestAnswerIsPlainXML: the signed MensajeHacienda the sandbox answers with,
// as the tax authority's answers are read on every settled document, takes
// the plain reader rather than etree's (the speed the performance figures
// count on), and reads back whole.
func TestAnswerIsPlainXML(t *testing.T) {
	as, err := sandbox.DefaultAnswerSigner()
	if err != nil {
		t.Fatal(err)
	}
	clave := "506" + "010126" + "003101123456" + "00100001010000000001" + "1" + "12345678"
	unsigned, err := hacienda.MarshalMensajeHacienda(&hacienda.MensajeHacienda{
		Clave: clave, NombreEmisor: "Empresa de Pruebas S.A.", TipoIdentificacionEmisor: "02",
		NumeroCedulaEmisor: "3101123456", NombreReceptor: "Cliente Ñandú & Cía", TipoIdentificacionReceptor: "01",
		NumeroCedulaReceptor: "109870654", Mensaje: hacienda.MensajeRechazado, EstadoMensaje: "Rechazado",
		DetalleMensaje:     "El comprobante tiene errores:\n<linea 1> \"monto\" & 'impuesto'",
		MontoTotalImpuesto: hacienda.AmountFromInt(3250), TotalFactura: hacienda.AmountFromInt(28251),
	})
	if err != nil {
		t.Fatal(err)
	}
	signed, err := as.SignAnswer(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	d, err := signer.ReadPlainXML(signed)
	if err != nil {
		t.Fatalf("the sandbox's answer is not read as plain XML: %v", err)
	}
	m, err := hacienda.ReadMensajeHacienda(d.Root())
	if err != nil {
		t.Fatal(err)
	}
	if m.Clave != clave || !strings.Contains(m.DetalleMensaje, `<linea 1> "monto" & 'impuesto'`) {
		t.Errorf("read back clave %q, detalle %q", m.Clave, m.DetalleMensaje)
	}
}
