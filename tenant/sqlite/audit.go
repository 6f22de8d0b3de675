package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"facturad/tenant"
)

const (
	qRecordAudit = `INSERT INTO audit_log (company_id, recorded_at, user_id, username, request_id, action, fields)
VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`
	auditColumns = `id, company_id, recorded_at, user_id, username, request_id, action, fields`
	qAuditLog    = `SELECT ` + auditColumns + ` FROM audit_log INDEXED BY audit_log_company
WHERE company_id = ?
ORDER BY recorded_at DESC, id DESC
LIMIT ?`
	// SQLite bounds an index walk by one comparison per column: the
	// upper bound on recorded_at starts the walk at the cursor's time,
	// and the id sorts out the entries of that very instant.
	qAuditLogAfter = `SELECT ` + auditColumns + ` FROM audit_log INDEXED BY audit_log_company
WHERE company_id = ? AND recorded_at <= ? AND (recorded_at < ? OR id < ?)
ORDER BY recorded_at DESC, id DESC
LIMIT ?`
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
	b, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("record audit entry: %w", err)
	}
	err = s.write.QueryRowContext(ctx, qRecordAudit, e.CompanyID, formatTime(e.At), e.UserID, e.Username, e.RequestID, e.Action, string(b)).Scan(&e.ID)
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
		out, err = queryAll(ctx, s.read, scanAudit, qAuditLog, q.CompanyID, q.Limit)
	} else {
		at := formatTime(q.After.At)
		out, err = queryAll(ctx, s.read, scanAudit, qAuditLogAfter, q.CompanyID, at, at, q.After.ID, q.Limit)
	}
	if err != nil {
		return nil, fmt.Errorf("audit log of company %d: %w", q.CompanyID, err)
	}
	return out, nil
}

func scanAudit(r scanner) (tenant.AuditEntry, error) {
	var (
		e          tenant.AuditEntry
		at, fields string
	)
	if err := r.Scan(&e.ID, &e.CompanyID, &at, &e.UserID, &e.Username, &e.RequestID, &e.Action, &fields); err != nil {
		return tenant.AuditEntry{}, err
	}
	var err error
	if e.At, err = parseTime(at); err != nil {
		return tenant.AuditEntry{}, err
	}
	if err := json.Unmarshal([]byte(fields), &e.Fields); err != nil {
		return tenant.AuditEntry{}, fmt.Errorf("stored fields: %w", err)
	}
	if e.Fields == nil {
		e.Fields = []string{}
	}
	return e, nil
}
