// Package trust holds the certificate authorities of Costa Rica's national
// PKI (the Banco Central's SINPE authorities under MICITT's national root),
// which issue the certificate the Ministerio de Hacienda signs its answers
// with and the firma digital certificates of taxpayers. They are the
// default trust for the tax authority's staging and production services.
//
// The files are the published certificates, byte for byte; SOURCES.md
// says where each was found, how it was checked against a second source,
// and its fingerprint.
package trust

import (
	"crypto/x509"
	"embed"
	"encoding/pem"
	"fmt"
	"io/fs"
	"sync"
)

// MinistryIdentification is the cédula jurídica of the Ministerio de
// Hacienda, which its answers' signing certificate carries
// (SERIALNUMBER CPJ-2-100-042005).
const MinistryIdentification = "2100042005"

//go:embed *.pem
var files embed.FS

// National is the national PKI: its roots (the self-signed national root
// authorities, the only anchors) and the intermediate authorities below
// them, which a chain may pass through but which are trusted only through
// a root's signature.
type National struct {
	Roots         *x509.CertPool
	Intermediates *x509.CertPool
	// Certificates are all of them, roots first, for a listing.
	Certificates []*x509.Certificate
}

var national = sync.OnceValues(load)

// NationalPKI returns the embedded national PKI. The pools are shared:
// do not add to them.
func NationalPKI() (*National, error) { return national() }

func load() (*National, error) {
	n := &National{Roots: x509.NewCertPool(), Intermediates: x509.NewCertPool()}
	names, err := fs.Glob(files, "*.pem")
	if err != nil {
		return nil, err
	}
	var inter []*x509.Certificate
	for _, name := range names {
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		block, _ := pem.Decode(b)
		if block == nil || block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("trust: %s holds no PEM certificate", name)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("trust: %s: %w", name, err)
		}
		if !cert.IsCA {
			return nil, fmt.Errorf("trust: %s is not a certificate authority", name)
		}
		if selfIssued(cert) {
			n.Roots.AddCert(cert)
			n.Certificates = append(n.Certificates, cert)
		} else {
			n.Intermediates.AddCert(cert)
			inter = append(inter, cert)
		}
	}
	n.Certificates = append(n.Certificates, inter...)
	return n, nil
}

// selfIssued reports whether c names itself as its issuer: a root. A
// root is trusted by being embedded, not by its own signature, which Go
// does not check on an anchor and, being SHA-1, refuses on the first
// national root.
func selfIssued(c *x509.Certificate) bool {
	return string(c.RawIssuer) == string(c.RawSubject)
}

// NamesAuthority reports whether c names one of these authorities as its
// issuer: a certificate that claims the national PKI, which must then
// chain to it.
func (n *National) NamesAuthority(c *x509.Certificate) bool {
	for _, a := range n.Certificates {
		if string(a.RawSubject) == string(c.RawIssuer) {
			return true
		}
	}
	return false
}
