package tenant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// The audit log (A.14): every change made through the API, and by the
// operator's commands that change data, is recorded as an AuditEntry: who
// made it, when, under which request id, to which company, what kind of
// change it was (its action) and the names of the fields the request
// carried. Never a value: a password, a PIN, a certificate, a token or a
// webhook secret is a field name here at most. Entries are never deleted
// by the service (docs/design/audit.md).

// The actions the audit log records, as its accion field spells them: the
// subject, a dot, and the Spanish verb of the change.
const (
	AuditCompanyCreate   = "compania.crear"      // a company with its first branch and user
	AuditCompanyUpdate   = "compania.actualizar" // a company's form (certificate, quota... included)
	AuditBranchCreate    = "sucursal.crear"      // a branch with its first user
	AuditBranchUpdate    = "sucursal.actualizar" // a branch's details
	AuditUserCreate      = "usuario.crear"       // another API user of a branch
	AuditUserUpdate      = "usuario.actualizar"  // an API user switched on or off
	AuditTokenRotate     = "token.rotar"         // an API user's token replaced
	AuditResellerCreate  = "revendedor.crear"    // a reseller (the platform's)
	AuditWebhookCreate   = "webhook.crear"       // a webhook registered
	AuditWebhookDelete   = "webhook.borrar"      // a webhook removed
	AuditEmailRequeue    = "correo.reenviar"     // failed e-mails made pending again
	AuditDocumentRequeue = "documento.reencolar" // stopped documents made due again
	AuditDocumentVoid    = "documento.anular"    // a credit note crediting an accepted document (A.15)
	AuditDocumentPayment = "documento.pagar"     // a payment receipt lowering a credit sale's balance (A.15)
	AuditAdminReset      = "admin.restablecer"   // the bootstrap admin's credentials reset
)

// Bounds of an entry's field names: a request names a few dozen fields at
// most, so more, or longer names, are not a request's own fields but
// noise, which the log does not keep.
const (
	// MaxAuditFields is the most field names an entry keeps (the first
	// ones in byte order).
	MaxAuditFields = 64
	// MaxAuditFieldLen is the most characters of a field name kept.
	MaxAuditFieldLen = 64
	// MaxAuditText bounds an entry's user name, request id and action,
	// in characters.
	MaxAuditText = 128
)

// AuditEntry is one change in the audit log.
type AuditEntry struct {
	ID int64
	// At is when the change was made, UTC to the microsecond as stored.
	At time.Time
	// UserID and Username name who made it: the API user, or for a
	// command of the operator's (facturad requeue, facturad admin-reset)
	// id 0 and the command's name.
	UserID   int64
	Username string
	// RequestID is the request's X-Request-Id (a command makes its own).
	RequestID string
	// CompanyID is the company changed; 0 for the platform's own changes
	// (a reseller created, the admin reset, a re-queue of every company's
	// documents), which only an admin reads.
	CompanyID int64
	// Action is one of the Audit* names.
	Action string
	// Fields are the names of the fields the request carried, as it spelt
	// them (top-level JSON keys, form and file fields; a command's flags),
	// without duplicates, in byte order; never their values.
	Fields []string
}

// ListKey returns e's place in its company's log: newest first by time,
// then by id.
func (e AuditEntry) ListKey() ListKey {
	return ListKey{At: e.At.UTC().Truncate(time.Microsecond), ID: e.ID}
}

// AuditQuery selects one page of a company's audit log.
type AuditQuery struct {
	// CompanyID is the company whose log it is; 0 is the platform's.
	CompanyID int64
	// After, when set, starts the page after that entry (the last of the
	// page before).
	After *ListKey
	// Limit is how many entries to return, 1 to MaxListLimit+1.
	Limit int
}

// Check refuses a query a store must not run.
func (q AuditQuery) Check() error {
	switch {
	case q.CompanyID < 0:
		return fmt.Errorf("audit log: company %d", q.CompanyID)
	case q.Limit < 1 || q.Limit > MaxListLimit+1:
		return fmt.Errorf("audit log: limit %d is not between 1 and %d", q.Limit, MaxListLimit+1)
	case q.After != nil && q.After.ID <= 0:
		return fmt.Errorf("audit log: cursor id %d", q.After.ID)
	}
	return nil
}

