package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"facturad/tenant"
)

var (
	_ tenant.WebhookStore = (*Store)(nil)
	_ tenant.EmailStore   = (*Store)(nil)
)

const (
	// qHasWebhooks comes before qOutboxHooks, which SQLite prepared again
	// on every run (profiles of a replica show it): most companies have no
	// webhook, and this lookup spares them that.
	qHasWebhooks = `SELECT EXISTS (SELECT 1 FROM webhooks WHERE company_id = ?)`
	// qOutboxHooks writes one delivery per webhook of the company that
	// asked for the event.
	qOutboxHooks = `INSERT INTO webhook_deliveries (webhook_id, company_id, event_id, evento, clave,
    created_at, payload, next_attempt_at)
SELECT w.id, w.company_id, ?2, ?3, ?4, ?5, ?6, ?5 FROM webhooks w
WHERE w.company_id = ?1 AND EXISTS (SELECT 1 FROM json_each(w.eventos) WHERE value = ?3)`
	qOutboxMail = `INSERT INTO email_deliveries (company_id, document_id, clave, recipients, created_at,
    next_attempt_at)
VALUES (?, ?, ?, ?, ?, ?)`

	webhookColumns  = `id, company_id, url, eventos, sealed_secret, created_at`
	deliveryColumns = `id, webhook_id, company_id, event_id, evento, clave, created_at, payload,
    attempts, next_attempt_at, last_attempt_at, last_status, last_error, delivered_at, failed_at`
	emailColumns = `id, company_id, document_id, clave, recipients, created_at, attempts,
    next_attempt_at, last_attempt_at, last_error, rejected, sent_at, failed_at, evento, event_id, payload`
)

// writeOutbox writes ev's deliveries in the transaction of the save that
// persists its change: the one place the outbox is written (see
// tenant.Event). documentID names the document an e-mail is about.
func (s *Store) writeOutbox(ctx context.Context, tx *sql.Tx, companyID, documentID int64, ev *tenant.Event) error {
	if !ev.Pending() {
		return nil
	}
	created := formatTime(ev.Created)
	var hooks bool
	if err := tx.StmtContext(ctx, s.wstmts.hasHooks).QueryRowContext(ctx, companyID).Scan(&hooks); err != nil {
		return fmt.Errorf("outbox: %w", mapErr(err))
	}
	if hooks {
		if _, err := tx.StmtContext(ctx, s.wstmts.outboxHooks).ExecContext(ctx, companyID, ev.ID, ev.Name, ev.Clave,
			created, ev.Payload); err != nil {
			return fmt.Errorf("outbox: %w", mapErr(err))
		}
	}
	if len(ev.Email) == 0 || documentID == 0 {
		return nil
	}
	to, err := json.Marshal(ev.Email)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if _, err := tx.StmtContext(ctx, s.wstmts.outboxMail).ExecContext(ctx, companyID, documentID, ev.Clave,
		string(to), created, created); err != nil {
		return fmt.Errorf("outbox: e-mail: %w", mapErr(err))
	}
	return nil
}

func scanWebhook(r scanner) (tenant.Webhook, error) {
	var (
		w       tenant.Webhook
		eventos string
		created string
	)
	if err := r.Scan(&w.ID, &w.CompanyID, &w.URL, &eventos, &w.SealedSecret, &created); err != nil {
		return tenant.Webhook{}, err
	}
	if err := json.Unmarshal([]byte(eventos), &w.Eventos); err != nil {
		return tenant.Webhook{}, fmt.Errorf("stored eventos: %w", err)
	}
	var err error
	w.CreatedAt, err = parseTime(created)
	return w, err
}

