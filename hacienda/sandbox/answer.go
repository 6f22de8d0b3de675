package sandbox

import (
	"crypto"
	"crypto/x509"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/beevik/etree"

	"facturad/signer"
	"facturad/signer/certmint"
)

// namespaceMensajeHacienda is the target namespace of
// MensajeHacienda_V4.4.xsd.
const namespaceMensajeHacienda = "https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/mensajeHacienda"

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

// CertificateSigner signs answers with a key and its certificate chain,
// through the service's own XAdES-EPES signer.
type CertificateSigner struct {
	Key   crypto.Signer
	Chain []*x509.Certificate
	// Now gives the signing time; nil means time.Now.
	Now func() time.Time
}

// SignAnswer signs xml.
func (c *CertificateSigner) SignAnswer(xml []byte) ([]byte, error) {
	var opts []signer.Option
	if c.Now != nil {
		opts = append(opts, signer.WithClock(c.Now))
	}
	return signer.Sign(xml, c.Key, c.Chain, signer.PolicyV44, opts...)
}

// Certificate is the certificate answers are signed with.
func (c *CertificateSigner) Certificate() *x509.Certificate { return c.Chain[0] }

// DefaultAnswerSigner mints the sandbox's own certificate, in the name of a
// fictitious "sandbox tax authority" under a fresh test CA, and signs with
// it. The key comes from certmint's test-key pool, so starting many
// sandboxes in one process is cheap.
func DefaultAnswerSigner() (*CertificateSigner, error) {
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02",
		Identificacion:     "4000000019",
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

// amountRE is what MensajeHacienda's amounts accept (xs:decimal, 18 digits,
// 5 of them decimals).
var amountRE = regexp.MustCompile(`^-?\d{1,13}(\.\d{1,5})?$`)

// truncate cuts s to n runes.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// answer builds and signs the MensajeHacienda for d.
func (s *Sandbox) answer(d *document, accepted bool, lines []string) ([]byte, error) {
	doc := etree.NewDocument()
	doc.CreateProcInst("xml", `version="1.0" encoding="UTF-8"`)
	root := doc.CreateElement("MensajeHacienda")
	root.CreateAttr("xmlns", namespaceMensajeHacienda)
	add := func(tag, text string) { root.CreateElement(tag).SetText(text) }

	in := d.info
	add("Clave", d.Clave)
	add("NombreEmisor", truncate(in.emisorNombre, 100))
	add("TipoIdentificacionEmisor", d.Emisor.TipoIdentificacion)
	add("NumeroCedulaEmisor", d.Emisor.NumeroIdentificacion)
	recTipo, recNumero := in.receptorTipo, in.receptorNumero
	if d.Receptor != nil {
		recTipo, recNumero = d.Receptor.TipoIdentificacion, d.Receptor.NumeroIdentificacion
	}
	if in.receptorNombre != "" {
		add("NombreReceptor", truncate(in.receptorNombre, 100))
	}
	if idTypes[recTipo] && recNumero != "" {
		add("TipoIdentificacionReceptor", recTipo)
		add("NumeroCedulaReceptor", truncate(recNumero, 20))
	}
	var detalle strings.Builder
	if accepted {
		add("Mensaje", "1")
		add("EstadoMensaje", "Aceptado")
		detalle.WriteString(detalleAceptado)
	} else {
		add("Mensaje", "3")
		add("EstadoMensaje", "Rechazado")
		detalle.WriteString(detalleProcesado + "\n\n" + detalleErrores + "\n")
		for _, l := range lines {
			detalle.WriteString(l + "\n")
		}
	}
	add("DetalleMensaje", detalle.String())
	if amountRE.MatchString(in.totalImpuesto) {
		add("MontoTotalImpuesto", in.totalImpuesto)
	}
	total := in.totalFactura
	if !amountRE.MatchString(total) {
		total = "0"
	}
	add("TotalFactura", total)

	doc.WriteSettings.CanonicalEndTags = true
	unsigned, err := doc.WriteToBytes()
	if err != nil {
		return nil, fmt.Errorf("write MensajeHacienda: %w", err)
	}
	return s.signer.SignAnswer(unsigned)
}
