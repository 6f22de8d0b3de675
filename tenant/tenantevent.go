package tenant

import (
	"context"
	"fmt"
	"slices"
	"time"

	"facturad/hacienda/api"
)

// Tenant events (A.14): what the service tells a company about itself,
// through the company's webhooks and by e-mail to its
// CorreoNotificaciones, each occasion once (docs/design/tenant-events.md).
const (
	// EventCertificateExpiring: the certificate has 30 days or fewer left
	// (once), and again at 7 or fewer.
	EventCertificateExpiring = api.EventCertificadoPorVencer
	// EventCertificateExpired: the certificate has expired.
	EventCertificateExpired = api.EventCertificadoVencido
	// EventCredentialsRefused: the tax authority refused the company's
	// credentials (a credential stop began).
	EventCredentialsRefused = api.EventCredencialesRechazadas
	// EventDocumentsStuck: documents still unsettled an hour after they
	// were numbered.
	EventDocumentsStuck = api.EventDocumentosDetenidos
)

// TenantEventNames lists the tenant events, in the order above.
func TenantEventNames() []string {
	return []string{EventCertificateExpiring, EventCertificateExpired, EventCredentialsRefused, EventDocumentsStuck}
}

// TenantEvent is one event about a company, for TenantEventStore.
// RecordTenantEvent to record once per occasion. Occasions are what the
// event is about, each announced once per company and event name whoever
// records it and however often: the stages of a certificate's expiry
// ("30d:<expiry>", "7d:<expiry>", "<expiry>"), the start of a credential
// stop, the claves of stuck documents. An event records the occasions not
// recorded before and, when there are any, writes its outbox rows for
// them; one that finds them all recorded writes nothing.
type TenantEvent struct {
	CompanyID int64
	Name      string
	ID        string    // unique, for the receivers' de-duplication
	Created   time.Time // when the event was made
	Occasions []string
	// Email lists the notice addresses (the company's
	// CorreoNotificaciones); empty when it has none or e-mail is off.
	Email []string
	// Payload renders the event's data (api.TenantEventData's JSON) for
	// the occasions this event records (those of Occasions not recorded
	// before, in Occasions' order), once, inside the store's transaction:
	// every delivery and the e-mail carry the same bytes.
	Payload func(recorded []string) ([]byte, error)
}

// Check refuses an event a store must not record.
func (e TenantEvent) Check() error {
	switch {
	case e.CompanyID <= 0:
		return fmt.Errorf("tenant event: no company")
	case !slices.Contains(TenantEventNames(), e.Name):
		return fmt.Errorf("tenant event: %q is not a tenant event", e.Name)
	case e.ID == "" || e.Created.IsZero() || e.Payload == nil:
		return fmt.Errorf("tenant event %s: no id, time or payload", e.Name)
	case len(e.Occasions) == 0 || slices.Contains(e.Occasions, ""):
		return fmt.Errorf("tenant event %s: no occasion", e.Name)
	}
	return nil
}

// TenantEventStore records the tenant events and answers the questions
// that find their occasions. Both store adapters implement it;
// tenant/storetest runs its conformance suite over both.
type TenantEventStore interface {
	// RecordTenantEvent records ev's occasions that the company's ev.Name
	// has not recorded before and, in the same transaction when there are
	// any, writes ev to the outbox: a delivery (its data ev.Payload of the
	// occasions recorded) for each webhook of the company that asked for
	// ev.Name, and an e-mail to ev.Email when it is not empty. It returns
	// the occasions recorded, in ev.Occasions' order; none (and nothing
	// written) when every one was recorded before. Recorders at once, in
	// one process or several, record each occasion once: one of them
	// writes it, the others find it recorded.
	RecordTenantEvent(ctx context.Context, ev TenantEvent) ([]string, error)
	// ExpiringCertificates returns a page of the active companies whose
	// certificate expires before q.Before, by expiry then company id.
	ExpiringCertificates(ctx context.Context, q CertificateQuery) ([]CompanyCertificate, error)
	// StuckDocuments returns a page of the documents not settled (00, 04,
	// 05) that were numbered before q.NumberedBefore, the oldest first
	// (by the time they were numbered, then id), with their companies.
	// They are read through the index of unsettled documents
	// (documents_waiting), whose size is the unsettled documents', however
	// many are settled.
	StuckDocuments(ctx context.Context, q StuckQuery) ([]StuckDocument, error)
}