// CreateWebhook inserts w unless its company has limit webhooks: the
// count and the insert are one IMMEDIATE transaction on the one write
// connection, so no other create comes between them.
func (s *Store) CreateWebhook(ctx context.Context, w *tenant.Webhook, limit int) (err error) {
	eventos, err := json.Marshal(w.Eventos)
	if err != nil {
		return fmt.Errorf("create webhook: %w", err)
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create webhook of company %d: %w", w.CompanyID, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM webhooks WHERE company_id = ?`, w.CompanyID).Scan(&n); err != nil {
		return fmt.Errorf("create webhook of company %d: count: %w", w.CompanyID, err)
	}
	if n >= limit {
		return fmt.Errorf("create webhook of company %d: %w", w.CompanyID, tenant.ErrWebhookLimit)
	}
	now := s.clock()
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO webhooks (company_id, url, eventos, sealed_secret, created_at)
VALUES (?, ?, ?, ?, ?) RETURNING id`, w.CompanyID, w.URL, string(eventos), w.SealedSecret, formatTime(now)).Scan(&id)
	if err != nil {
		return fmt.Errorf("create webhook of company %d: %w", w.CompanyID, mapErr(err))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create webhook of company %d: commit: %w", w.CompanyID, err)
	}
	w.ID, w.CreatedAt = id, now
	return nil
}

// Webhooks lists a company's webhooks by id.
func (s *Store) Webhooks(ctx context.Context, companyID int64) ([]tenant.Webhook, error) {
	out, err := queryAll(ctx, s.read, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks WHERE company_id = ? ORDER BY id`, companyID)
	if err != nil {
		return nil, fmt.Errorf("webhooks of company %d: %w", companyID, err)
	}
	return out, nil
}

