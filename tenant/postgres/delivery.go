package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

var (
	_ tenant.WebhookStore = (*Store)(nil)
	_ tenant.EmailStore   = (*Store)(nil)
)

const (
	webhookColumns  = `id, company_id, url, eventos, sealed_secret, created_at`
	deliveryColumns = `id, webhook_id, company_id, event_id, evento, clave, created_at, payload,
    attempts, next_attempt_at, last_attempt_at, last_status, last_error, delivered_at, failed_at`
	emailColumns = `id, company_id, document_id, clave, recipients, created_at, attempts,
    next_attempt_at, last_attempt_at, last_error, rejected, sent_at, failed_at, evento, event_id, payload`
)

// outboxSelect is how the saves' statements end: their data-modifying
// WITH clause doc returns the saved row's id.
const outboxSelect = "\nSELECT id FROM doc"

// withOutbox returns the statement that persists a row together with ev's
// deliveries: the one place the outbox is written (see tenant.Event). q is
// the row's save, a statement whose WITH clause doc updates the row and
// returns its id and which ends in outboxSelect; args are its parameters.
// The result is one statement (so one transaction and one round trip) with
// two more data-modifying WITH clauses: a delivery per webhook of the
// company that asked for ev.Name, and the e-mail of an accepted document,
// both selecting FROM doc, so written only when the UPDATE wrote its row.
// With no webhook the insert is one probe of webhooks_company. Without a
// pending event q is returned as it is.
func withOutbox(q string, args []any, companyID, documentID int64, ev *tenant.Event) (string, []any) {
	if !ev.Pending() {
		return q, args
	}
	i := strings.LastIndex(q, outboxSelect)
	if i < 0 {
		panic("postgres: withOutbox over a statement that does not end in " + outboxSelect)
	}
	n := len(args)
	p := func(i int) string { return "$" + strconv.Itoa(n+i) }
	args = append(args, companyID, ev.ID, ev.Name, ev.Clave, ev.Created.UTC().Truncate(time.Microsecond), ev.Payload)
	ctes := `, hooks AS (
    INSERT INTO webhook_deliveries (webhook_id, company_id, event_id, evento, clave, created_at, payload, next_attempt_at)
    SELECT w.id, w.company_id, ` + p(2) + `, ` + p(3) + `, ` + p(4) + `, ` + p(5) + `, ` + p(6) + `, ` + p(5) + `
    FROM webhooks w, doc
    WHERE w.company_id = ` + p(1) + ` AND ` + p(3) + ` = ANY (w.eventos))`
	if len(ev.Email) > 0 && documentID != 0 {
		args = append(args, ev.Email)
		ctes += `, mail AS (
    INSERT INTO email_deliveries (company_id, document_id, clave, recipients, created_at, next_attempt_at)
    SELECT ` + p(1) + `, doc.id, ` + p(4) + `, ` + p(7) + `, ` + p(5) + `, ` + p(5) + ` FROM doc)`
	}
	return q[:i] + ctes + q[i:], args
}

func scanWebhook(r pgx.Row) (tenant.Webhook, error) {
	var w tenant.Webhook
	err := r.Scan(&w.ID, &w.CompanyID, &w.URL, &w.Eventos, &w.SealedSecret, &w.CreatedAt)
	w.CreatedAt = w.CreatedAt.UTC()
	return w, err
}

