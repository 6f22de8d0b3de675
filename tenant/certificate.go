package tenant

import (
	"context"
	"errors"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/msg"
)

// CertificateOpener opens a PKCS#12 (.p12/.pfx) file with its PIN and tells
// what the service needs to know at upload. The signer package provides the
// parsing; cmd wires a small adapter so that tenant does not depend on it.
//
// Implementations should wrap ErrCertificatePIN, ErrCertificateFormat,
// ErrCertificateNoKey or ErrCertificateKey when they can tell the cause, so
// that the answer can say what is wrong; any other error is reported as
// "cannot be opened".
type CertificateOpener interface {
	OpenCertificate(p12, pin []byte) (CertificateInfo, error)
}

// CertificateInfo describes the signing (leaf) certificate of a .p12.
type CertificateInfo struct {
	// Identification is the holder's identification number, written as
	// the documents write it (digits, without dashes): Costa Rican
	// certificates carry it in the subject's SERIALNUMBER attribute, as
	// "CPF-01-0123-0456" (persona física, 101230456) or "CPJ-3-101-123456"
	// (persona jurídica, 3101123456), which the opener reads
	// (signer.ParseIdentification). Leave it empty, with a nil error, when
	// the certificate carries none: the upload is then refused with a
	// message saying so. It must be the same number as the company's
	// (hacienda.SameNumber).
	Identification string
	NotBefore      time.Time
	NotAfter       time.Time
}

// Causes a CertificateOpener reports.
var (
	ErrCertificatePIN    = errors.New("certificate PIN is wrong")
	ErrCertificateFormat = errors.New("not a PKCS#12 file")
	ErrCertificateNoKey  = errors.New("certificate file holds no private key")
	// ErrCertificateKey means the key is not one the tax authority takes
	// (RSA of at least 2048 bits).
	ErrCertificateKey = errors.New("certificate key is not RSA of at least 2048 bits")
	// ErrCertificateCostly means the file asks for more key-derivation
	// iterations than the service derives (refused before deriving).
	ErrCertificateCostly = errors.New("certificate file asks for too many key-derivation iterations")
)

// checkCertificate opens an uploaded certificate and checks it belongs to
// the company, recording problems on field Certificado. It returns the
// certificate's expiry when it is acceptable. Opening runs the file's key
// derivations (bounded by the iteration cap), so it waits, bounded by ctx,
// for one of the slots the slow password hashes use: no flood of uploads
// runs more of them at once than there are cores; a wait that finds none
// is a *BusyError (503).
func (s *Service) checkCertificate(ctx context.Context, e *ValidationError, p12, pin []byte, identificacion string) (time.Time, error) {
	release, err := s.slowSlot(ctx)
	if err != nil {
		return time.Time{}, err
	}
	info, err := s.certs.OpenCertificate(p12, pin)
	release()
	return s.judgeCertificate(e, info, err, identificacion), nil
}

// judgeCertificate records what is wrong with an opened certificate on
// field Certificado, and returns its expiry.
func (s *Service) judgeCertificate(e *ValidationError, info CertificateInfo, err error, identificacion string) time.Time {
	switch {
	case errors.Is(err, ErrCertificatePIN):
		e.Add("Certificado", msg.CertificatePIN.With())
		return time.Time{}
	case errors.Is(err, ErrCertificateCostly):
		e.Add("Certificado", msg.CertificateIterations.With())
		return time.Time{}
	case errors.Is(err, ErrCertificateFormat):
		e.Add("Certificado", msg.CertificateFormat.With())
		return time.Time{}
	case errors.Is(err, ErrCertificateNoKey):
		e.Add("Certificado", msg.CertificateNoKey.With())
		return time.Time{}
	case errors.Is(err, ErrCertificateKey):
		e.Add("Certificado", msg.CertificateKey.With())
		return time.Time{}
	case err != nil:
		e.Add("Certificado", msg.CertificateUnreadable.With())
		return time.Time{}
	}
	switch {
	case info.Identification == "":
		e.Add("Certificado", msg.CertificateNoID.With())
	case identificacion != "" && !hacienda.SameNumber(info.Identification, identificacion):
		e.Add("Certificado", msg.CertificateOtherHolder.With())
	}
	now := s.now()
	if !info.NotAfter.IsZero() && !now.Before(info.NotAfter) {
		e.Add("Certificado", msg.CertificateExpired.With(info.NotAfter.UTC().Format(time.DateOnly)))
	}
	if info.NotAfter.IsZero() {
		e.Add("Certificado", msg.CertificateNoExpiry.With())
	}
	return info.NotAfter
}
