package signer_test

import (
	"crypto/x509"
	"strings"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/sandbox"
	"facturad/signer"
	"facturad/signer/certmint"
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

// TestSignVerifyIssuerWithControlCharacter: a certificate whose issuer's
// name holds a character XML does not allow (written as U+FFFD in the
// signature's SignedProperties) signs a document that verifies: the digest
// is taken over what is written.
func TestSignVerifyIssuerWithControlCharacter(t *testing.T) {
	ca, err := certmint.NewCA(certmint.CAOptions{CommonName: "Test\x01CA", Key: certmint.TestKey(0)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := certmint.MintCertificate(certmint.Options{TipoIdentificacion: "02", Identificacion: "3101123456",
		Name: "EMPRESA DE PRUEBA", PIN: "1234", Key: certmint.TestKey(1), CA: ca})
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<TiqueteElectronico xmlns="https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/tiqueteElectronico"><Clave>50601012500310112345600100001040000000001100000001</Clave></TiqueteElectronico>`)
	for _, opts := range [][]signer.Option{nil, {signer.WithCanonicalInput()}} {
		signed, err := signer.Sign(doc, m.Key, []*x509.Certificate{m.Leaf, ca.Cert}, signer.PolicyV44, opts...)
		if err != nil {
			t.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AddCert(ca.Cert)
		if _, err := signer.VerifyWith(signed, signer.VerifyOptions{Roots: roots}); err != nil {
			t.Errorf("options %v: %v", opts, err)
		}
	}
}
