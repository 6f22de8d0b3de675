package tenant

import (
	"context"
	"fmt"

	"facturad/hacienda/msg"
)

// The company fields of A.14, named as in forms, answers and errors.
const (
	FieldAmbiente             = "ambiente"
	FieldCuotaMensual         = "cuotaMensual"
	FieldCorreoNotificaciones = "correoNotificaciones"
)

// EnvironmentStore is what the Service needs of a store to keep companies
// in their environments (both store adapters implement it).
type EnvironmentStore interface {
	// AdoptEnvironment puts the companies, documents and received
	// documents stored before environments existed (their ambiente empty)
	// into ambiente, in one transaction, and returns how many companies it
	// moved. It reads the companies only when none is
	// left to adopt, so that calling it at every start costs nothing.
	AdoptEnvironment(ctx context.Context, ambiente string) (int, error)
	// UnsettledDocuments counts the company's documents and receiver's
	// messages numbered in ambiente that the tax authority has not
	// settled yet (states 00, 04, 05).
	UnsettledDocuments(ctx context.Context, companyID int64, ambiente string) (int, error)
	// ResetSequences sets the numbering sequences of the company's
	// branches to where its documents and messages numbered in ambiente
	// left them: the greatest number of each (branch, terminal, type), and
	// no sequence (the next number is 1) where there is none. A branch
	// numbers in one environment at a time, so a move starts the new
	// environment's numbering where that environment left it.
	ResetSequences(ctx context.Context, companyID int64, ambiente string) error
}

// resetSequences starts the numbering of a company that moved to ambiente
// where that environment left it. The move stands even should this fail:
// the next numbers then go on from the old environment's (no number is
// handed out twice, the first one is not 1); the failure is logged.
func (s *Service) resetSequences(ctx context.Context, companyID int64, ambiente string) {
	es, ok := s.store.(EnvironmentStore)
	if !ok {
		return
	}
	if err := es.ResetSequences(ctx, companyID, ambiente); err != nil {
		s.log.ErrorContext(ctx, "company moved, but its numbering could not start afresh in the new environment", "company", companyID, "ambiente", ambiente, "err", err)
	}
}

// AmbienteFor is the environment a company's new documents are numbered
// in: its own, or def for a company stored before environments existed
// and not adopted yet.
func AmbienteFor(c Company, def string) string {
	if c.Ambiente != "" {
		return c.Ambiente
	}
	return def
}

// AdoptEnvironment puts what was stored before environments existed into
// the service's default environment (see EnvironmentStore). The server
// calls it once at start; a store without environments is left alone.
func (s *Service) AdoptEnvironment(ctx context.Context) error {
	es, ok := s.store.(EnvironmentStore)
	if !ok {
		return nil
	}
	n, err := es.AdoptEnvironment(ctx, s.ambiente)
	if err != nil {
		return fmt.Errorf("adopt stored companies into %s: %w", s.ambiente, err)
	}
	if n > 0 {
		s.log.InfoContext(ctx, "companies stored before environments adopted into the default one", "ambiente", s.ambiente, "companies", n)
	}
	return nil
}

// checkMove refuses a change of environment that lacks what the new one
// needs: the tax authority issues credentials and certificates per
// environment, so a move takes the new environment's password and
// certificate in the same update; and a document numbered in the old
// environment is asked of that environment with the company's
// credentials, so the move waits for the old environment's documents to
// settle.
func (s *Service) checkMove(ctx context.Context, e *ValidationError, c Company, to string, newCert, newPassword bool) error {
	from := AmbienteFor(c, s.ambiente)
	if to == "" || to == from {
		return nil
	}
	if !newCert || !newPassword {
		e.Add(FieldAmbiente, msg.AmbienteCredentials.With(from, to, to))
		return nil
	}
	es, ok := s.store.(EnvironmentStore)
	if !ok {
		return nil
	}
	n, err := es.UnsettledDocuments(ctx, c.ID, from)
	if err != nil {
		return fmt.Errorf("company %d: documents not settled in %s: %w", c.ID, from, err)
	}
	if n > 0 {
		e.Add(FieldAmbiente, msg.AmbienteUnsettled.With(n, from, to))
	}
	return nil
}
