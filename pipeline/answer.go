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
// before its verdict is recorded: its XAdES signature (and, with
// AnswerRoots, that it chains to a trusted authority), and that it is about
// this document's issuer (sameClave has checked the clave). An answer that
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
// label and an error, or a nil error.
func (p *Pipeline) answerProblem(d *tenant.Document, st recepcion.Status) (string, error) {
	if st.Mensaje == nil {
		return "unreadable", errors.New("the answer has no MensajeHacienda")
	}
	if _, err := signer.VerifyWith(st.ResponseXML, signer.VerifyOptions{Roots: p.o.AnswerRoots}); err != nil {
		return "signature", err
	}
	if d.EmisorNumero != "" && !hacienda.SameNumber(st.Mensaje.NumeroCedulaEmisor, d.EmisorNumero) {
		return "issuer", fmt.Errorf("the answer names issuer %q, the document %q", st.Mensaje.NumeroCedulaEmisor, d.EmisorNumero)
	}
	return "", nil
}
