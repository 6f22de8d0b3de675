package tenant

import (
	"context"
	"errors"
	"time"
)

// Event is a change of a document's (or received document's) estado,
// waiting to be written to the outbox by the save that persists it
// (docs/design/delivery.md). The pipeline sets it on the row when it
// changes the row's phase and fills it in just before the save, when the
// estado saved differs from the one read (Submission.From's); the store
// writes a delivery for every webhook of the company that asked for Name
// (and an e-mail delivery when Email is not empty) in the same transaction
// as the row, so that a crash never loses nor invents an event. The save
// clears it once written. It is never stored on the row itself.
type Event struct {
	// Announce makes an event even when the estado stays the same (a
	// document stopped in 00 with a reason).
	Announce bool

	// What the store writes; nothing is written while Name is empty.
	ID      string    // unique, for the receiver's de-duplication
	Name    string    // documento.aceptado, recibido.rechazado...
	Created time.Time // when the change was saved
	Clave   string    // the document's clave, for the delivery log
	// Payload is the JSON of the row's answer (A.5 Document, A.11
	// received document) as of the change, so that every retry sends the
	// same body.
	Payload []byte
	// Email lists the addresses an accepted document is mailed to; empty
	// for everything else, or when e-mail is not configured.
	Email []string
}

// Pending reports whether the store has an event to write.
func (e *Event) Pending() bool { return e != nil && e.Name != "" }

// Event names: a prefix for documents and one for received documents (our
// receiver's message), and the name of each estado.
const (
	EventDocumentPrefix = "documento."
	EventReceivedPrefix = "recibido."
)

// EventNames lists every event a webhook may ask for: documents first,
// then received documents, then the tenant events (TenantEventNames).
func EventNames() []string {
	var out []string
	for _, prefix := range []string{EventDocumentPrefix, EventReceivedPrefix} {
		for _, s := range States() {
			out = append(out, prefix+EventState(s))
		}
	}
	return append(out, TenantEventNames()...)
}

// Webhook is a company's subscription: events named in Eventos are posted
// to URL, signed with the secret (stored sealed: it is needed to sign).
type Webhook struct {
	ID           int64
	CompanyID    int64
	URL          string
	Eventos      []string
	SealedSecret []byte
	CreatedAt    time.Time
}

// DeliveryState is where one delivery stands.
type DeliveryState string

// The delivery states.
const (
	DeliveryPending   DeliveryState = "pendiente" // waiting for its next attempt
	DeliveryDelivered DeliveryState = "entregado" // a 2xx answer (webhook) or accepted by the SMTP server (e-mail)
	DeliveryFailed    DeliveryState = "fallido"   // given up: out of time, or refused for good
)

// Delivery is one event to one webhook, with what its attempts gave.
type Delivery struct {
	ID        int64
	WebhookID int64
	CompanyID int64
	EventID   string
	Evento    string
	Clave     string
	Created   time.Time // the event's creation
	Payload   []byte

	Attempts      int
	NextAttemptAt time.Time // zero once delivered or failed
	LastAttemptAt time.Time
	LastStatus    int    // the HTTP status of the last answer; 0 when none came
	LastError     string // why the last attempt failed; "" after a success
	DeliveredAt   time.Time
	FailedAt      time.Time
}

// State is the delivery's state.
func (d Delivery) State() DeliveryState { return deliveryState(d.DeliveredAt, d.FailedAt) }

// deliveryState is the state of an outbox row delivered (or sent) at
// done and given up at failed, each zero when it was not.
func deliveryState(done, failed time.Time) DeliveryState {
	switch {
	case !done.IsZero():
		return DeliveryDelivered
	case !failed.IsZero():
		return DeliveryFailed
	}
	return DeliveryPending
}

// Endpoint is a webhook claimed for delivery: only its holder attempts its
// deliveries until LeaseUntil.
type Endpoint struct {
	Webhook
	LeaseUntil time.Time
}

// AttemptResult is the outcome of one attempt, recorded on its delivery.
type AttemptResult struct {
	At     time.Time
	Status int    // HTTP status, 0 when no answer came
	Error  string // "" on success
	// Next is when to try again; zero with Error set means given up
	// (failed), zero without Error means delivered.
	Next time.Time
}

// DeliveryPage asks for a page of a webhook's deliveries, newest first:
// those with an id below Before (0: from the newest), at most Limit.
type DeliveryPage struct {
	Before int64
	Limit  int
}

// ErrWebhookLimit is a webhook refused because its company has as many as
// it may have.
var ErrWebhookLimit = errors.New("the company has as many webhooks as it may have")