// CertificateQuery asks for a page of ExpiringCertificates.
type CertificateQuery struct {
	// Before: certificates expiring strictly before it.
	Before time.Time
	// OwnerID, when not 0, keeps the companies of that reseller only.
	OwnerID int64
	// After, when set, starts after that row (At the expiry, ID the
	// company's id).
	After *ListKey
	// Limit is how many rows to return, 1 to MaxListLimit+1.
	Limit int
}

// Check refuses a query a store must not run.
func (q CertificateQuery) Check() error {
	switch {
	case q.Before.IsZero():
		return fmt.Errorf("expiring certificates: no date")
	case q.Limit < 1 || q.Limit > MaxListLimit+1:
		return fmt.Errorf("expiring certificates: limit %d is not between 1 and %d", q.Limit, MaxListLimit+1)
	case q.After != nil && q.After.ID <= 0:
		return fmt.Errorf("expiring certificates: cursor id %d", q.After.ID)
	}
	return nil
}

// CompanyCertificate is a company with its certificate's expiry, as
// ExpiringCertificates lists it.
type CompanyCertificate struct {
	CompanyID            int64
	OwnerID              int64
	NumeroIdentificacion string
	RazonSocial          string
	Ambiente             string
	CorreoNotificaciones string
	Expiry               time.Time
}

// ListKey is the row's place in the list: its expiry, then its id.
func (c CompanyCertificate) ListKey() ListKey {
	return ListKey{At: c.Expiry.UTC().Truncate(time.Microsecond), ID: c.CompanyID}
}

// StuckQuery asks for a page of StuckDocuments.
type StuckQuery struct {
	// NumberedBefore: documents numbered strictly before it.
	NumberedBefore time.Time
	// OwnerID, when not 0, keeps the documents of that reseller's
	// companies only.
	OwnerID int64
	// Unannounced leaves out the documents a documentos.detenidos named
	// already (the hourly sweep's question).
	Unannounced bool
	// After, when set, starts after that row (At when it was numbered, ID
	// the document's id).
	After *ListKey
	// Limit is how many rows to return, 1 to MaxStuckScan.
	Limit int
}

// MaxStuckScan is the most stuck documents one sweep reads, and one call
// of StuckDocuments returns.
const MaxStuckScan = 10_000

// Check refuses a query a store must not run.
func (q StuckQuery) Check() error {
	switch {
	case q.NumberedBefore.IsZero():
		return fmt.Errorf("stuck documents: no time")
	case q.Limit < 1 || q.Limit > MaxStuckScan:
		return fmt.Errorf("stuck documents: limit %d is not between 1 and %d", q.Limit, MaxStuckScan)
	case q.After != nil && q.After.ID <= 0:
		return fmt.Errorf("stuck documents: cursor id %d", q.After.ID)
	}
	return nil
}

// StuckDocument is a document not settled long after it was numbered,
// with its company, as StuckDocuments lists it.
type StuckDocument struct {
	DocumentID int64
	Clave      string
	Estado     State
	// NumberedAt is when it was numbered (its CreatedAt).
	NumberedAt time.Time
	// WaitsForCaller: it has no next attempt, so only its company can
	// move it on (WaitingCaller).
	WaitsForCaller bool

	CompanyID            int64
	NumeroIdentificacion string
	RazonSocial          string
	Ambiente             string // the company's
	CorreoNotificaciones string
}

// ListKey is the row's place in the list: when it was numbered, then its
// id.
func (d StuckDocument) ListKey() ListKey {
	return ListKey{At: d.NumberedAt.UTC().Truncate(time.Microsecond), ID: d.DocumentID}
}
