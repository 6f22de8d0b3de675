package tenant

import (
	"errors"
	"fmt"
	"time"
)

// Submission is the state of a row the service submits to the tax
// authority, the same for both kinds: a document the company issues
// (Document) and the company's message on a document it received
// (ReceivedDocument) both embed it. The pipeline moves it through its
// phases (pipeline/lifecycle.go); the stores keep it, each save applying
// only from the phase the row was read in.
type Submission struct {
	// Phase is where the row stands; Estado, the public code, is always
	// Phase.Estado(). Both are stored.
	Phase  Phase
	Estado State
	// From is the phase the row had when it was read or last saved: a
	// save applies only while the stored phase is still From, so that of
	// two writers that read the row in one phase exactly one moves it out
	// of it. Set by the stores; the pipeline never writes it.
	From Phase

	SignedXML []byte // empty until signed

	// The tax authority's answer.
	IndEstado       string   // recibido, procesando, aceptado, rechazado, error
	CodigoMensaje   string   // 1 accepted, 3 rejected (MensajeHacienda/Mensaje)
	MensajeHacienda string   // its message
	DetalleMensaje  []string // DetalleMensaje split into lines
	ResponseXML     []byte   // the MensajeHacienda as received
	// LastError is the reason shown with the state (mensaje_api) and the
	// last failure, for operators (no secrets).
	LastError string

	// Attempts counts submissions and status checks by the background
	// worker; NextAttemptAt is when the service works on the row again
	// (zero: it waits for its company, see Waiting).
	Attempts      int
	NextAttemptAt time.Time
	SubmittedAt   time.Time
	CheckedAt     time.Time

	// Event, when pending, is the change of estado the next save writes to
	// the outbox in its own transaction (see Event); never stored on the
	// row, cleared by the save that wrote it.
	Event *Event
}

// Phase names where a submitted row stands, finer than its public estado:
// each estado but 01 and 02 has more than one way of being in it, and
// what the service does next depends on which.
type Phase string

// The phases. Beside its phase, a row's NextAttemptAt says whether the
// service works on it again on its own (set) or waits for its company
// (zero).
const (
	// PhaseNumbered (00): its number is taken and the call that took it
	// holds it until NextAttemptAt; after that the background worker
	// finishes it from its stored request.
	PhaseNumbered Phase = "numbered"
	// PhaseStopped (00): it cannot go on (no certificate, or a build or
	// signature that failed); LastError says why. A repeat of its request
	// resumes it.
	PhaseStopped Phase = "stopped"
	// PhaseHeld (05): signed and stored, and held by the call that submits
	// it until NextAttemptAt.
	PhaseHeld Phase = "held"
	// PhaseRetrying (05): the tax authority did not take it; the
	// background worker asks its status and submits it again after
	// NextAttemptAt.
	PhaseRetrying Phase = "retrying"
	// PhaseCredentials (05): the tax authority refused the company's
	// credentials; it waits for them to work again (credential stops).
	PhaseCredentials Phase = "credentials"
	// PhaseSubmitted (04): the tax authority took it; it is asked about
	// until its verdict.
	PhaseSubmitted Phase = "submitted"
	// PhaseAccepted (01) and PhaseRejected (02): the tax authority's
	// verdict. Final: nothing moves a row out of them.
	PhaseAccepted Phase = "accepted"
	PhaseRejected Phase = "rejected"
	// PhaseRefused (03): the tax authority refused it at reception, as
	// sent.
	PhaseRefused Phase = "refused"
	// PhaseFailed (03): the tax authority took it but kept reporting a
	// processing error (ind-estado error).
	PhaseFailed Phase = "failed"
)

// phaseTable is the one list of the phases, with their estado; usual
// marks the phase a row usually shows its estado in (PhaseFor).
var phaseTable = []struct {
	phase  Phase
	estado State
	usual  bool
}{
	{PhaseNumbered, StatePending, true},
	{PhaseStopped, StatePending, false},
	{PhaseHeld, StateNotSentYet, false},
	{PhaseRetrying, StateNotSentYet, true},
	{PhaseCredentials, StateNotSentYet, false},
	{PhaseSubmitted, StateSent, true},
	{PhaseAccepted, StateAccepted, true},
	{PhaseRejected, StateRejected, true},
	{PhaseRefused, StateError, false},
	{PhaseFailed, StateError, true},
}

// Phases returns every phase, in the order of the lifecycle.
func Phases() []Phase {
	out := make([]Phase, len(phaseTable))
	for i, r := range phaseTable {
		out[i] = r.phase
	}
	return out
}

// Estado is the public estado of a row in phase p; "" for an unknown
// phase.
func (p Phase) Estado() State {
	for _, r := range phaseTable {
		if r.phase == p {
			return r.estado
		}
	}
	return ""
}

// Final reports whether nothing may move a row out of phase p: the tax
// authority's verdict.
func (p Phase) Final() bool { return p.Estado().Final() }

// ErrFinal is a save that would move a row out of a final phase.
var ErrFinal = errors.New("a settled verdict cannot change")

// CheckSave is the stores' guard on a save of s: a known phase, the estado
// it implies, and never out of a final phase. A row read in a final phase
// may be saved again only in it.
func (s *Submission) CheckSave() error {
	switch {
	case s.Phase.Estado() == "":
		return fmt.Errorf("phase %q is not a phase", s.Phase)
	case s.Estado != s.Phase.Estado():
		return fmt.Errorf("estado %q is not the estado of phase %s (%s)", s.Estado, s.Phase, s.Phase.Estado())
	case s.From.Final() && s.Phase != s.From:
		return fmt.Errorf("from %s to %s: %w", s.From, s.Phase, ErrFinal)
	}
	return nil
}

// HeldAt reports whether a call holds the row at now: numbered or signed
// by a call (or the background worker that claimed it) that has not
// submitted it yet, and whose hold has not ended. A repeat of its request
// is told to come back.
func (s Submission) HeldAt(now time.Time) bool {
	return (s.Phase == PhaseNumbered || s.Phase == PhaseHeld) && now.Before(s.NextAttemptAt)
}

// StoppedOnCredentials reports whether the row waits for its company's
// credentials: stopped on them, with no next attempt.
func (s Submission) StoppedOnCredentials() bool {
	return s.Phase == PhaseCredentials && s.NextAttemptAt.IsZero()
}

// PhaseFor is the phase a row usually shows estado in (numbered,
// accepted, rejected, failed, submitted, retrying); "" for a code that is
// not a state. Tests and tools that set a row's estado directly use it;
// the pipeline moves rows by their phase.
func PhaseFor(estado State) Phase {
	for _, r := range phaseTable {
		if r.estado == estado && r.usual {
			return r.phase
		}
	}
	return ""
}

// Place puts s in estado, in the phase PhaseFor gives.
func (s *Submission) Place(estado State) { s.Phase, s.Estado = PhaseFor(estado), estado }
