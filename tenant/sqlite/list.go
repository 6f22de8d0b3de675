package sqlite

import (
	"context"
	"fmt"
	"strings"

	"facturad/tenant"
)

var _ tenant.DocumentLister = (*Store)(nil)

// The listing's expressions, exactly as migration 0010 indexes them: SQLite
// uses an index on an expression only for the same expression.
const (
	listAt           = `coalesce(fecha_emision, created_at)`
	listCounterparty = `(CASE WHEN tipo = '08' THEN emisor_numero ELSE receptor_numero END)`
)

// listIndex names the index a listing walks, by its most selective filter:
// an id_externo names one document per branch at most (the unique index
// of branch and id_externo, probed once per branch of the company), a counterparty a customer's, a
// state or a type a share of them; without any, the company's documents.
func listIndex(q tenant.ListQuery) string {
	switch {
	case q.IDExterno != "":
		return "documents_branch_id_externo"
	case q.Receptor != "":
		return "documents_list_receptor"
	case q.Estado != "":
		return "documents_list_estado"
	case q.Tipo != "":
		return "documents_list_tipo"
	}
	return "documents_list"
}

// listSQL builds the listing's statement from fixed fragments, one per
// filter present, so that each shape is planned for the index it names.
func listSQL(q tenant.ListQuery) (string, []any) {
	var b strings.Builder
	b.WriteString(`SELECT ` + stateColumns + ` FROM documents INDEXED BY ` + listIndex(q) + `
WHERE company_id = ?`)
	args := []any{q.CompanyID}
	if q.IDExterno != "" {
		b.WriteString(` AND branch_id IN (SELECT id FROM branches WHERE company_id = ?)` +
			` AND id_externo = ? AND id_externo <> ''`)
		args = append(args, q.CompanyID, q.IDExterno)
	}
	if q.Receptor != "" {
		b.WriteString(` AND ` + listCounterparty + ` = ?`)
		args = append(args, q.Receptor)
	}
	if q.Estado != "" {
		b.WriteString(` AND estado = ?`)
		args = append(args, string(q.Estado))
	}
	if q.Tipo != "" {
		b.WriteString(` AND tipo = ?`)
		args = append(args, q.Tipo)
	}
	if !q.Desde.IsZero() {
		b.WriteString(` AND ` + listAt + ` >= ?`)
		args = append(args, formatTime(q.Desde))
	}
	// One upper bound on the issue time, the lower of hasta and the
	// cursor's, which the index walk starts from; the cursor's id then
	// sorts out the rows issued at the cursor's very instant. (SQLite
	// bounds an index walk by a single comparison per column, not by a
	// row value over an expression.)
	upper := q.Hasta
	if q.After != nil && (upper.IsZero() || q.After.At.Before(upper)) {
		upper = q.After.At
	}
	if !upper.IsZero() {
		b.WriteString(` AND ` + listAt + ` <= ?`)
		args = append(args, formatTime(upper))
	}
	if q.After != nil {
		b.WriteString(` AND (` + listAt + ` < ? OR id < ?)`)
		args = append(args, formatTime(q.After.At), q.After.ID)
	}
	b.WriteString(`
ORDER BY ` + listAt + ` DESC, id DESC
LIMIT ?`)
	args = append(args, q.Limit)
	return b.String(), args
}

// ListDocuments returns a page of a company's documents (see
// tenant.DocumentLister).
func (s *Store) ListDocuments(ctx context.Context, q tenant.ListQuery) ([]tenant.Document, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	query, args := listSQL(q)
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list documents of company %d: %w", q.CompanyID, err)
	}
	defer rows.Close()
	out := make([]tenant.Document, 0, min(q.Limit, 64))
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return nil, fmt.Errorf("list documents of company %d: %w", q.CompanyID, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list documents of company %d: %w", q.CompanyID, err)
	}
	return out, nil
}