// Webhook returns one webhook of the company.
func (s *Store) Webhook(ctx context.Context, companyID, id int64) (tenant.Webhook, error) {
	w, err := scanWebhook(s.read.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = ? AND company_id = ?`, id, companyID))
	if err != nil {
		return tenant.Webhook{}, fmt.Errorf("webhook %d of company %d: %w", id, companyID, mapErr(err))
	}
	return w, nil
}

// DeleteWebhook removes a webhook of the company and its deliveries.
func (s *Store) DeleteWebhook(ctx context.Context, companyID, id int64) error {
	res, err := s.write.ExecContext(ctx, `DELETE FROM webhooks WHERE id = ? AND company_id = ?`, id, companyID)
	if err != nil {
		return fmt.Errorf("delete webhook %d: %w", id, mapErr(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delete webhook %d of company %d: %w", id, companyID, tenant.ErrNotFound)
	}
	return nil
}

func scanDelivery(r scanner) (tenant.Delivery, error) {
	var (
		d                               tenant.Delivery
		created                         string
		next, last, delivered, failedAt sql.NullString
	)
	if err := r.Scan(&d.ID, &d.WebhookID, &d.CompanyID, &d.EventID, &d.Evento, &d.Clave, &created, &d.Payload,
		&d.Attempts, &next, &last, &d.LastStatus, &d.LastError, &delivered, &failedAt); err != nil {
		return tenant.Delivery{}, err
	}
	var err error
	if d.Created, err = parseTime(created); err != nil {
		return tenant.Delivery{}, err
	}
	for _, f := range []struct {
		dst *time.Time
		src sql.NullString
	}{{&d.NextAttemptAt, next}, {&d.LastAttemptAt, last}, {&d.DeliveredAt, delivered}, {&d.FailedAt, failedAt}} {
		if *f.dst, err = parseNullTime(f.src); err != nil {
			return tenant.Delivery{}, err
		}
	}
	return d, nil
}

// Deliveries returns a page of a webhook's deliveries, newest first.
func (s *Store) Deliveries(ctx context.Context, webhookID int64, page tenant.DeliveryPage) ([]tenant.Delivery, error) {
	before := page.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	out, err := queryAll(ctx, s.read, scanDelivery, `SELECT `+deliveryColumns+` FROM webhook_deliveries
WHERE webhook_id = ? AND id < ? ORDER BY id DESC LIMIT ?`, webhookID, before, max(page.Limit, 1))
	if err != nil {
		return nil, fmt.Errorf("deliveries of webhook %d: %w", webhookID, err)
	}
	return out, nil
}

// ClaimEndpoints leases up to limit webhooks with a delivery due, in one
// IMMEDIATE transaction (every writer on the file waits for it).
func (s *Store) ClaimEndpoints(ctx context.Context, holder string, now, leaseUntil time.Time, limit int) (_ []tenant.Endpoint, err error) {
	if !leaseUntil.After(now) {
		return nil, errors.New("claim endpoints: lease end is not after now")
	}
	if limit < 1 {
		return []tenant.Endpoint{}, nil
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("claim endpoints: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	nowS := formatTime(now)
	hooks, err := queryAll(ctx, tx, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks w
WHERE (w.lease_until IS NULL OR w.lease_until <= ?1)
  AND EXISTS (SELECT 1 FROM webhook_deliveries d
              WHERE d.webhook_id = w.id AND d.next_attempt_at IS NOT NULL AND d.next_attempt_at <= ?1)
ORDER BY w.lease_until NULLS FIRST, w.id
LIMIT ?2`, nowS, limit)
	if err != nil {
		return nil, fmt.Errorf("claim endpoints: %w", err)
	}
	lease := leaseUntil.UTC().Truncate(time.Microsecond)
	out := make([]tenant.Endpoint, 0, len(hooks))
	for _, w := range hooks {
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET lease_holder = ?, lease_until = ? WHERE id = ?`,
			holder, formatTime(lease), w.ID); err != nil {
			return nil, fmt.Errorf("claim endpoints: lease: %w", err)
		}
		out = append(out, tenant.Endpoint{Webhook: w, LeaseUntil: lease})
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("claim endpoints: commit: %w", err)
	}
	return out, nil
}

// RenewEndpoint extends holder's lease.
func (s *Store) RenewEndpoint(ctx context.Context, holder string, webhookID int64, leaseUntil time.Time) (bool, error) {
	res, err := s.write.ExecContext(ctx, `UPDATE webhooks SET lease_until = ? WHERE id = ? AND lease_holder = ?`,
		formatTime(leaseUntil), webhookID, holder)
	if err != nil {
		return false, fmt.Errorf("renew endpoint %d: %w", webhookID, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ReleaseEndpoint ends holder's lease at now.
func (s *Store) ReleaseEndpoint(ctx context.Context, holder string, webhookID int64, now time.Time) error {
	if _, err := s.write.ExecContext(ctx, `UPDATE webhooks SET lease_until = ?, lease_holder = '' WHERE id = ? AND lease_holder = ?`,
		formatTime(now), webhookID, holder); err != nil {
		return fmt.Errorf("release endpoint %d: %w", webhookID, err)
	}
	return nil
}

// DueDeliveries returns a webhook's due deliveries.
func (s *Store) DueDeliveries(ctx context.Context, webhookID int64, now time.Time, limit int) ([]tenant.Delivery, error) {
	out, err := queryAll(ctx, s.read, scanDelivery, `SELECT `+deliveryColumns+` FROM webhook_deliveries INDEXED BY webhook_deliveries_due
WHERE webhook_id = ? AND next_attempt_at IS NOT NULL AND next_attempt_at <= ?
ORDER BY next_attempt_at, id LIMIT ?`, webhookID, formatTime(now), max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("due deliveries of webhook %d: %w", webhookID, err)
	}
	return out, nil
}

// RecordAttempt stores one attempt's outcome.
func (s *Store) RecordAttempt(ctx context.Context, id int64, r tenant.AttemptResult) error {
	var delivered, failed any
	switch {
	case r.Error == "":
		delivered = formatTime(r.At)
	case r.Next.IsZero():
		failed = formatTime(r.At)
	}
	_, err := s.write.ExecContext(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1,
    last_attempt_at = ?, last_status = ?, last_error = ?, next_attempt_at = ?, delivered_at = ?, failed_at = ?
WHERE id = ? AND next_attempt_at IS NOT NULL`,
		formatTime(r.At), r.Status, r.Error, nullTime(r.Next), delivered, failed, id)
	if err != nil {
		return fmt.Errorf("record attempt of delivery %d: %w", id, err)
	}
	return nil
}

// DeliveryBacklog counts the pending webhook deliveries.
func (s *Store) DeliveryBacklog(ctx context.Context) (int, time.Time, error) {
	return backlog(ctx, s.read, `SELECT count(*), min(created_at) FROM webhook_deliveries INDEXED BY webhook_deliveries_pending
WHERE next_attempt_at IS NOT NULL`)
}

