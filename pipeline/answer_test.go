package pipeline

import (
	"bytes"
	"context"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/signer"
	"facturad/signer/certmint"
	"facturad/tenant"
)

// answerSubmitter rewrites the tax authority's answers on their way to the
// pipeline, as a forger between the two would.
type answerSubmitter struct {
	Submitter
	rewrite func(st *recepcion.Status)
	// keepMensaje leaves the status's reading of the answer as it was
	// before the rewrite, as a status whose parts disagree would.
	keepMensaje bool
}

func (a *answerSubmitter) Status(ctx context.Context, c recepcion.Credentials, key string) (recepcion.Status, error) {
	st, err := a.Submitter.Status(ctx, c, key)
	if err == nil && len(st.ResponseXML) > 0 {
		a.rewrite(&st)
		if m, perr := hacienda.ParseMensajeHacienda(st.ResponseXML); perr == nil && !a.keepMensaje {
			st.Mensaje = m
		}
	}
	return st, err
}

// TestForgedAnswersAreNotApplied sends a document the sandbox accepts and
// changes its answer on the way: an answer whose bytes were changed after
// signing, one signed by a key the service does not trust, and a
// well-signed one about another issuer are not applied; the genuine answer
// is.
func TestForgedAnswersAreNotApplied(t *testing.T) {
	forger, err := sandbox.DefaultAnswerSigner() // a CA of its own
	if err != nil {
		t.Fatal(err)
	}
	// A taxpayer of the same authority: a certificate the roots trust,
	// which is not the tax authority's.
	ca, err := certmint.NewCA(certmint.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mint := func(id string, key int) *sandbox.CertificateSigner {
		m, err := certmint.MintCertificate(certmint.Options{TipoIdentificacion: "02", Identificacion: id,
			Name: "FIRMANTE " + id, CA: ca, Key: certmint.TestKey(key)})
		if err != nil {
			t.Fatal(err)
		}
		return &sandbox.CertificateSigner{Key: m.Key, Chain: []*x509.Certificate{m.Leaf, ca.Cert}}
	}
	trusted, taxpayer := mint("4000000019", 7), mint("3101999999", 8)
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	authority, err := signer.CertificateIdentification(trusted.Certificate())
	if err != nil {
		t.Fatal(err)
	}

	resign := func(t *testing.T, s *sandbox.CertificateSigner, st *recepcion.Status, change func(m *hacienda.MensajeHacienda)) {
		m, err := hacienda.ParseMensajeHacienda(st.ResponseXML)
		if err != nil {
			t.Fatal(err)
		}
		m.Namespace = ""
		change(m)
		unsigned, err := hacienda.MarshalMensajeHacienda(m)
		if err != nil {
			t.Fatal(err)
		}
		if st.ResponseXML, err = s.SignAnswer(unsigned); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name        string
		rewrite     func(t *testing.T, st *recepcion.Status)
		reason      string
		keepMensaje bool
	}{
		{"error/tampered after signing", func(t *testing.T, st *recepcion.Status) {
			st.ResponseXML = bytes.Replace(st.ResponseXML, []byte("<EstadoMensaje>Aceptado</EstadoMensaje>"), []byte("<EstadoMensaje>Aceptada</EstadoMensaje>"), 1)
		}, "signature", false},
		{"error/signed by an untrusted key", func(t *testing.T, st *recepcion.Status) {
			resign(t, forger, st, func(m *hacienda.MensajeHacienda) { m.DetalleMensaje = "Aceptado por otro" })
		}, "signature", false},
		{"error/signed by a taxpayer the roots trust", func(t *testing.T, st *recepcion.Status) {
			resign(t, taxpayer, st, func(m *hacienda.MensajeHacienda) {})
		}, "signer", false},
		{"error/about another issuer", func(t *testing.T, st *recepcion.Status) {
			resign(t, trusted, st, func(m *hacienda.MensajeHacienda) { m.NumeroCedulaEmisor = "3101999999" })
		}, "issuer", false},
		{"error/about another document", func(t *testing.T, st *recepcion.Status) {
			resign(t, trusted, st, func(m *hacienda.MensajeHacienda) { m.Clave = strings.Repeat("5", 50) })
		}, "clave", false},
		{"error/ind-estado against the signed answer", func(t *testing.T, st *recepcion.Status) {
			st.Estado = recepcion.EstadoRechazado // the JSON is not signed
		}, "verdict", false},
		{"error/a verdict without the signed answer", func(t *testing.T, st *recepcion.Status) {
			st.ResponseXML, st.Mensaje = nil, nil
		}, "unsigned", false},
		{"error/a genuine answer about another document behind this one's reading", func(t *testing.T, st *recepcion.Status) {
			resign(t, trusted, st, func(m *hacienda.MensajeHacienda) { m.Clave = strings.Repeat("5", 50) })
		}, "clave", true},
		{"ok/genuine", func(t *testing.T, st *recepcion.Status) {}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, setupOptions{
				sandbox: sandbox.Options{AnswerSigner: trusted},
				pipeline: func(o *Options) {
					o.AnswerRoots, o.AnswerSigner = roots, authority.Numero
					o.Submitter = &answerSubmitter{Submitter: o.Submitter, rewrite: func(st *recepcion.Status) { tt.rewrite(t, st) }, keepMensaje: tt.keepMensaje}
				},
			})
			out := b.mustSend(t, request("01", "answer"))
			ck, err := b.p.Check(context.Background(), b.branch, out.Document.Clave)
			if err != nil && tt.reason == "" {
				t.Fatal(err)
			}
			d := b.stored(t, out.Document.Clave)
			refused := testutil.ToFloat64(b.p.metrics.answers.WithLabelValues(tt.reason))
			if tt.reason == "" {
				if d.Estado != tenant.StateAccepted || len(d.ResponseXML) == 0 {
					t.Fatalf("genuine answer: stored %s with %d bytes of answer", d.Estado, len(d.ResponseXML))
				}
				return
			}
			if d.Estado != tenant.StateSent || len(d.ResponseXML) != 0 || d.CodigoMensaje != "" {
				t.Fatalf("a forged answer was applied: stored %s codigo %q (check said %s)", d.Estado, d.CodigoMensaje, describe(ck))
			}
			if refused != 1 {
				t.Fatalf("answers_refused_total{reason=%q} = %v, want 1", tt.reason, refused)
			}
		})
	}
}
