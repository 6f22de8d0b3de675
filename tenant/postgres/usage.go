package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

var _ tenant.UsageStore = (*Store)(nil)

// The usage queries (A.14), one per filter shape so that each uses its
// index: one company ($3 its id), a reseller's companies ($3 the owner),
// every company.
const (
	usageByID    = `c.id = $3`
	usageByOwner = `c.owner_id = $3`
	usageAll     = `true`

	qUsageCompaniesByID    = `SELECT id FROM companies c WHERE c.id = $1`
	qUsageCompaniesByOwner = `SELECT id FROM companies c WHERE c.owner_id = $1 ORDER BY id`
	qUsageCompaniesAll     = `SELECT id FROM companies c ORDER BY id`

	// qQuotaUse reads a company's quota and its count of the month ($2),
	// or, when the month has no count yet, the count of its documents
	// numbered in [$3, $4).
	qQuotaUse = `SELECT c.cuota_mensual, COALESCE(
    (SELECT documentos FROM company_usage WHERE company_id = c.id AND periodo = $2),
    (SELECT count(*) FROM documents WHERE company_id = c.id AND created_at >= $3 AND created_at < $4))
FROM companies c WHERE c.id = $1`
)

// qUsageRows counts, for each company the filter selects, its documents and
// its receiver's messages numbered in [$1, $2), per type and estado. The
// counts of each company are a range read of documents_company_created
// (received_company_created), which carry the type and the estado: the
// read grows with the month's documents of the companies asked about, not
// with every document ever stored.
func qUsageRows(filter string) string {
	return `SELECT c.id, false, d.tipo, d.estado, d.n FROM companies c
CROSS JOIN LATERAL (
    SELECT tipo, estado, count(*) AS n FROM documents
    WHERE company_id = c.id AND created_at >= $1 AND created_at < $2
    GROUP BY tipo, estado) d
WHERE ` + filter + `
UNION ALL
SELECT c.id, true, '', r.estado, r.n FROM companies c
CROSS JOIN LATERAL (
    SELECT estado, count(*) AS n FROM received_documents
    WHERE company_id = c.id AND created_at >= $1 AND created_at < $2
    GROUP BY estado) r
WHERE ` + filter
}

// UsageCompanies returns the ids of the companies q selects, in order.
func (s *Store) UsageCompanies(ctx context.Context, q tenant.UsageQuery) ([]int64, error) {
	var (
		rows pgx.Rows
		err  error
	)
	switch {
	case q.CompanyID != 0:
		rows, err = s.pool.Query(ctx, qUsageCompaniesByID, q.CompanyID)
	case q.OwnerID != nil:
		rows, err = s.pool.Query(ctx, qUsageCompaniesByOwner, *q.OwnerID)
	default:
		rows, err = s.pool.Query(ctx, qUsageCompaniesAll)
	}
	if err != nil {
		return nil, fmt.Errorf("usage companies: %w", mapErr(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("usage companies: %w", mapErr(err))
	}
	return ids, nil
}

// UsageRows counts the documents and receiver's messages of the companies
// q selects numbered in q.Month, per company, type and estado.
func (s *Store) UsageRows(ctx context.Context, q tenant.UsageQuery) ([]tenant.UsageRow, error) {
	args := []any{q.Month.Start, q.Month.End}
	filter := usageAll
	switch {
	case q.CompanyID != 0:
		filter, args = usageByID, append(args, q.CompanyID)
	case q.OwnerID != nil:
		filter, args = usageByOwner, append(args, *q.OwnerID)
	}
	rows, err := s.pool.Query(ctx, qUsageRows(filter), args...)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tenant.UsageRow, error) {
		var u tenant.UsageRow
		err := r.Scan(&u.CompanyID, &u.Message, &u.Tipo, &u.Estado, &u.N)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("usage: %w", mapErr(err))
	}
	return out, nil
}

// QuotaUse reads the company's quota and what it numbered in the month of
// at: the month's count when there is one, else a count of its documents.
func (s *Store) QuotaUse(ctx context.Context, companyID int64, at time.Time) (*tenant.QuotaUse, error) {
	m := tenant.MonthOf(at)
	var (
		cuota *int64
		used  int64
	)
	if err := s.pool.QueryRow(ctx, qQuotaUse, companyID, m.Periodo, m.Start, m.End).Scan(&cuota, &used); err != nil {
		return nil, fmt.Errorf("quota of company %d: %w", companyID, mapErr(err))
	}
	if cuota == nil {
		return nil, nil
	}
	return &tenant.QuotaUse{Periodo: m.Periodo, Limit: *cuota, Used: used}, nil
}