// The retention's deletes: settled rows created before ?1, the oldest
// first, at most ?2, along the indexes of settled rows.
const (
	qPurgeHooks = `DELETE FROM webhook_deliveries WHERE id IN (
    SELECT id FROM webhook_deliveries INDEXED BY webhook_deliveries_settled
    WHERE next_attempt_at IS NULL AND created_at < ?1 ORDER BY created_at LIMIT ?2)`
	qPurgeEmails = `DELETE FROM email_deliveries WHERE id IN (
    SELECT id FROM email_deliveries INDEXED BY email_deliveries_settled
    WHERE next_attempt_at IS NULL AND created_at < ?1 ORDER BY created_at LIMIT ?2)`
)

// PurgeDeliveries deletes up to limit settled webhook deliveries and up to
// limit settled e-mails created before before.
func (s *Store) PurgeDeliveries(ctx context.Context, before time.Time, limit int) (webhooks, emails int, err error) {
	if limit < 1 {
		return 0, 0, nil
	}
	var n [2]int
	for i, q := range []string{qPurgeHooks, qPurgeEmails} {
		res, err := s.write.ExecContext(ctx, q, formatTime(before), limit)
		if err != nil {
			return n[0], n[1], fmt.Errorf("purge deliveries: %w", err)
		}
		m, _ := res.RowsAffected()
		n[i] = int(m)
	}
	return n[0], n[1], nil
}

// EmailBacklog counts the pending e-mails.
func (s *Store) EmailBacklog(ctx context.Context) (int, time.Time, error) {
	return backlog(ctx, s.read, `SELECT count(*), min(created_at) FROM email_deliveries WHERE next_attempt_at IS NOT NULL`)
}

func backlog(ctx context.Context, d db, q string) (int, time.Time, error) {
	var (
		n      int
		oldest sql.NullString
	)
	if err := d.QueryRowContext(ctx, q).Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, fmt.Errorf("delivery backlog: %w", err)
	}
	t, err := parseNullTime(oldest)
	return n, t, err
}

func scanEmail(r scanner) (tenant.EmailDelivery, error) {
	var (
		e                             tenant.EmailDelivery
		documentID                    sql.NullInt64 // NULL for a notice
		recipients, created, rejected string
		next, last, sent, failedAt    sql.NullString
	)
	if err := r.Scan(&e.ID, &e.CompanyID, &documentID, &e.Clave, &recipients, &created, &e.Attempts,
		&next, &last, &e.LastError, &rejected, &sent, &failedAt, &e.Evento, &e.EventID, &e.Payload); err != nil {
		return tenant.EmailDelivery{}, err
	}
	e.DocumentID = documentID.Int64
	if err := json.Unmarshal([]byte(recipients), &e.Recipients); err != nil {
		return tenant.EmailDelivery{}, fmt.Errorf("stored recipients: %w", err)
	}
	if err := json.Unmarshal([]byte(rejected), &e.Rejected); err != nil {
		return tenant.EmailDelivery{}, fmt.Errorf("stored rejections: %w", err)
	}
	var err error
	if e.Created, err = parseTime(created); err != nil {
		return tenant.EmailDelivery{}, err
	}
	for _, f := range []struct {
		dst *time.Time
		src sql.NullString
	}{{&e.NextAttemptAt, next}, {&e.LastAttemptAt, last}, {&e.SentAt, sent}, {&e.FailedAt, failedAt}} {
		if *f.dst, err = parseNullTime(f.src); err != nil {
			return tenant.EmailDelivery{}, err
		}
	}
	return e, nil
}

// ClaimDueEmails leases up to limit due e-mails in one IMMEDIATE
// transaction.
func (s *Store) ClaimDueEmails(ctx context.Context, now, leaseUntil time.Time, limit int) ([]tenant.EmailDelivery, error) {
	return claimDue(ctx, s, "e-mails", qDueEmails, qLeaseEmails, now, leaseUntil, limit, scanEmail,
		func(e *tenant.EmailDelivery, lease time.Time) int64 { e.NextAttemptAt = lease; return e.ID })
}

// The e-mails' claim: the due ones along email_deliveries_due, and their
// lease.
const (
	qDueEmails = `SELECT ` + emailColumns + ` FROM email_deliveries INDEXED BY email_deliveries_due
WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`
	qLeaseEmails = `UPDATE email_deliveries SET next_attempt_at = ? WHERE id IN (SELECT value FROM json_each(?))`
)