// CreateWebhook inserts w unless its company has limit webhooks. The
// company's row is locked first (FOR NO KEY UPDATE: creates of one
// company's webhooks queue on it, while the foreign-key checks of other
// inserts naming the company are not held up), and the count is a
// statement of its own after the lock, so that it sees every webhook a
// create committed while this one waited.
func (s *Store) CreateWebhook(ctx context.Context, w *tenant.Webhook, limit int) error {
	now := s.clock()
	var id int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM companies WHERE id = $1 FOR NO KEY UPDATE`, w.CompanyID).Scan(&one); err != nil {
			return mapErr(err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM webhooks WHERE company_id = $1`, w.CompanyID).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return tenant.ErrWebhookLimit
		}
		return mapErr(tx.QueryRow(ctx, `INSERT INTO webhooks (company_id, url, eventos, sealed_secret, created_at)
VALUES ($1, $2, $3, $4, $5) RETURNING id`, w.CompanyID, w.URL, w.Eventos, w.SealedSecret, now).Scan(&id))
	})
	if err != nil {
		return fmt.Errorf("create webhook of company %d: %w", w.CompanyID, err)
	}
	w.ID, w.CreatedAt = id, now
	return nil
}

// Webhooks lists a company's webhooks by id.
func (s *Store) Webhooks(ctx context.Context, companyID int64) ([]tenant.Webhook, error) {
	out, err := queryAll(ctx, s.pool, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks WHERE company_id = $1 ORDER BY id`, companyID)
	if err != nil {
		return nil, fmt.Errorf("webhooks of company %d: %w", companyID, err)
	}
	return out, nil
}

// Webhook returns one webhook of the company.
func (s *Store) Webhook(ctx context.Context, companyID, id int64) (tenant.Webhook, error) {
	w, err := scanWebhook(s.pool.QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = $1 AND company_id = $2`, id, companyID))
	if err != nil {
		return tenant.Webhook{}, fmt.Errorf("webhook %d of company %d: %w", id, companyID, mapErr(err))
	}
	return w, nil
}

