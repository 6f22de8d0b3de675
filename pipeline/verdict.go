package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/signer"
	"facturad/tenant"
)

// Everything that turns what the tax authority said (or that it could not
// be heard) into a transition of a row: a failed submission (classifySubmit,
// afterSubmit), its answer about a key (applyStatus, after verifyAnswer), a
// failed attempt of the background worker (attemptFailed), and when to try
// again (backoff).

// verdict is what a failed submission means for its row and for the call's
// answer.
type verdict struct {
	// Phase is retrying (not taken: retried), credentials (stopped on the
	// company's credentials) or refused (refused as sent: not retried).
	// The call's mensaje_api_key is always KeySendingDocumentError.
	Phase tenant.Phase
	// Retry says the background worker tries again.
	Retry bool
	// Ask says the tax authority's word on the key decides before the
	// verdict is stored: it may hold the row despite the failure (a cut
	// answer), or a refusal may be "already received".
	Ask bool
	// Message is the mensaje_api.
	Message string
	// RetryAfter and InFlight bound the next attempt (nextAfterSubmit).
	RetryAfter time.Duration
	InFlight   bool
}

// credentialsMessage is the stored and answered message of a row stopped
// because the company's tax-authority credentials are missing, refused, or
// not allowed to act for the company.
const credentialsMessage = "The tax authority refused the company's tax-authority user or password, or the company has none, or the user may not act for this company; correct them (UsuarioHacienda, ContrasenaHacienda). The document is kept and sent as soon as they work: at once when the company's credentials are updated or the document is checked, otherwise when the service next tries them (within an hour)."

// classifySubmit turns a failure of a submission (its token, the limiter
// or the submission itself), as recepcion.Judge classifies it, into what
// it means for the row. A refusal of the row itself is final (03).
// Missing or refused credentials stop the row with no next attempt: the
// company's stop paces the retries (credstop.go). Everything else (the tax
// authority unreachable, slow, overloaded, or the way to it misconfigured)
// keeps the row in 05 and retries it.
func classifySubmit(err error) verdict {
	j := recepcion.Judge(err)
	v := verdict{
		Phase:      retrying,
		Retry:      true,
		Ask:        j.MaybeReceived && !j.InFlight,
		RetryAfter: j.RetryAfter,
		InFlight:   j.InFlight,
	}
	switch {
	case j.Kind == recepcion.Refused:
		v.Phase, v.Retry, v.Ask = refused, false, true
		v.Message = "The tax authority refused the document"
		if j.Reason != "" {
			v.Message += ": " + j.Reason
		}
	case j.Kind == recepcion.BadCredentials:
		v.Phase, v.Retry, v.Ask = credentials, false, false
		v.Message = credentialsMessage
	case j.SlowDown:
		v.Message = "The tax authority asked to slow down; the document is kept and will be sent again."
	case j.TimedOut:
		// Canceled: the call was given up on our side (shutdown, the
		// caller's timeout).
		v.Message = "The tax authority did not answer in time; the document is kept and will be sent again."
	case j.Kind == recepcion.Broken:
		v.Message = "The tax authority could not be reached (" + j.Reason + "); the document is kept and will be sent again."
	case j.Answered:
		v.Message = "The tax authority answered with an error (" + j.Reason + "); the document is kept and will be sent again."
	default:
		v.Message = "The tax authority could not be reached; the document is kept and will be sent again."
	}
	return v
}

// afterSubmit is the one step after every submission, of a call and of the
// background worker alike: it records in w what the submission's result
// err means. Taken: submitted. Failed: when the tax authority may hold the
// row, or refused it (perhaps as already received), its status is asked
// once and its word is recorded; otherwise, or when it does not know the
// key, the verdict v is recorded: retried after the backoff (never while
// the submission may still be in flight), stopped on the company's
// credentials, or refused. heard says w holds the tax authority's word (it
// took the row, or answered the status asked). The caller stores w.
func (p *Pipeline) afterSubmit(ctx context.Context, w row, err error, deadline time.Time) (v verdict, heard bool, merr error) {
	if err == nil {
		return verdict{}, true, p.markSubmitted(w)
	}
	v = classifySubmit(err)
	if v.Ask {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(p.o.SubmitTimeout, 5*time.Second))
		known, serr := p.askStatus(sctx, w)
		cancel()
		if serr == nil && known {
			return v, true, nil
		}
	}
	var next time.Time
	if v.Retry {
		next = p.nextAfterSubmit(v, max(w.Attempts-1, 0), deadline)
	} else if v.Phase == credentials {
		p.stopOnCredentials(ctx, w.companyID())
	}
	return v, false, move(w.Submission, tNotTaken, v.Phase, v.Message, next)
}

// nextAfterSubmit is when to try again after a failed submission, the
// n-th attempt's backoff (never sooner than a Retry-After the tax authority
// asked for); a submission that may still be in flight is not followed by
// anything, not even a status query, before its deadline plus
// InFlightMargin, when the tax authority has either received it or never
// will.
func (p *Pipeline) nextAfterSubmit(v verdict, n int, deadline time.Time) time.Time {
	next := p.o.Clock().Add(backoff(p.o.BackoffBase, p.o.BackoffMax, n, v.RetryAfter))
	if v.InFlight && !deadline.IsZero() {
		if settle := deadline.Add(p.o.InFlightMargin); settle.After(next) {
			next = settle
		}
	}
	return next
}

