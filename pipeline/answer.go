package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/signer"
	"facturad/tenant"
)

// verifyAnswer checks a status before it is recorded. It must be about
// this document (its clave). A verdict (aceptado, rechazado) stands only on
// the tax authority's signed answer (MensajeHacienda): one must come with
// it, say the same (Mensaje 1 or 3), be about this document and its
// issuer, and carry a valid XAdES signature (with AnswerRoots, chaining to
// a trusted authority; with AnswerSigner, made by the tax authority's
// certificate), whatever policy it commits to. A status that fails is not applied: it is logged,
// counted, and treated as unreadable, so the document is asked about again
// later. On success st.Mensaje and st.Answer are what was read from the
// very bytes verified, st.ResponseXML, which are the ones stored.
func (p *Pipeline) verifyAnswer(ctx context.Context, d *tenant.Document, st *recepcion.Status) error {
	reason, err := p.answerProblem(d, st)
	if err == nil {
		return nil
	}
	p.metrics.answers.WithLabelValues(reason).Inc()
	p.log.WarnContext(ctx, "an answer of the tax authority was not applied", "clave", d.Clave, "reason", reason, "err", err)
	return &recepcion.TransportError{Op: recepcion.OpStatus, Kind: recepcion.KindUnreadable, Retryable: true,
		Err: fmt.Errorf("the tax authority's answer was not applied (%s): %w", reason, err)}
}

// answerProblem returns why the answer cannot be applied, as a metric
// label and an error, or a nil error. The signature, the costly check,
// comes last. The answer's content is read from the bytes whose signature
// is checked, never from another reading of them.
func (p *Pipeline) answerProblem(d *tenant.Document, st *recepcion.Status) (string, error) {
	if st.Clave != d.Clave {
		return "clave", fmt.Errorf("the status's clave %q is not the document's", st.Clave)
	}
	if !st.Estado.Final() && len(st.ResponseXML) == 0 {
		return "", nil // not a verdict: nothing signed to check
	}
	if len(st.ResponseXML) == 0 {
		return "unsigned", fmt.Errorf("ind-estado %q without the signed answer", st.Estado)
	}
	// The client's reading of the answer, unless it is not of these bytes.
	answer := st.Answer
	if answer == nil || !bytes.Equal(answer.Bytes(), st.ResponseXML) {
		var err error
		if answer, err = signer.Parse(st.ResponseXML); err != nil {
			return "unreadable", fmt.Errorf("the answer does not parse: %w", err)
		}
	}
	m, err := hacienda.ReadMensajeHacienda(answer.Root())
	if err != nil {
		return "unreadable", fmt.Errorf("the answer has no MensajeHacienda: %w", err)
	}
	switch {
	case !sameVerdict(st.Estado, m.Mensaje):
		return "verdict", fmt.Errorf("ind-estado %q but the signed answer says Mensaje %d", st.Estado, m.Mensaje)
	case m.Clave != answeredClave(d.Clave):
		return "clave", fmt.Errorf("the MensajeHacienda's clave %q is not the document's", m.Clave)
	case d.EmisorNumero != "" && !hacienda.SameNumber(m.NumeroCedulaEmisor, d.EmisorNumero):
		return "issuer", fmt.Errorf("the answer names issuer %q, the document %q", m.NumeroCedulaEmisor, d.EmisorNumero)
	}
	res, err := signer.VerifyParsed(answer, signer.VerifyOptions{AnyPolicy: true,
		Roots: p.o.AnswerRoots, Intermediates: p.o.AnswerIntermediates, Cache: p.answerCerts})
	if err != nil {
		return "signature", err
	}
	if p.o.AnswerSigner != "" {
		id, err := signer.CertificateIdentification(res.Certificate)
		if err != nil || id.Numero != p.o.AnswerSigner {
			return "signer", fmt.Errorf("the answer is signed by %q (identification %q), not by the tax authority (%s)",
				res.Certificate.Subject.CommonName, id.Numero, p.o.AnswerSigner)
		}
	}
	st.Mensaje, st.Answer = m, answer
	return "", nil
}

// sameVerdict reports whether ind-estado and the signed answer's Mensaje
// agree. A status that is not final may carry no answer, or one the tax
// authority is about to publish; only a final one must match.
func sameVerdict(e recepcion.Estado, mensaje int) bool {
	switch e {
	case recepcion.EstadoAceptado:
		return mensaje == hacienda.MensajeAceptado
	case recepcion.EstadoRechazado:
		return mensaje == hacienda.MensajeRechazado
	}
	return true
}

// answeredClave is the clave a MensajeHacienda about key names: key
// itself for a document, the supplier's document's clave for a receiver's
// message, which the tax authority knows as clave-consecutivoReceptor.
func answeredClave(key string) string {
	clave, _, _ := strings.Cut(key, "-")
	return clave
}
