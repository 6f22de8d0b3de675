// Package certopen lets the tenant service check uploaded certificates with
// the signer's PKCS#12 reader, without tenant depending on signer: it maps
// the signer's errors onto the causes tenant reports on field Certificado.
package certopen

import (
	"errors"

	"facturad/signer"
	"facturad/tenant"
)

// Opener implements tenant.CertificateOpener with signer.LoadPKCS12.
type Opener struct{}

var _ tenant.CertificateOpener = Opener{}

// OpenCertificate opens a .p12 with its PIN and describes its signing
// certificate.
func (Opener) OpenCertificate(p12, pin []byte) (tenant.CertificateInfo, error) {
	c, err := signer.LoadPKCS12(p12, pin)
	switch {
	case errors.Is(err, signer.ErrWrongPIN):
		return tenant.CertificateInfo{}, tenant.ErrCertificatePIN
	case errors.Is(err, signer.ErrNotPKCS12):
		return tenant.CertificateInfo{}, tenant.ErrCertificateFormat
	case errors.Is(err, signer.ErrNoPrivateKey), errors.Is(err, signer.ErrNoCertificate):
		return tenant.CertificateInfo{}, tenant.ErrCertificateNoKey
	case err != nil:
		return tenant.CertificateInfo{}, err
	}
	id, err := c.Identification()
	if err != nil {
		return tenant.CertificateInfo{}, err
	}
	return tenant.CertificateInfo{Identification: id, NotBefore: c.Leaf.NotBefore, NotAfter: c.Leaf.NotAfter}, nil
}