// RecordEmail stores one e-mail attempt's outcome.
func (s *Store) RecordEmail(ctx context.Context, id int64, r tenant.EmailResult) error {
	rejected := r.Rejected
	if rejected == nil {
		rejected = []tenant.EmailRejection{}
	}
	rj, err := json.Marshal(rejected)
	if err != nil {
		return fmt.Errorf("record e-mail %d: %w", id, err)
	}
	var sent, failed any
	switch {
	case r.Error == "":
		sent = formatTime(r.At)
	case r.Next.IsZero():
		failed = formatTime(r.At)
	}
	if _, err := s.write.ExecContext(ctx, `UPDATE email_deliveries SET attempts = attempts + 1, last_attempt_at = ?,
    last_error = ?, rejected = ?, next_attempt_at = ?, sent_at = ?, failed_at = ? WHERE id = ?`,
		formatTime(r.At), r.Error, string(rj), nullTime(r.Next), sent, failed, id); err != nil {
		return fmt.Errorf("record e-mail %d: %w", id, err)
	}
	return nil
}

// RequeueEmails makes a document's failed e-mails due again at at.
func (s *Store) RequeueEmails(ctx context.Context, documentID int64, at time.Time) (int, error) {
	res, err := s.write.ExecContext(ctx, `UPDATE email_deliveries SET failed_at = NULL, next_attempt_at = ?
WHERE document_id = ? AND failed_at IS NOT NULL AND sent_at IS NULL`, formatTime(at), documentID)
	if err != nil {
		return 0, fmt.Errorf("re-queue the e-mails of document %d: %w", documentID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("re-queue the e-mails of document %d: %w", documentID, err)
	}
	return int(n), nil
}

// RequeueFailedEmails makes the failed e-mails created since since (of
// companyID, unless 0) due again at at. The failed ones are among the
// settled, whose index by creation (email_deliveries_settled) it reads.
func (s *Store) RequeueFailedEmails(ctx context.Context, since time.Time, companyID int64, at time.Time) (int, error) {
	res, err := s.write.ExecContext(ctx, `UPDATE email_deliveries INDEXED BY email_deliveries_settled
SET failed_at = NULL, next_attempt_at = ?3
WHERE next_attempt_at IS NULL AND created_at >= ?1 AND failed_at IS NOT NULL AND sent_at IS NULL
    AND (?2 = 0 OR company_id = ?2)`,
		formatTime(since), companyID, formatTime(at))
	if err != nil {
		return 0, fmt.Errorf("re-queue the failed e-mails since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("re-queue the failed e-mails since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	return int(n), nil
}

// DocumentEmails returns a document's e-mails, oldest first.
func (s *Store) DocumentEmails(ctx context.Context, documentID int64) ([]tenant.EmailDelivery, error) {
	out, err := queryAll(ctx, s.read, scanEmail, `SELECT `+emailColumns+` FROM email_deliveries WHERE document_id = ? ORDER BY id`, documentID)
	if err != nil {
		return nil, fmt.Errorf("e-mails of document %d: %w", documentID, err)
	}
	return out, nil
}

// queryAll runs q with args on db and scans every row with scan; never
// nil.
func queryAll[T any](ctx context.Context, db querier, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, v)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	return out, nil
}

var _ tenant.WebhookSecretStore = (*Store)(nil)

// SealedWebhooks returns a batch of webhooks by id, for a rotation.
func (s *Store) SealedWebhooks(ctx context.Context, afterID int64, limit int) ([]tenant.Webhook, error) {
	out, err := queryAll(ctx, s.read, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks WHERE id > ? ORDER BY id LIMIT ?`, afterID, max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("sealed webhooks: %w", err)
	}
	return out, nil
}

// ReplaceWebhookSecret writes next only over old.
func (s *Store) ReplaceWebhookSecret(ctx context.Context, id int64, old, next []byte) (bool, error) {
	res, err := s.write.ExecContext(ctx, `UPDATE webhooks SET sealed_secret = ? WHERE id = ? AND sealed_secret = ?`, next, id, old)
	if err != nil {
		return false, fmt.Errorf("replace webhook secret %d: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
