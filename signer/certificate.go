package signer

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"facturad/hacienda"
)

// Errors callers branch on with errors.Is. None of them, nor any error this
// package returns, ever carries the PIN.
var (
	// ErrNotPKCS12 means the bytes are not a PKCS#12 (.p12/.pfx) file this
	// package can read.
	ErrNotPKCS12 = errors.New("not a PKCS#12 file")
	// ErrWrongPIN means the file is PKCS#12 but the PIN does not open it.
	ErrWrongPIN = errors.New("wrong PIN for the PKCS#12 file")
	// ErrNoPrivateKey means the file opened but holds no private key.
	ErrNoPrivateKey = errors.New("PKCS#12 file holds no private key")
	// ErrNoCertificate means the file opened but holds no certificate for
	// its private key.
	ErrNoCertificate = errors.New("PKCS#12 file holds no certificate for its private key")
	// ErrUnsupportedKey means the key is not RSA of at least 2048 bits, the
	// only keys the tax authority accepts.
	ErrUnsupportedKey = errors.New("signing key is not RSA with at least 2048 bits")
	// ErrCertificateExpired means the signing certificate is expired or not
	// yet valid at the signing time.
	ErrCertificateExpired = errors.New("signing certificate is expired or not yet valid")
	// ErrNoIdentification means the certificate subject carries no
	// identification in a form this package recognises.
	ErrNoIdentification = errors.New("certificate subject carries no recognisable identification")
)

// Certificate is a signing key with its certificate and chain, as loaded
// from a PKCS#12 file.
type Certificate struct {
	// Key is the private key; it is always an *rsa.PrivateKey of at least
	// 2048 bits when loaded by LoadPKCS12.
	Key crypto.Signer
	// Leaf is the certificate of Key.
	Leaf *x509.Certificate
	// Chain holds the other (CA) certificates found in the file, in file
	// order.
	Chain []*x509.Certificate
}

// LoadPKCS12 opens a .p12/.pfx file with its PIN. Both modern files
// (PBES2/AES, SHA-256 MAC) and legacy ones (3DES, RC2, SHA-1 MAC) are read.
// The leaf is the certificate whose public key matches the private key,
// wherever it sits in the file; the other certificates become the chain.
//
// Errors wrap ErrNotPKCS12, ErrWrongPIN, ErrNoPrivateKey, ErrNoCertificate,
// ErrUnsupportedKey or ErrTooCostly (more key-derivation iterations than
// MaxPKCS12Iterations, refused before any derivation).
func LoadPKCS12(p12, pin []byte) (*Certificate, error) {
	// A PKCS#12 PFX is a DER SEQUENCE; reject anything else before the
	// decoder spends time on it.
	if len(p12) < 2 || p12[0] != 0x30 {
		return nil, ErrNotPKCS12
	}
	if !utf8.Valid(pin) || bytes.IndexByte(pin, 0) >= 0 {
		// A PIN that cannot be encoded as a PKCS#12 password cannot be the
		// one that protects the file.
		return nil, ErrWrongPIN
	}
	// The decoder derives keys with whatever iteration counts the file
	// declares: refuse absurd ones before it starts.
	if err := checkIterations(p12); err != nil {
		return nil, err
	}
	key, first, rest, err := pkcs12.DecodeChain(p12, string(pin))
	if err != nil {
		return nil, classifyPKCS12Error(err)
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: key type %T", ErrUnsupportedKey, key)
	}
	if rsaKey.N.BitLen() < 2048 {
		return nil, fmt.Errorf("%w: %d bits", ErrUnsupportedKey, rsaKey.N.BitLen())
	}
	all := append([]*x509.Certificate{first}, rest...)
	leafAt := -1
	for i, c := range all {
		if pub, ok := c.PublicKey.(*rsa.PublicKey); ok && rsaKey.PublicKey.Equal(pub) {
			leafAt = i
			break
		}
	}
	if leafAt < 0 {
		return nil, ErrNoCertificate
	}
	c := &Certificate{Key: rsaKey, Leaf: all[leafAt]}
	for i, ca := range all {
		if i != leafAt {
			c.Chain = append(c.Chain, ca)
		}
	}
	return c, nil
}

// classifyPKCS12Error maps the decoder's errors onto this package's
// sentinels. The decoder's messages never contain the password, so its text
// may be kept as detail.
func classifyPKCS12Error(err error) error {
	switch {
	case errors.Is(err, pkcs12.ErrIncorrectPassword), errors.Is(err, pkcs12.ErrDecryption):
		return ErrWrongPIN
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "private key missing"):
		return ErrNoPrivateKey
	case strings.Contains(msg, "certificate missing"):
		return ErrNoCertificate
	}
	return fmt.Errorf("%w: %v", ErrNotPKCS12, err)
}