// DeleteWebhook removes a webhook of the company and its deliveries.
func (s *Store) DeleteWebhook(ctx context.Context, companyID, id int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM webhooks WHERE id = $1 AND company_id = $2`, id, companyID)
	if err != nil {
		return fmt.Errorf("delete webhook %d: %w", id, mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete webhook %d of company %d: %w", id, companyID, tenant.ErrNotFound)
	}
	return nil
}

func scanDelivery(r pgx.Row) (tenant.Delivery, error) {
	var (
		d                               tenant.Delivery
		next, last, delivered, failedAt *time.Time
	)
	if err := r.Scan(&d.ID, &d.WebhookID, &d.CompanyID, &d.EventID, &d.Evento, &d.Clave, &d.Created, &d.Payload,
		&d.Attempts, &next, &last, &d.LastStatus, &d.LastError, &delivered, &failedAt); err != nil {
		return tenant.Delivery{}, err
	}
	d.Created = d.Created.UTC()
	d.NextAttemptAt, d.LastAttemptAt = fromNullTime(next), fromNullTime(last)
	d.DeliveredAt, d.FailedAt = fromNullTime(delivered), fromNullTime(failedAt)
	return d, nil
}

// Deliveries returns a page of a webhook's deliveries, newest first.
func (s *Store) Deliveries(ctx context.Context, webhookID int64, page tenant.DeliveryPage) ([]tenant.Delivery, error) {
	before := page.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	out, err := queryAll(ctx, s.pool, scanDelivery, `SELECT `+deliveryColumns+` FROM webhook_deliveries
WHERE webhook_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`, webhookID, before, max(page.Limit, 1))
	if err != nil {
		return nil, fmt.Errorf("deliveries of webhook %d: %w", webhookID, err)
	}
	return out, nil
}

// ClaimEndpoints leases up to limit webhooks with a delivery due in one
// statement: FOR UPDATE SKIP LOCKED lets claimers on other connections and
// replicas pass over the rows another is leasing, and a row leased and
// committed meanwhile is checked again against its new lease and dropped.
func (s *Store) ClaimEndpoints(ctx context.Context, holder string, now, leaseUntil time.Time, limit int) ([]tenant.Endpoint, error) {
	if !leaseUntil.After(now) {
		return nil, errors.New("claim endpoints: lease end is not after now")
	}
	if limit < 1 {
		return []tenant.Endpoint{}, nil
	}
	hooks, err := queryAll(ctx, s.pool, scanWebhook, `WITH c AS (
    SELECT w.id AS cid, w.lease_until AS prev FROM webhooks w
    WHERE (w.lease_until IS NULL OR w.lease_until <= $1)
      AND EXISTS (SELECT 1 FROM webhook_deliveries d
                  WHERE d.webhook_id = w.id AND d.next_attempt_at IS NOT NULL AND d.next_attempt_at <= $1)
    ORDER BY w.lease_until NULLS FIRST, w.id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
), leased AS (
    UPDATE webhooks w SET lease_holder = $4, lease_until = $2 FROM c WHERE w.id = c.cid
    RETURNING c.prev, `+webhookColumns+`
)
SELECT `+webhookColumns+` FROM leased ORDER BY prev NULLS FIRST, id`,
		now.UTC().Truncate(time.Microsecond), leaseUntil.UTC().Truncate(time.Microsecond), limit, holder)
	if err != nil {
		return nil, fmt.Errorf("claim endpoints: %w", err)
	}
	out := make([]tenant.Endpoint, len(hooks))
	for i, w := range hooks {
		out[i] = tenant.Endpoint{Webhook: w, LeaseUntil: leaseUntil.UTC().Truncate(time.Microsecond)}
	}
	return out, nil
}

// RenewEndpoint extends holder's lease.
func (s *Store) RenewEndpoint(ctx context.Context, holder string, webhookID int64, leaseUntil time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE webhooks SET lease_until = $1 WHERE id = $2 AND lease_holder = $3`,
		leaseUntil.UTC().Truncate(time.Microsecond), webhookID, holder)
	if err != nil {
		return false, fmt.Errorf("renew endpoint %d: %w", webhookID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseEndpoint ends holder's lease at now.
func (s *Store) ReleaseEndpoint(ctx context.Context, holder string, webhookID int64, now time.Time) error {
	if _, err := s.pool.Exec(ctx, `UPDATE webhooks SET lease_until = $1, lease_holder = '' WHERE id = $2 AND lease_holder = $3`,
		now.UTC().Truncate(time.Microsecond), webhookID, holder); err != nil {
		return fmt.Errorf("release endpoint %d: %w", webhookID, err)
	}
	return nil
}

// DueDeliveries returns a webhook's due deliveries.
func (s *Store) DueDeliveries(ctx context.Context, webhookID int64, now time.Time, limit int) ([]tenant.Delivery, error) {
	out, err := queryAll(ctx, s.pool, scanDelivery, `SELECT `+deliveryColumns+` FROM webhook_deliveries
WHERE webhook_id = $1 AND next_attempt_at IS NOT NULL AND next_attempt_at <= $2
ORDER BY next_attempt_at, id LIMIT $3`, webhookID, now.UTC().Truncate(time.Microsecond), max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("due deliveries of webhook %d: %w", webhookID, err)
	}
	return out, nil
}

// RecordAttempt stores one attempt's outcome.
func (s *Store) RecordAttempt(ctx context.Context, id int64, r tenant.AttemptResult) error {
	at := r.At.UTC().Truncate(time.Microsecond)
	var delivered, failed *time.Time
	switch {
	case r.Error == "":
		delivered = &at
	case r.Next.IsZero():
		failed = &at
	}
	_, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1,
    last_attempt_at = $2, last_status = $3, last_error = $4, next_attempt_at = $5, delivered_at = $6, failed_at = $7
WHERE id = $1 AND next_attempt_at IS NOT NULL`, id, at, r.Status, r.Error, docTime(r.Next), delivered, failed)
	if err != nil {
		return fmt.Errorf("record attempt of delivery %d: %w", id, err)
	}
	return nil
}

// DeliveryBacklog counts the pending webhook deliveries.
func (s *Store) DeliveryBacklog(ctx context.Context) (int, time.Time, error) {
	return s.backlog(ctx, `SELECT count(*), min(created_at) FROM webhook_deliveries WHERE next_attempt_at IS NOT NULL`)
}

// The retention's deletes: settled rows created before $1, the oldest
// first, at most $2; SKIP LOCKED lets replicas purging at once take
// different rows.
const (
	qPurgeHooks = `DELETE FROM webhook_deliveries WHERE id IN (
    SELECT id FROM webhook_deliveries WHERE next_attempt_at IS NULL AND created_at < $1
    ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`
	qPurgeEmails = `DELETE FROM email_deliveries WHERE id IN (
    SELECT id FROM email_deliveries WHERE next_attempt_at IS NULL AND created_at < $1
    ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`
)

// PurgeDeliveries deletes up to limit settled webhook deliveries and up to
// limit settled e-mails created before before.
func (s *Store) PurgeDeliveries(ctx context.Context, before time.Time, limit int) (webhooks, emails int, err error) {
	if limit < 1 {
		return 0, 0, nil
	}
	var n [2]int
	for i, q := range []string{qPurgeHooks, qPurgeEmails} {
		tag, err := s.pool.Exec(ctx, q, before.UTC().Truncate(time.Microsecond), limit)
		if err != nil {
			return n[0], n[1], fmt.Errorf("purge deliveries: %w", err)
		}
		n[i] = int(tag.RowsAffected())
	}
	return n[0], n[1], nil
}

// EmailBacklog counts the pending e-mails.
func (s *Store) EmailBacklog(ctx context.Context) (int, time.Time, error) {
	return s.backlog(ctx, `SELECT count(*), min(created_at) FROM email_deliveries WHERE next_attempt_at IS NOT NULL`)
}

func (s *Store) backlog(ctx context.Context, q string) (int, time.Time, error) {
	var (
		n      int
		oldest *time.Time
	)
	if err := s.pool.QueryRow(ctx, q).Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, fmt.Errorf("delivery backlog: %w", err)
	}
	return n, fromNullTime(oldest), nil
}

func scanEmail(r pgx.Row) (tenant.EmailDelivery, error) {
	var (
		e                          tenant.EmailDelivery
		documentID                 *int64 // NULL for a notice
		next, last, sent, failedAt *time.Time
	)
	if err := r.Scan(&e.ID, &e.CompanyID, &documentID, &e.Clave, &e.Recipients, &e.Created, &e.Attempts,
		&next, &last, &e.LastError, &e.Rejected, &sent, &failedAt, &e.Evento, &e.EventID, &e.Payload); err != nil {
		return tenant.EmailDelivery{}, err
	}
	if documentID != nil {
		e.DocumentID = *documentID
	}
	e.Created = e.Created.UTC()
	e.NextAttemptAt, e.LastAttemptAt = fromNullTime(next), fromNullTime(last)
	e.SentAt, e.FailedAt = fromNullTime(sent), fromNullTime(failedAt)
	return e, nil
}

// ClaimDueEmails leases up to limit due e-mails in one statement, skipping
// those another claimer holds.
func (s *Store) ClaimDueEmails(ctx context.Context, now, leaseUntil time.Time, limit int) ([]tenant.EmailDelivery, error) {
	return claimDue(ctx, s, "e-mails", qClaimDueEmails, now, leaseUntil, limit, scanEmail)
}

// qClaimDueEmails leases up to $3 e-mails due at $1 until $2, skipping
// those another claimer holds, and returns them most overdue first.
const qClaimDueEmails = `WITH due AS (
    SELECT id AS due_id, next_attempt_at AS due_at FROM email_deliveries
    WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= $1
    ORDER BY next_attempt_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE email_deliveries SET next_attempt_at = $2 FROM due WHERE id = due.due_id
    RETURNING due.due_at, ` + emailColumns + `
)
SELECT ` + emailColumns + ` FROM claimed ORDER BY due_at, id`

// RecordEmail stores one e-mail attempt's outcome.
func (s *Store) RecordEmail(ctx context.Context, id int64, r tenant.EmailResult) error {
	rejected := r.Rejected
	if rejected == nil {
		rejected = []tenant.EmailRejection{}
	}
	at := r.At.UTC().Truncate(time.Microsecond)
	var sent, failed *time.Time
	switch {
	case r.Error == "":
		sent = &at
	case r.Next.IsZero():
		failed = &at
	}
	if _, err := s.pool.Exec(ctx, `UPDATE email_deliveries SET attempts = attempts + 1, last_attempt_at = $2,
    last_error = $3, rejected = $4, next_attempt_at = $5, sent_at = $6, failed_at = $7 WHERE id = $1`,
		id, at, r.Error, rejected, docTime(r.Next), sent, failed); err != nil {
		return fmt.Errorf("record e-mail %d: %w", id, err)
	}
	return nil
}

// The e-mail re-queues: a document's failed e-mails (by
// email_deliveries_document), and the failed ones created since $1, of
// company $2 unless 0, which are among the settled (by
// email_deliveries_settled).
const (
	qRequeueEmails = `UPDATE email_deliveries SET failed_at = NULL, next_attempt_at = $2
WHERE document_id = $1 AND failed_at IS NOT NULL AND sent_at IS NULL`
	qRequeueFailedEmails = `UPDATE email_deliveries SET failed_at = NULL, next_attempt_at = $3
WHERE next_attempt_at IS NULL AND created_at >= $1 AND failed_at IS NOT NULL AND sent_at IS NULL
    AND ($2::bigint = 0 OR company_id = $2)`
)

// RequeueEmails makes a document's failed e-mails due again at at.
func (s *Store) RequeueEmails(ctx context.Context, documentID int64, at time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, qRequeueEmails, documentID, at.UTC().Truncate(time.Microsecond))
	if err != nil {
		return 0, fmt.Errorf("re-queue the e-mails of document %d: %w", documentID, err)
	}
	return int(tag.RowsAffected()), nil
}

// RequeueFailedEmails makes the failed e-mails created since since (of
// companyID, unless 0) due again at at.
func (s *Store) RequeueFailedEmails(ctx context.Context, since time.Time, companyID int64, at time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, qRequeueFailedEmails,
		since.UTC().Truncate(time.Microsecond), companyID, at.UTC().Truncate(time.Microsecond))
	if err != nil {
		return 0, fmt.Errorf("re-queue the failed e-mails since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	return int(tag.RowsAffected()), nil
}

// DocumentEmails returns a document's e-mails, oldest first.
func (s *Store) DocumentEmails(ctx context.Context, documentID int64) ([]tenant.EmailDelivery, error) {
	out, err := queryAll(ctx, s.pool, scanEmail, `SELECT `+emailColumns+` FROM email_deliveries WHERE document_id = $1 ORDER BY id`, documentID)
	if err != nil {
		return nil, fmt.Errorf("e-mails of document %d: %w", documentID, err)
	}
	return out, nil
}

// queryAll runs q with args on db and scans every row with scan; never
// nil.
func queryAll[T any](ctx context.Context, db pool, scan func(pgx.Row) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

var _ tenant.WebhookSecretStore = (*Store)(nil)

// SealedWebhooks returns a batch of webhooks by id, for a rotation.
func (s *Store) SealedWebhooks(ctx context.Context, afterID int64, limit int) ([]tenant.Webhook, error) {
	out, err := queryAll(ctx, s.pool, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks WHERE id > $1 ORDER BY id LIMIT $2`, afterID, max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("sealed webhooks: %w", err)
	}
	return out, nil
}

// ReplaceWebhookSecret writes next only over old.
func (s *Store) ReplaceWebhookSecret(ctx context.Context, id int64, old, next []byte) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE webhooks SET sealed_secret = $1 WHERE id = $2 AND sealed_secret = $3`, next, id, old)
	if err != nil {
		return false, fmt.Errorf("replace webhook secret %d: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}
