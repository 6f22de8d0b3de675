package signer

import (
	"crypto/x509"

	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

func pkcs12TrustStore(cert *x509.Certificate, pin string) ([]byte, error) {
	return pkcs12.Modern2023.EncodeTrustStore([]*x509.Certificate{cert}, pin)
}
