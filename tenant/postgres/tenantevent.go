package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

var _ tenant.TenantEventStore = (*Store)(nil)

const (
	// qRecordOccasions inserts the occasions not recorded yet and returns
	// those it inserted. Recorders at once of one occasion queue on its
	// key: the first inserts it, the others find it there after its
	// commit. Occasions come sorted, so that two recorders of overlapping
	// sets take their keys in one order and cannot deadlock.
	qRecordOccasions = `INSERT INTO tenant_events (company_id, evento, ocasion, event_id, created_at)
SELECT $1, $2, o, $3, $4 FROM unnest($5::text[]) WITH ORDINALITY AS u(o, n) ORDER BY n
ON CONFLICT DO NOTHING
RETURNING ocasion`
	// qTenantEventHooks writes a delivery per webhook of the company that
	// asked for the event (the outbox's probe of webhooks_company).
	qTenantEventHooks = `INSERT INTO webhook_deliveries (webhook_id, company_id, event_id, evento, clave, created_at, payload, next_attempt_at)
SELECT w.id, w.company_id, $2, $3, '', $4, $5, $4 FROM webhooks w
WHERE w.company_id = $1 AND $3 = ANY (w.eventos)`
	// qTenantEventMail writes the notice's e-mail, about no document.
	qTenantEventMail = `INSERT INTO email_deliveries (company_id, document_id, clave, recipients, created_at, next_attempt_at,
    evento, event_id, payload)
VALUES ($1, NULL, '', $2, $3, $3, $4, $5, $6)`

	// qExpiringCertificates walks companies_certificate_expiry from the
	// cursor ($3, $4) up to $1, of owner $2 unless 0.
	qExpiringCertificates = `SELECT id, owner_id, numero_identificacion, razon_social, ambiente, correo_notificaciones,
    certificate_expiry
FROM companies
WHERE activo AND certificate_expiry IS NOT NULL AND certificate_expiry < $1
    AND certificate_expiry >= $3 AND (certificate_expiry, id) > ($3, $4)
    AND ($2::bigint = 0 OR owner_id = $2)
ORDER BY certificate_expiry, id
LIMIT $5`
)

// stuckArm is one state's part of the stuck documents' query: a range of
// documents_waiting (estado, created_at) from the cursor ($2, $3) to $1,
// in order, each arm at most $4 rows; the outer query merges the three.
// The reseller's filter ($5) and, for the sweep, the documents announced
// already are left out inside each arm, so that a page is never cut short
// by rows filtered after the limit.
func stuckArm(estado string, unannounced bool) string {
	q := `(SELECT id, company_id, clave, estado, created_at, next_attempt_at IS NULL AS caller FROM documents
    WHERE estado = '` + estado + `' AND created_at < $1 AND created_at >= $2 AND (created_at, id) > ($2, $3)
        AND ($5::bigint = 0 OR company_id IN (SELECT id FROM companies WHERE owner_id = $5))`
	if unannounced {
		q += `
        AND NOT EXISTS (SELECT 1 FROM tenant_events e WHERE e.company_id = documents.company_id
            AND e.evento = '` + tenant.EventDocumentsStuck + `' AND e.ocasion = documents.clave)`
	}
	return q + `
    ORDER BY created_at, id LIMIT $4)`
}

func stuckQuery(unannounced bool) string {
	arms := make([]string, 0, len(tenant.UnsettledStates))
	for _, e := range tenant.UnsettledStates {
		arms = append(arms, stuckArm(string(e), unannounced))
	}
	return `WITH d AS (
` + strings.Join(arms, "\nUNION ALL\n") + `
)
SELECT d.id, d.clave, d.estado, d.created_at, d.caller,
    c.id, c.numero_identificacion, c.razon_social, c.ambiente, c.correo_notificaciones
FROM d JOIN companies c ON c.id = d.company_id
ORDER BY d.created_at, d.id
LIMIT $4`
}

var (
	qStuckDocuments            = stuckQuery(false)
	qStuckDocumentsUnannounced = stuckQuery(true)
)

