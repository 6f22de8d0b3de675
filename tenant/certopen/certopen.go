// Package certopen lets the tenant service check uploaded certificates with
// the signer's PKCS#12 reader, without tenant depending on signer: it maps
// the signer's errors onto the causes tenant reports on field Certificado.
package certopen

import (
	"errors"
	"fmt"

	"facturad/signer"
	"facturad/tenant"
)

// Opener implements tenant.CertificateOpener with signer.LoadPKCS12.
type Opener struct{}

var _ tenant.CertificateOpener = Opener{}

// OpenCertificate opens a .p12 with its PIN and describes its signing
// certificate. The causes tenant tells apart are wrapped around the
// signer's own error; a certificate that carries no identification is
// described with an empty one, for tenant to refuse as a mismatch.
func (Opener) OpenCertificate(p12, pin []byte) (tenant.CertificateInfo, error) {
	c, err := signer.LoadPKCS12(p12, pin)
	switch {
	case errors.Is(err, signer.ErrWrongPIN):
		return tenant.CertificateInfo{}, fmt.Errorf("%w: %w", tenant.ErrCertificatePIN, err)
	case errors.Is(err, signer.ErrTooCostly):
		return tenant.CertificateInfo{}, fmt.Errorf("%w: %w", tenant.ErrCertificateCostly, err)
	case errors.Is(err, signer.ErrNotPKCS12):
		return tenant.CertificateInfo{}, fmt.Errorf("%w: %w", tenant.ErrCertificateFormat, err)
	case errors.Is(err, signer.ErrNoPrivateKey), errors.Is(err, signer.ErrNoCertificate):
		return tenant.CertificateInfo{}, fmt.Errorf("%w: %w", tenant.ErrCertificateNoKey, err)
	case errors.Is(err, signer.ErrUnsupportedKey):
		return tenant.CertificateInfo{}, fmt.Errorf("%w: %w", tenant.ErrCertificateKey, err)
	case err != nil:
		return tenant.CertificateInfo{}, err
	}
	id, err := c.Identification()
	if err != nil && !errors.Is(err, signer.ErrNoIdentification) {
		return tenant.CertificateInfo{}, err
	}
	return tenant.CertificateInfo{Identification: id, NotBefore: c.Leaf.NotBefore, NotAfter: c.Leaf.NotAfter}, nil
}