// AuditStore keeps the audit log. Both store adapters implement it; entries
// are only ever added.
type AuditStore interface {
	// RecordAudit appends e as given (its At is required) and sets e.ID.
	// Ids grow with every entry.
	RecordAudit(ctx context.Context, e *AuditEntry) error
	// AuditLog returns up to q.Limit entries of the company's log, newest
	// first by At, then by id, both descending, starting after q.After.
	AuditLog(ctx context.Context, q AuditQuery) ([]AuditEntry, error)
}

// RecordAudit checks e, cleans its field names (see AuditFields) and
// appends it to st's log. It checks no principal: it is called after a
// change that was allowed and made. A zero At is now.
func RecordAudit(ctx context.Context, st AuditStore, e AuditEntry) error {
	if e.Action == "" || e.CompanyID < 0 || e.UserID < 0 {
		return fmt.Errorf("audit: an entry needs an action and no negative id (action %q, company %d, user %d)", e.Action, e.CompanyID, e.UserID)
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	e.At = e.At.UTC().Truncate(time.Microsecond)
	e.Username = cleanAuditText(e.Username, MaxAuditText)
	e.RequestID = cleanAuditText(e.RequestID, MaxAuditText)
	e.Action = cleanAuditText(e.Action, MaxAuditText)
	e.Fields = AuditFields(e.Fields)
	if err := st.RecordAudit(ctx, &e); err != nil {
		return fmt.Errorf("audit %s of company %d: %w", e.Action, e.CompanyID, err)
	}
	return nil
}

// AuditFields returns the field names an entry keeps of names: each with
// its invalid UTF-8 and control characters replaced by U+FFFD and cut at
// MaxAuditFieldLen characters, empty ones dropped, without duplicates, in
// byte order, at most MaxAuditFields of them. Never nil.
func AuditFields(names []string) []string {
	out := make([]string, 0, min(len(names), MaxAuditFields))
	for _, n := range names {
		if n = cleanAuditText(n, MaxAuditFieldLen); n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxAuditFields {
		out = out[:MaxAuditFields]
	}
	return out
}

// cleanAuditText makes s storable and readable in a log: valid UTF-8
// without control characters (PostgreSQL refuses NUL in text), at most max
// characters.
func cleanAuditText(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == max {
			break
		}
		// An invalid byte comes as utf8.RuneError, which is U+FFFD.
		if unicode.IsControl(r) {
			r = unicode.ReplacementChar
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// auditStore is the store's audit log; a store that keeps none is an error.
func (s *Service) auditStore() (AuditStore, error) {
	st, ok := s.store.(AuditStore)
	if !ok {
		return nil, errors.New("tenant: the store keeps no audit log")
	}
	return st, nil
}

// RecordAudit appends an entry to the audit log (see the package function
// RecordAudit); a zero At is the service's clock.
func (s *Service) RecordAudit(ctx context.Context, e AuditEntry) error {
	st, err := s.auditStore()
	if err != nil {
		return err
	}
	if e.At.IsZero() {
		e.At = s.now()
	}
	return RecordAudit(ctx, st, e)
}

// AuditLog returns a page of a company's audit log, newest first, to those
// who manage the company: an admin, the company's reseller and the
// company's own API users (each of which may update the company, A.1).
// Anyone else gets ErrNotFound, as for a company they cannot see. Company
// 0 is the platform's log, an admin's only.
func (s *Service) AuditLog(ctx context.Context, p Principal, companyID int64, q AuditQuery) ([]AuditEntry, error) {
	if err := s.companyManaged(ctx, p, companyID); err != nil {
		return nil, err
	}
	st, err := s.auditStore()
	if err != nil {
		return nil, err
	}
	q.CompanyID = companyID
	if err := q.Check(); err != nil {
		return nil, err
	}
	return st.AuditLog(ctx, q)
}

// companyManaged answers whether p manages company id: an admin every
// company (and the platform, id 0), a reseller the companies it owns, a
// branch user its own company, which A.1 lets it read and update. The
// company is read, so that one that does not exist is ErrNotFound for an
// admin too; anything else is ErrNotFound.
func (s *Service) companyManaged(ctx context.Context, p Principal, id int64) error {
	if id == 0 && p.Role == RoleAdmin {
		return nil
	}
	_, err := s.companyFor(ctx, p, id)
	return err
}
