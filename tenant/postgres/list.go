package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

var _ tenant.DocumentLister = (*Store)(nil)

// The listing's expressions, exactly as migration 0010 indexes them: the
// planner uses an index on an expression only for the same expression.
const (
	listAt           = `COALESCE(fecha_emision, created_at)`
	listCounterparty = `(CASE WHEN tipo = '08' THEN emisor_numero ELSE receptor_numero END)`
)

// listSQL builds the listing's statement from fixed fragments, one per
// filter present: each shape is its own prepared statement, planned for
// the index that serves it (the company's, or the one of its most
// selective filter), and the cursor is a row comparison the index walk
// starts from.
func listSQL(q tenant.ListQuery) (string, []any) {
	var b strings.Builder
	args := []any{q.CompanyID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.IDExterno != "" {
		// At most one per branch: probe the unique (branch_id, id_externo)
		// index once per branch of the company, and sort the few found.
		// OFFSET 0 keeps the planner from flattening the probe into a walk
		// of the company's documents in order.
		b.WriteString(`SELECT ` + stateColumns + `
FROM (SELECT id AS branch_of FROM branches WHERE company_id = $1) AS b
CROSS JOIN LATERAL (SELECT * FROM documents
    WHERE branch_id = b.branch_of AND id_externo = ` + arg(q.IDExterno) + ` AND id_externo <> '' OFFSET 0) AS documents
WHERE company_id = $1`)
	} else {
		b.WriteString(`SELECT ` + stateColumns + ` FROM documents
WHERE company_id = $1`)
	}
	if q.Receptor != "" {
		b.WriteString(` AND ` + listCounterparty + ` = ` + arg(q.Receptor))
	}
	if q.Estado != "" {
		b.WriteString(` AND estado = ` + arg(string(q.Estado)))
	}
	if q.Tipo != "" {
		b.WriteString(` AND tipo = ` + arg(q.Tipo))
	}
	if !q.Desde.IsZero() {
		b.WriteString(` AND ` + listAt + ` >= ` + arg(listTime(q.Desde)))
	}
	if !q.Hasta.IsZero() {
		b.WriteString(` AND ` + listAt + ` <= ` + arg(listTime(q.Hasta)))
	}
	if q.After != nil {
		b.WriteString(` AND (` + listAt + `, id) < (` + arg(listTime(q.After.At)) + `, ` + arg(q.After.ID) + `)`)
	}
	b.WriteString(`
ORDER BY ` + listAt + ` DESC, id DESC
LIMIT ` + arg(q.Limit))
	return b.String(), args
}

func listTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// ListDocuments returns a page of a company's documents (see
// tenant.DocumentLister).
func (s *Store) ListDocuments(ctx context.Context, q tenant.ListQuery) ([]tenant.Document, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	query, args := listSQL(q)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list documents of company %d: %w", q.CompanyID, err)
	}
	docs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tenant.Document, error) {
		return scanDocument(r)
	})
	if err != nil {
		return nil, fmt.Errorf("list documents of company %d: %w", q.CompanyID, err)
	}
	if docs == nil {
		docs = []tenant.Document{}
	}
	return docs, nil
}