// CheckValidity returns an error wrapping ErrCertificateExpired when t is
// outside the leaf certificate's validity period.
func (c *Certificate) CheckValidity(t time.Time) error {
	return checkValidity(c.Leaf, t)
}

func checkValidity(leaf *x509.Certificate, t time.Time) error {
	if t.Before(leaf.NotBefore) {
		return fmt.Errorf("%w: valid from %s", ErrCertificateExpired, leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	if t.After(leaf.NotAfter) {
		return fmt.Errorf("%w: expired %s", ErrCertificateExpired, leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return nil
}

// Identification returns the holder's identification number, digits only,
// in the form the v4.4 documents use for Identificacion/Numero (e.g.
// "3101123456" for a cédula jurídica, "112345678" for a cédula física).
// It reads the subject SERIALNUMBER attribute (OID 2.5.4.5), falling back to
// the OU values, as described in ParseIdentification.
func (c *Certificate) Identification() (string, error) {
	id, err := CertificateIdentification(c.Leaf)
	if err != nil {
		return "", err
	}
	return id.Numero, nil
}

// Identification is a holder identification read from a certificate
// subject: Tipo is the v4.4 identification type code (01 física, 02
// jurídica, 03 DIMEX, 04 NITE) and Numero its digits.
type Identification struct {
	Tipo   string
	Numero string
}

// CertificateIdentification reads the holder identification from the
// certificate subject: first the SERIALNUMBER attribute, then each OU value.
func CertificateIdentification(cert *x509.Certificate) (Identification, error) {
	if cert == nil {
		return Identification{}, ErrNoIdentification
	}
	candidates := []string{cert.Subject.SerialNumber}
	candidates = append(candidates, cert.Subject.OrganizationalUnit...)
	for _, s := range candidates {
		if id, err := ParseIdentification(s); err == nil {
			return id, nil
		}
	}
	return Identification{}, fmt.Errorf("%w: subject %q", ErrNoIdentification, cert.Subject.String())
}

// ParseIdentification reads an identification in the form Costa Rican
// certificates carry it in their subject SERIALNUMBER: a prefix naming the
// kind of identification, a dash, and the number with optional dashes.
//
//	CPF-0P-TTTT-AAAA   cédula física (national PKI form: the province digit
//	                   padded to two, so the result drops that one leading
//	                   zero) -> 01, 9 digits ("CPF-01-1234-5678" -> "112345678")
//	CPJ-T-CCC-NNNNNN   cédula jurídica -> 02, 10 digits
//	                   ("CPJ-3-101-123456" -> "3101123456")
//	DIMEX-N… / DIDI-N… foreign resident / diplomat -> 03, 11 or 12 digits
//	NITE-N…            NITE -> 04, 10 digits
//
// The prefix is case-insensitive. The digit counts are those the v4.4 annex
// sets for Identificacion/Numero; anything else is ErrNoIdentification.
func ParseIdentification(s string) (Identification, error) {
	s = strings.TrimSpace(s)
	prefix, rest, ok := strings.Cut(s, "-")
	if !ok || rest == "" {
		return Identification{}, fmt.Errorf("%w: %q", ErrNoIdentification, s)
	}
	var digits strings.Builder
	for _, r := range rest {
		switch {
		case r >= '0' && r <= '9':
			digits.WriteRune(r)
		case r == '-' || r == ' ':
		default:
			return Identification{}, fmt.Errorf("%w: %q", ErrNoIdentification, s)
		}
	}
	d := digits.String()
	tipo, ok := serialPrefixTipo[strings.ToUpper(prefix)]
	if !ok {
		return Identification{}, fmt.Errorf("%w: %q", ErrNoIdentification, s)
	}
	if tipo == hacienda.IDFisica && len(d) == 10 && d[0] == '0' {
		d = d[1:] // the province digit padded to two
	}
	if !(hacienda.Identificacion{Tipo: tipo, Numero: d}).NumberProblem().IsZero() {
		return Identification{}, fmt.Errorf("%w: %q", ErrNoIdentification, s)
	}
	return Identification{Tipo: tipo, Numero: d}, nil
}

// serialPrefixTipo maps a SERIALNUMBER prefix to its identification type.
var serialPrefixTipo = map[string]string{
	"CPF": hacienda.IDFisica, "CPJ": hacienda.IDJuridica,
	"DIMEX": hacienda.IDDIMEX, "DIDI": hacienda.IDDIMEX, "NITE": hacienda.IDNITE,
}
