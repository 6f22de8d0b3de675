package pipeline

import (
	"errors"
	"fmt"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/signer"
	"facturad/tenant"
)

// verifyAnswer checks the tax authority's signed answer (MensajeHacienda)
// before its verdict is recorded: that it is about this document (its
// clave) and this document's issuer, and its XAdES signature (with
// AnswerRoots, that it chains to a trusted authority). An answer that
// fails is not applied: it is logged, counted, and treated as unreadable,
// so the document is asked about again later.
func (p *Pipeline) verifyAnswer(d *tenant.Document, st recepcion.Status) error {
	if len(st.ResponseXML) == 0 {
		return nil // not final yet: nothing signed to check
	}
	reason, err := p.answerProblem(d, st)
	if err == nil {
		return nil
	}
	p.metrics.answers.WithLabelValues(reason).Inc()
	p.log.Warn("an answer of the tax authority was not applied", "clave", d.Clave, "reason", reason, "err", err)
	return &recepcion.TransportError{Op: recepcion.OpStatus, Kind: recepcion.KindUnreadable, Retryable: true,
		Err: fmt.Errorf("the tax authority's answer was not applied (%s): %w", reason, err)}
}

// answerProblem returns why the answer cannot be applied, as a metric
// label and an error, or a nil error. The signature, the costly check,
// comes last.
func (p *Pipeline) answerProblem(d *tenant.Document, st recepcion.Status) (string, error) {
	m := st.Mensaje
	switch {
	case m == nil:
		return "unreadable", errors.New("the answer has no MensajeHacienda")
	case m.Clave != d.Clave:
		return "clave", fmt.Errorf("the MensajeHacienda's clave %q is not the document's", m.Clave)
	case d.EmisorNumero != "" && !hacienda.SameNumber(m.NumeroCedulaEmisor, d.EmisorNumero):
		return "issuer", fmt.Errorf("the answer names issuer %q, the document %q", m.NumeroCedulaEmisor, d.EmisorNumero)
	}
	if _, err := signer.VerifyWith(st.ResponseXML, signer.VerifyOptions{Roots: p.o.AnswerRoots}); err != nil {
		return "signature", err
	}
	return "", nil
}
