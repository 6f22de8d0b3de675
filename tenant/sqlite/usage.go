package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"facturad/tenant"
)

var _ tenant.UsageStore = (*Store)(nil)

// The usage queries (A.14), one per filter shape so that each uses its
// index: one company, a reseller's companies, every company.
const (
	usageByID    = `c.id = ?3`
	usageByOwner = `c.owner_id = ?3`
	usageAll     = `1`

	qUsageCompaniesByID    = `SELECT id FROM companies WHERE id = ?`
	qUsageCompaniesByOwner = `SELECT id FROM companies WHERE owner_id = ? ORDER BY id`
	qUsageCompaniesAll     = `SELECT id FROM companies ORDER BY id`

	// qQuotaUse reads a company's quota and its count of the month (?2),
	// or, when the month has no count yet, the count of its documents
	// numbered in [?3, ?4).
	qQuotaUse = `SELECT c.cuota_mensual, COALESCE(
    (SELECT documentos FROM company_usage WHERE company_id = c.id AND periodo = ?2),
    (SELECT count(*) FROM documents WHERE company_id = c.id AND created_at >= ?3 AND created_at < ?4))
FROM companies c WHERE c.id = ?1`
)

// qUsageRows counts, for each company the filter selects, its documents and
// its receiver's messages numbered in [?1, ?2), per type and estado: for
// each company a range read of documents_company_created
// (received_company_created), which grows with the month's documents of
// the companies asked about, not with every document ever stored.
func qUsageRows(filter string) string {
	return `SELECT c.id, 0, d.tipo, d.estado, count(*) FROM companies c
JOIN documents d INDEXED BY documents_company_created
    ON d.company_id = c.id AND d.created_at >= ?1 AND d.created_at < ?2
WHERE ` + filter + `
GROUP BY c.id, d.tipo, d.estado
UNION ALL
SELECT c.id, 1, '', r.estado, count(*) FROM companies c
JOIN received_documents r INDEXED BY received_company_created
    ON r.company_id = c.id AND r.created_at >= ?1 AND r.created_at < ?2
WHERE ` + filter + `
GROUP BY c.id, r.estado`
}

// UsageCompanies returns the ids of the companies q selects, in order.
func (s *Store) UsageCompanies(ctx context.Context, q tenant.UsageQuery) ([]int64, error) {
	var (
		rows *sql.Rows
		err  error
	)
	switch {
	case q.CompanyID != 0:
		rows, err = s.read.QueryContext(ctx, qUsageCompaniesByID, q.CompanyID)
	case q.OwnerID != nil:
		rows, err = s.read.QueryContext(ctx, qUsageCompaniesByOwner, *q.OwnerID)
	default:
		rows, err = s.read.QueryContext(ctx, qUsageCompaniesAll)
	}
	if err != nil {
		return nil, fmt.Errorf("usage companies: %w", mapErr(err))
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("usage companies: %w", mapErr(err))
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("usage companies: %w", mapErr(err))
	}
	return ids, nil
}

// UsageRows counts the documents and receiver's messages of the companies
// q selects numbered in q.Month, per company, type and estado.
func (s *Store) UsageRows(ctx context.Context, q tenant.UsageQuery) ([]tenant.UsageRow, error) {
	args := []any{formatTime(q.Month.Start), formatTime(q.Month.End)}
	filter := usageAll
	switch {
	case q.CompanyID != 0:
		filter, args = usageByID, append(args, q.CompanyID)
	case q.OwnerID != nil:
		filter, args = usageByOwner, append(args, *q.OwnerID)
	}
	rows, err := s.read.QueryContext(ctx, qUsageRows(filter), args...)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", mapErr(err))
	}
	defer rows.Close()
	var out []tenant.UsageRow
	for rows.Next() {
		var u tenant.UsageRow
		if err := rows.Scan(&u.CompanyID, &u.Message, &u.Tipo, &u.Estado, &u.N); err != nil {
			return nil, fmt.Errorf("usage: %w", mapErr(err))
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("usage: %w", mapErr(err))
	}
	return out, nil
}

// QuotaUse reads the company's quota and what it numbered in the month of
// at: the month's count when there is one, else a count of its documents.
func (s *Store) QuotaUse(ctx context.Context, companyID int64, at time.Time) (*tenant.QuotaUse, error) {
	m := tenant.MonthOf(at)
	var cuota sql.NullInt64
	var used int64
	if err := s.read.QueryRowContext(ctx, qQuotaUse, companyID, m.Periodo, formatTime(m.Start), formatTime(m.End)).Scan(&cuota, &used); err != nil {
		return nil, fmt.Errorf("quota of company %d: %w", companyID, mapErr(err))
	}
	if !cuota.Valid {
		return nil, nil
	}
	return &tenant.QuotaUse{Periodo: m.Periodo, Limit: cuota.Int64, Used: used}, nil
}