// markSubmitted records that the tax authority took the row: it is asked
// about after PollDelay, or with callbacks on once its callback is late
// (callbackLate).
func (p *Pipeline) markSubmitted(w row) error {
	now := p.o.Clock()
	wait := p.o.PollDelay
	if p.callbacks(w) {
		wait = p.callbackLate()
	}
	if err := move(w.Submission, tSubmitted, submitted, "", now.Add(wait)); err != nil {
		return err
	}
	w.SubmittedAt = now
	w.Attempts = 0
	return nil
}

// callbackLate is how long after its submission a document whose verdict
// the tax authority calls back with is first asked about: CallbackWait
// less a jitter of up to a third (60 to 90 s by default), so that a burst
// of documents whose callbacks were lost together is not asked about all
// at once.
func (p *Pipeline) callbackLate() time.Duration {
	d := p.o.CallbackWait
	if third := int64(d / 3); third > 0 {
		d -= time.Duration(rand.Int64N(third + 1))
	}
	return d
}

// pollAfter is how long the background worker waits before asking about
// w again after a non-final answer (recibido, procesando): usual, or,
// when the tax authority calls back with w's verdict, at least a backoff
// from CallbackWait doubling at each attempt up to SafetyPoll (less a
// jitter of up to half, as every backoff).
func (p *Pipeline) pollAfter(w row, usual time.Duration) time.Duration {
	if p.callbacks(w) {
		return max(usual, backoff(p.o.CallbackWait, p.o.SafetyPoll, w.Attempts, 0))
	}
	return usual
}

// phaseOfAnswer is the phase the tax authority's ind-estado puts a row
// in: its verdict; failed for its processing error, which processingError
// turns into a while in submitted first; submitted for recibido,
// procesando and anything the API may add.
func phaseOfAnswer(e recepcion.Estado) tenant.Phase {
	switch e {
	case recepcion.EstadoAceptado:
		return accepted
	case recepcion.EstadoRechazado:
		return rejected
	case recepcion.EstadoError:
		return failed
	}
	return submitted
}

// applyStatus records the tax authority's answer: the phase from
// ind-estado, and from the MensajeHacienda its code, message, detail lines
// and the answer XML itself. A row whose verdict is stored already keeps
// it: the transition is refused and logged.
func (p *Pipeline) applyStatus(ctx context.Context, w row, st recepcion.Status) {
	if w.Phase.Final() {
		return
	}
	now := p.o.Clock()
	w.IndEstado = string(st.Estado)
	w.CheckedAt = now
	if w.SubmittedAt.IsZero() {
		// Received through an attempt whose answer was lost.
		w.SubmittedAt = now
	}
	if st.Estado == recepcion.EstadoError {
		// A processing error on the tax authority's side, not a verdict
		// (spec §15.4): see processingError.
		p.processingError(ctx, w, now)
		return
	}
	if m := st.Mensaje; m != nil {
		w.CodigoMensaje = strconv.Itoa(m.Mensaje)
		w.MensajeHacienda = m.EstadoMensaje
		if w.MensajeHacienda == "" {
			switch m.Mensaje {
			case hacienda.MensajeAceptado:
				w.MensajeHacienda = "Aceptado"
			case hacienda.MensajeRechazado:
				w.MensajeHacienda = "Rechazado"
			}
		}
		w.DetalleMensaje = m.DetalleLines()
		if w.DetalleMensaje == nil {
			w.DetalleMensaje = []string{}
		}
		w.ResponseXML = st.ResponseXML
	}
	to := phaseOfAnswer(st.Estado)
	var next time.Time
	if to == submitted {
		next = now.Add(p.pollAfter(w, backoff(p.o.PollDelay, p.o.BackoffMax, w.Attempts, 0)))
	}
	p.judge(ctx, w, to, "", next)
}

// judge records the tax authority's word with tJudged, which every phase
// but a verdict may take: a refusal here is a bug, logged.
func (p *Pipeline) judge(ctx context.Context, w row, to tenant.Phase, reason string, next time.Time) {
	if err := move(w.Submission, tJudged, to, reason, next); err != nil {
		p.log.ErrorContext(ctx, "record the tax authority's answer", "key", w.key(), "err", err)
	}
}

// processingError records an ind-estado "error": a processing error at the
// tax authority, which may still judge the row (spec §15.4). The row stays
// submitted and is asked about again with backoff; once the tax authority
// still answers "error" ErrorFor after the submission, it ends failed (03)
// with a message saying so (a check call may still ask).
func (p *Pipeline) processingError(ctx context.Context, w row, now time.Time) {
	if now.Sub(w.SubmittedAt) >= p.o.ErrorFor {
		p.judge(ctx, w, failed, "The tax authority still reports a processing error (ind-estado error) "+
			now.Sub(w.SubmittedAt).Round(time.Minute).String()+" after the document was received; "+
			"it is no longer asked automatically. Check the document to ask again, or contact the tax authority.", time.Time{})
		return
	}
	p.judge(ctx, w, submitted, "The tax authority reported a processing error (ind-estado error); it will be asked again.",
		now.Add(backoff(p.o.PollDelay, p.o.BackoffMax, w.Attempts, 0)))
}