// RecordTenantEvent records ev's new occasions and writes its outbox rows,
// in one transaction.
func (s *Store) RecordTenantEvent(ctx context.Context, ev tenant.TenantEvent) ([]string, error) {
	if err := ev.Check(); err != nil {
		return nil, err
	}
	var recorded []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		recorded, err = recordTenantEvent(ctx, tx, ev)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record %s of company %d: %w", ev.Name, ev.CompanyID, mapErr(err))
	}
	return recorded, nil
}

// recordTenantEvent is RecordTenantEvent in the caller's transaction.
func recordTenantEvent(ctx context.Context, tx pgx.Tx, ev tenant.TenantEvent) ([]string, error) {
	sorted := slices.Clone(ev.Occasions)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	created := pgTime(ev.Created)
	rows, err := tx.Query(ctx, qRecordOccasions, ev.CompanyID, ev.Name, ev.ID, created, sorted)
	if err != nil {
		return nil, err
	}
	fresh, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	recorded := inOrder(ev.Occasions, fresh)
	payload, err := ev.Payload(recorded)
	if err != nil {
		return nil, fmt.Errorf("render the event: %w", err)
	}
	if _, err := tx.Exec(ctx, qTenantEventHooks, ev.CompanyID, ev.ID, ev.Name, created, payload); err != nil {
		return nil, fmt.Errorf("webhook deliveries: %w", err)
	}
	if len(ev.Email) > 0 {
		if _, err := tx.Exec(ctx, qTenantEventMail, ev.CompanyID, ev.Email, created, ev.Name, ev.ID, payload); err != nil {
			return nil, fmt.Errorf("e-mail: %w", err)
		}
	}
	return recorded, nil
}

// inOrder returns the occasions of all that are in some, once each, in
// all's order.
func inOrder(all, some []string) []string {
	in := make(map[string]bool, len(some))
	for _, o := range some {
		in[o] = true
	}
	out := make([]string, 0, len(some))
	for _, o := range all {
		if in[o] {
			out = append(out, o)
			delete(in, o)
		}
	}
	return out
}

// ExpiringCertificates returns a page of the active companies whose
// certificate expires before q.Before.
func (s *Store) ExpiringCertificates(ctx context.Context, q tenant.CertificateQuery) ([]tenant.CompanyCertificate, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	var afterAt time.Time
	var afterID int64
	if q.After != nil {
		afterAt, afterID = q.After.At, q.After.ID
	}
	out, err := queryAll(ctx, s.pool, func(r pgx.Row) (tenant.CompanyCertificate, error) {
		var c tenant.CompanyCertificate
		err := r.Scan(&c.CompanyID, &c.OwnerID, &c.NumeroIdentificacion, &c.RazonSocial, &c.Ambiente,
			&c.CorreoNotificaciones, &c.Expiry)
		c.Expiry = c.Expiry.UTC()
		return c, err
	}, qExpiringCertificates, pgTime(q.Before), q.OwnerID, pgTime(afterAt), afterID, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("expiring certificates: %w", err)
	}
	return out, nil
}

// StuckDocuments returns a page of the documents not settled that were
// numbered before q.NumberedBefore, the oldest first.
func (s *Store) StuckDocuments(ctx context.Context, q tenant.StuckQuery) ([]tenant.StuckDocument, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	var afterAt time.Time
	var afterID int64
	if q.After != nil {
		afterAt, afterID = q.After.At, q.After.ID
	}
	query := qStuckDocuments
	if q.Unannounced {
		query = qStuckDocumentsUnannounced
	}
	out, err := queryAll(ctx, s.pool, func(r pgx.Row) (tenant.StuckDocument, error) {
		var (
			d      tenant.StuckDocument
			estado string
		)
		err := r.Scan(&d.DocumentID, &d.Clave, &estado, &d.NumberedAt, &d.WaitsForCaller,
			&d.CompanyID, &d.NumeroIdentificacion, &d.RazonSocial, &d.Ambiente, &d.CorreoNotificaciones)
		d.Estado, d.NumberedAt = tenant.State(estado), d.NumberedAt.UTC()
		return d, err
	}, query, pgTime(q.NumberedBefore), pgTime(afterAt), afterID, q.Limit, q.OwnerID)
	if err != nil {
		return nil, fmt.Errorf("stuck documents: %w", err)
	}
	return out, nil
}