// WebhookStore keeps webhooks and the outbox of their deliveries. Both
// store adapters implement it; the outbox rows are written by
// SaveDocument and SaveReceived (see Event).
type WebhookStore interface {
	// CreateWebhook inserts w and sets its ID and CreatedAt, unless the
	// company already has limit webhooks (ErrWebhookLimit). The count and
	// the insert are one atomic step: creates at once never leave the
	// company with more than limit. A company that does not exist is
	// ErrNotFound.
	CreateWebhook(ctx context.Context, w *Webhook, limit int) error
	// Webhooks lists a company's webhooks by id.
	Webhooks(ctx context.Context, companyID int64) ([]Webhook, error)
	// Webhook returns one webhook of the company (ErrNotFound when it is
	// another company's).
	Webhook(ctx context.Context, companyID, id int64) (Webhook, error)
	// DeleteWebhook removes a webhook of the company and its deliveries,
	// pending ones included.
	DeleteWebhook(ctx context.Context, companyID, id int64) error
	// Deliveries returns a page of the webhook's deliveries, newest first.
	Deliveries(ctx context.Context, webhookID int64, page DeliveryPage) ([]Delivery, error)

	// ClaimEndpoints leases up to limit webhooks that have a delivery due
	// at now and are not leased by anyone (or whose lease ended), the least
	// recently leased first, until leaseUntil, to holder. Replicas never
	// hold one webhook at once, so a webhook's concurrency limit holds
	// over all of them.
	ClaimEndpoints(ctx context.Context, holder string, now, leaseUntil time.Time, limit int) ([]Endpoint, error)
	// RenewEndpoint extends holder's lease of a webhook; false when holder
	// no longer holds it.
	RenewEndpoint(ctx context.Context, holder string, webhookID int64, leaseUntil time.Time) (bool, error)
	// ReleaseEndpoint ends holder's lease at now (it goes to the back of
	// the line for the next claims).
	ReleaseEndpoint(ctx context.Context, holder string, webhookID int64, now time.Time) error
	// DueDeliveries returns up to limit deliveries of a webhook due at now,
	// oldest due first. Only the endpoint's holder asks.
	DueDeliveries(ctx context.Context, webhookID int64, now time.Time, limit int) ([]Delivery, error)
	// RecordAttempt counts one attempt of a delivery and stores its
	// outcome.
	RecordAttempt(ctx context.Context, deliveryID int64, r AttemptResult) error
	// DeliveryBacklog counts the pending webhook deliveries and returns
	// the creation time of the oldest (zero when none).
	DeliveryBacklog(ctx context.Context) (pending int, oldest time.Time, err error)
	// PurgeDeliveries deletes settled outbox rows (delivered or failed,
	// never pending) created before before, the oldest first: up to limit
	// webhook deliveries and up to limit e-mails. It returns how many of
	// each it deleted. Replicas may call it at once: a row is deleted by
	// one of them.
	PurgeDeliveries(ctx context.Context, before time.Time, limit int) (webhooks, emails int, err error)
}

// EmailDelivery is an accepted document's e-mail to its receptor, or a
// tenant event's to its company's notice addresses (a notice: Evento set,
// DocumentID 0).
type EmailDelivery struct {
	ID         int64
	CompanyID  int64
	DocumentID int64 // 0 for a notice
	Clave      string
	Recipients []string
	Created    time.Time

	// A notice's event: its name, id and data (the JSON its webhooks
	// get, api.TenantEventData). Empty for a document's e-mail.
	Evento  string
	EventID string
	Payload []byte

	Attempts      int
	NextAttemptAt time.Time
	LastAttemptAt time.Time
	LastError     string
	// Rejected lists the addresses the SMTP server refused for good (a
	// 5xx at RCPT), with its answer; the others were sent to.
	Rejected []EmailRejection
	SentAt   time.Time
	FailedAt time.Time
}

// State is the e-mail's state.
func (e EmailDelivery) State() DeliveryState { return deliveryState(e.SentAt, e.FailedAt) }

// EmailRejection is an address the SMTP server refused, with its answer.
type EmailRejection struct {
	Address string `json:"correo"`
	Code    int    `json:"codigo"`
	Message string `json:"mensaje"`
}

// EmailResult is the outcome of one e-mail attempt.
type EmailResult struct {
	At       time.Time
	Error    string // "" when sent
	Rejected []EmailRejection
	// Next is when to try again; zero with Error set means given up.
	Next time.Time
}

// EmailStore keeps the outbox of e-mails. Both store adapters implement
// it; the rows are written by SaveDocument (a document's) and
// RecordTenantEvent (a notice).
type EmailStore interface {
	// ClaimDueEmails returns up to limit e-mails due at now, oldest due
	// first, and moves their next attempt to leaseUntil in the same
	// transaction, so that two replicas never claim the same one.
	ClaimDueEmails(ctx context.Context, now, leaseUntil time.Time, limit int) ([]EmailDelivery, error)
	// RecordEmail counts one attempt and stores its outcome.
	RecordEmail(ctx context.Context, id int64, r EmailResult) error
	// DocumentEmails returns a document's e-mails, oldest first (never a
	// notice).
	DocumentEmails(ctx context.Context, documentID int64) ([]EmailDelivery, error)
	// RequeueEmails makes a document's failed e-mails pending again, due
	// at at (an operator's resend once the cause is fixed): their failure
	// time goes, their attempts and last error stay until the next
	// attempt. Sent and pending e-mails are left alone. It returns how
	// many it re-queued.
	RequeueEmails(ctx context.Context, documentID int64, at time.Time) (int, error)
	// RequeueFailedEmails is RequeueEmails in bulk, for an operator
	// after a fault of the mail server or of its configuration: the
	// failed e-mails (notices included) created at or after since, of one
	// company when companyID is not 0, become pending again, due at at.
	RequeueFailedEmails(ctx context.Context, since time.Time, companyID int64, at time.Time) (int, error)
	// EmailBacklog counts the pending e-mails and returns the creation
	// time of the oldest (zero when none).
	EmailBacklog(ctx context.Context) (pending int, oldest time.Time, err error)
}