// attemptFailed schedules the next attempt with exponential backoff and
// jitter, never sooner than a Retry-After the tax authority asked for. A
// submitted row stays submitted with its message: only its answer could
// not be had; a row not taken yet is retried.
func (p *Pipeline) attemptFailed(w row, err error, msg string) {
	reason, to := w.LastError, w.Phase
	if w.Estado == tenant.StateNotSentYet {
		reason, to = msg, retrying
	}
	wait := backoff(p.o.BackoffBase, p.o.BackoffMax, w.Attempts-1, recepcion.Judge(err).RetryAfter)
	p.workerMove(w, tAskFailed, to, reason, p.o.Clock().Add(wait))
}

// workerMove applies a transition for the background worker, which has
// nobody to answer: a refused one (a bug) is logged and reported false.
func (p *Pipeline) workerMove(w row, t transition, to tenant.Phase, reason string, next time.Time) bool {
	if err := move(w.Submission, t, to, reason, next); err != nil {
		p.log.Error("background worker: a transition was refused", "key", w.key(), "err", err)
		return false
	}
	return true
}

// verifyAnswer checks a status before it is recorded. It must be about
// its subject (its key). A verdict (aceptado, rechazado) stands only on
// the tax authority's signed answer (MensajeHacienda): one must come with
// it, say the same (Mensaje 1 or 3), be about this clave and its issuer,
// and carry a valid XAdES signature (with AnswerRoots, chaining to a
// trusted authority; with AnswerSigner, made by the tax authority's
// certificate), whatever policy it commits to. A status that fails is not
// applied: it is logged, counted, and treated as unreadable, so the row is
// asked about again later. On success st.Mensaje and st.Answer are what
// was read from the very bytes verified, st.ResponseXML, which are the
// ones stored.
func (p *Pipeline) verifyAnswer(ctx context.Context, s subject, st *recepcion.Status) error {
	reason, err := p.answerProblem(s, st)
	if err == nil {
		return nil
	}
	p.metrics.answers.WithLabelValues(reason).Inc()
	p.log.WarnContext(ctx, "an answer of the tax authority was not applied", "key", s.key, "reason", reason, "err", err)
	return &recepcion.TransportError{Op: recepcion.OpStatus, Kind: recepcion.KindUnreadable, Retryable: true,
		Err: fmt.Errorf("the tax authority's answer was not applied (%s): %w", reason, err)}
}

// answerProblem returns why the answer cannot be applied, as a metric
// label and an error, or a nil error. The signature, the costly check,
// comes last. The answer's content is read from the bytes whose signature
// is checked, never from another reading of them.
func (p *Pipeline) answerProblem(s subject, st *recepcion.Status) (string, error) {
	if st.Clave != s.key {
		return "clave", fmt.Errorf("the status's clave %q is not the one asked about", st.Clave)
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
	case m.Clave != s.clave:
		return "clave", fmt.Errorf("the MensajeHacienda's clave %q is not the one asked about", m.Clave)
	case s.issuer != "" && !hacienda.SameNumber(m.NumeroCedulaEmisor, s.issuer):
		return "issuer", fmt.Errorf("the answer names issuer %q, the document %q", m.NumeroCedulaEmisor, s.issuer)
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

// heldRetryAfter is the Retry-After of a repeat that finds its row held
// by whoever works on it (a call, or the background worker that claimed
// it). A live holder usually finishes within a second or two, and a dead
// one keeps the row until its lease ends: the wait grows with how long the
// row has been held (at least OverloadRetryAfter), never past the end of
// the hold.
func (p *Pipeline) heldRetryAfter(w row) time.Duration {
	now := p.o.Clock()
	left := w.NextAttemptAt.Sub(now)
	if w.NextAttemptAt.IsZero() || left < p.o.OverloadRetryAfter {
		return p.o.OverloadRetryAfter
	}
	left = min(left.Round(time.Second)+time.Second, p.o.Lease+p.o.InFlightGrace)
	heldFor := now.Sub(w.updatedAt()).Round(time.Second)
	return min(max(heldFor, p.o.OverloadRetryAfter), left)
}

// backoff is the wait before attempt number n+1 (n ≥ 0): base·2ⁿ capped at
// max, less a random jitter of up to half of it, and never less than floor
// (a Retry-After the tax authority asked for).
func backoff(base, max time.Duration, n int, floor time.Duration) time.Duration {
	d := base
	for i := 0; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	if half := int64(d / 2); half > 0 {
		d -= time.Duration(rand.Int64N(half + 1))
	}
	if d < floor {
		d = floor
	}
	return d
}
