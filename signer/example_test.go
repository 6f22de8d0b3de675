package signer_test

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"log"

	"facturad/signer"
	"facturad/signer/certmint"
)

// Example mints a throwaway company certificate, loads it as the service
// loads an uploaded .p12, signs a document and verifies the result.
func Example() {
	p12, err := certmint.Mint(certmint.Options{
		TipoIdentificacion: "02",
		Identificacion:     "3101123456",
		Name:               "EMPRESA DE EJEMPLO SOCIEDAD ANONIMA",
		PIN:                "1234",
		Key:                certmint.TestKey(0), // tests reuse pooled keys; omit to generate one
	})
	if err != nil {
		log.Fatal(err)
	}
	cert, err := signer.LoadPKCS12(p12, []byte("1234"))
	if err != nil {
		log.Fatal(err)
	}
	id, err := cert.Identification()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("certificate of", id)

	doc := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<TiqueteElectronico xmlns="https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/tiqueteElectronico"><Clave>50601012500310112345600100001040000000001100000001</Clave></TiqueteElectronico>`)
	signed, err := signer.Sign(doc, cert.Key, append([]*x509.Certificate{cert.Leaf}, cert.Chain...), signer.PolicyV44)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("signature is the root's last child:", bytes.HasSuffix(signed, []byte("</ds:Signature></TiqueteElectronico>")))

	res, err := signer.Verify(signed)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("signed by", res.Certificate.Subject.SerialNumber)
	// Output:
	// certificate of 3101123456
	// signature is the root's last child: true
	// signed by CPJ-3-101-123456
}
