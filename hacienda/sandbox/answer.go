package sandbox

import (
	"crypto"
	"crypto/x509"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"facturad/hacienda"
	"facturad/signer"
	"facturad/signer/certmint"
)

// The DetalleMensaje texts, in the tax authority's words for its sandbox.
const (
	detalleAceptado  = "Este comprobante fue aceptado en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios"
	detalleProcesado = "Este comprobante fue procesado en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios"
	detalleErrores   = "El comprobante electrónico tiene los siguientes errores:"
)

// AnswerSigner signs the sandbox's MensajeHacienda answers (an enveloped
// signature appended to the root).
type AnswerSigner interface {
	SignAnswer(xml []byte) ([]byte, error)
}

// CertificateSigner signs answers with a key and its certificate chain.
type CertificateSigner struct {
	Key   crypto.Signer
	Chain []*x509.Certificate
	// Now gives the signing time; nil means time.Now.
	Now func() time.Time
	// Profile is how answers are signed: ProfileTaxAuthority (the zero
	// value) or ProfileService.
	Profile AnswerProfile
}

// AnswerProfile is the signature profile of the sandbox's answers.
type AnswerProfile int

const (
	// ProfileTaxAuthority signs as the tax authority signs its real
	// answers: XAdES-BES in the EU DSS library's profile, without a
	// policy (signer.SignBES). It is the default, so that every test
	// that settles a document verifies an answer of the real shape.
	ProfileTaxAuthority AnswerProfile = iota
	// ProfileService signs as the service signs its documents:
	// XAdES-EPES with the v4.4 policy (signer.Sign).
	ProfileService
)

// ParseAnswerProfile reads a profile's name: "hacienda" or "service".
func ParseAnswerProfile(s string) (AnswerProfile, error) {
	switch s {
	case "", "hacienda":
		return ProfileTaxAuthority, nil
	case "service":
		return ProfileService, nil
	}
	return 0, fmt.Errorf("answer profile %q: want hacienda or service", s)
}

// Root is the last certificate of the chain: the authority a service must
// trust to believe the answers (its trust bundle).
func (c *CertificateSigner) Root() *x509.Certificate { return c.Chain[len(c.Chain)-1] }

// SignAnswer signs xml.
func (c *CertificateSigner) SignAnswer(xml []byte) ([]byte, error) {
	var opts []signer.Option
	if c.Now != nil {
		opts = append(opts, signer.WithClock(c.Now))
	}
	if c.Profile == ProfileService {
		return signer.Sign(xml, c.Key, c.Chain, signer.PolicyV44, opts...)
	}
	return signer.SignBES(xml, c.Key, c.Chain[:1], opts...)
}

// Certificate is the certificate answers are signed with.
func (c *CertificateSigner) Certificate() *x509.Certificate { return c.Chain[0] }

// AnswerIdentification is the identification (cédula jurídica) of the
// certificate DefaultAnswerSigner mints: what a service given
// FACTURAD_HACIENDA_ANSWER_SIGNER expects of a sandbox's answers.
const AnswerIdentification = "4000000019"

// DefaultAnswerSigner mints the sandbox's own certificate, in the name of a
// fictitious "sandbox tax authority" under a fresh test CA, and signs with
// it. The key comes from certmint's test-key pool, so starting many
// sandboxes in one process is cheap.
func DefaultAnswerSigner() (*CertificateSigner, error) {
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02",
		Identificacion:     AnswerIdentification,
		Name:               "TAX AUTHORITY SANDBOX (FACTURAD)",
		Key:                certmint.TestKey(7),
		NotBefore:          time.Now().Add(-24 * time.Hour),
		NotAfter:           time.Now().AddDate(5, 0, 0),
	})
	if err != nil {
		return nil, err
	}
	return &CertificateSigner{Key: m.Key, Chain: []*x509.Certificate{m.Leaf, m.CA.Cert}}, nil
}

// amount reads a total written in the document for the answer; an
// unreadable one is left out (optional amounts) or written as zero.
func amount(s string) hacienda.Amount {
	a, err := hacienda.ParseAmount(s)
	if err != nil || a.IntegerDigits() > 13 || a.Places() > 5 {
		return hacienda.Amount{}
	}
	return a
}

// truncate cuts s to n runes.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// answer builds and signs the MensajeHacienda for d.
func (s *Sandbox) answer(d *document, accepted bool, lines []string) ([]byte, error) {
	in := d.info
	m := &hacienda.MensajeHacienda{
		Clave:                    d.Clave,
		NombreEmisor:             truncate(in.emisorNombre, 100),
		TipoIdentificacionEmisor: d.Emisor.TipoIdentificacion,
		NumeroCedulaEmisor:       d.Emisor.NumeroIdentificacion,
		NombreReceptor:           truncate(in.receptorNombre, 100),
		MontoTotalImpuesto:       amount(in.totalImpuesto),
		TotalFactura:             amount(in.totalFactura),
	}
	if m.NombreEmisor == "" {
		// A receptor message names nobody; the schema wants a name.
		m.NombreEmisor = d.Emisor.NumeroIdentificacion
	}
	if !m.TotalFactura.IsSet() {
		m.TotalFactura = hacienda.AmountFromInt(0)
	}
	recTipo, recNumero := in.receptorTipo, in.receptorNumero
	if d.Receptor != nil {
		recTipo, recNumero = d.Receptor.TipoIdentificacion, d.Receptor.NumeroIdentificacion
	}
	if hacienda.IsIDType(recTipo) && recNumero != "" {
		m.TipoIdentificacionReceptor, m.NumeroCedulaReceptor = recTipo, truncate(recNumero, 20)
	}
	if accepted {
		m.Mensaje, m.EstadoMensaje, m.DetalleMensaje = hacienda.MensajeAceptado, "Aceptado", detalleAceptado
	} else {
		var b strings.Builder
		b.WriteString(detalleProcesado + "\n\n" + detalleErrores + "\n")
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		m.Mensaje, m.EstadoMensaje, m.DetalleMensaje = hacienda.MensajeRechazado, "Rechazado", b.String()
	}
	unsigned, err := hacienda.MarshalMensajeHacienda(m)
	if err != nil {
		return nil, err
	}
	return s.signer.SignAnswer(unsigned)
}

// AnswerAuthority is the authority the sandbox's answers chain to, when
// they are signed by a CertificateSigner; nil otherwise.
func (s *Sandbox) AnswerAuthority() *x509.Certificate {
	if c, ok := s.signer.(*CertificateSigner); ok {
		return c.Root()
	}
	return nil
}
