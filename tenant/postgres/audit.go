package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

const (
	qRecordAudit = `INSERT INTO audit_log (company_id, recorded_at, user_id, username, request_id, action, fields)
VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`
	auditColumns = `id, company_id, recorded_at, user_id, username, request_id, action, fields`
	// A page walks audit_log_company from the company's newest entry, or
	// from the row after the cursor's (a row comparison the index takes).
	qAuditLog = `SELECT ` + auditColumns + ` FROM audit_log
WHERE company_id = $1
ORDER BY recorded_at DESC, id DESC
LIMIT $2`
	qAuditLogAfter = `SELECT ` + auditColumns + ` FROM audit_log
WHERE company_id = $1 AND (recorded_at, id) < ($2, $3)
ORDER BY recorded_at DESC, id DESC
LIMIT $4`
)

var _ tenant.AuditStore = (*Store)(nil)

// RecordAudit appends an entry to the audit log and sets its id.
func (s *Store) RecordAudit(ctx context.Context, e *tenant.AuditEntry) error {
	if e.At.IsZero() {
		return fmt.Errorf("record audit entry: no time")
	}
	fields := e.Fields
	if fields == nil {
		fields = []string{}
	}
	at := e.At.UTC()
	err := s.pool.QueryRow(ctx, qRecordAudit, e.CompanyID, at, e.UserID, e.Username, e.RequestID, e.Action, fields).Scan(&e.ID)
	if err != nil {
		return fmt.Errorf("record audit entry: %w", mapErr(err))
	}
	return nil
}

// AuditLog returns a page of a company's audit log, newest first.
func (s *Store) AuditLog(ctx context.Context, q tenant.AuditQuery) ([]tenant.AuditEntry, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	var (
		out []tenant.AuditEntry
		err error
	)
	if q.After == nil {
		out, err = queryAll(ctx, s.pool, scanAudit, qAuditLog, q.CompanyID, q.Limit)
	} else {
		out, err = queryAll(ctx, s.pool, scanAudit, qAuditLogAfter, q.CompanyID, q.After.At.UTC(), q.After.ID, q.Limit)
	}
	if err != nil {
		return nil, fmt.Errorf("audit log of company %d: %w", q.CompanyID, err)
	}
	return out, nil
}

func scanAudit(r pgx.Row) (tenant.AuditEntry, error) {
	var e tenant.AuditEntry
	if err := r.Scan(&e.ID, &e.CompanyID, &e.At, &e.UserID, &e.Username, &e.RequestID, &e.Action, &e.Fields); err != nil {
		return tenant.AuditEntry{}, err
	}
	e.At = e.At.UTC()
	if e.Fields == nil {
		e.Fields = []string{}
	}
	return e, nil
}
