package sqlite

import (
	"context"
	"fmt"
	"strings"

	"facturad/tenant"
)

var _ tenant.DocumentLister = (*Store)(nil)

// The listing's expressions, exactly as the listing indexes of the schema
// hold them: SQLite uses an index on an expression only for the same
// expression.
const (
	listAt           = `coalesce(fecha_emision, created_at)`
	listCounterparty = `(CASE WHEN tipo = '08' THEN emisor_numero ELSE receptor_numero END)`
)

// receivedListColumns are receivedColumns without the three XMLs and the
// request (the signature policy is a short text, read as stored).
const receivedListColumns = `id, company_id, branch_id, id_externo, request_hash, clave, tipo_documento,
    emisor_tipo, emisor_numero, emisor_nombre, receptor_tipo, receptor_numero, fecha_emision,
    total_impuesto, total_comprobante, NULL, mensaje, tipo, terminal, numero, consecutivo,
    fecha_mensaje, NULL, estado, ind_estado, codigo_mensaje, mensaje_hacienda,
    detalle_mensaje, NULL, last_error, attempts, next_attempt_at, submitted_at,
    checked_at, created_at, updated_at, NULL, firma_politica, phase, ambiente, '', ''`

// listTable is one listing's table: what a listed row reads, the columns
// its filters compare and the indexes it walks.
type listTable struct {
	name    string
	columns string
	// tipo is the type the tipo filter compares, counterparty the
	// identification the receptor filter compares (as indexed).
	tipo, counterparty string
	// The indexes: the company's order, and by id_externo (the unique
	// per-branch one), counterparty, estado and tipo.
	byCompany, byIDExterno, byCounterparty, byEstado, byTipo string
}

var (
	documentListing = listTable{
		name: "documents", columns: stateColumns, tipo: "tipo", counterparty: listCounterparty,
		byCompany: "documents_list", byIDExterno: "documents_branch_id_externo",
		byCounterparty: "documents_list_receptor", byEstado: "documents_list_estado", byTipo: "documents_list_tipo",
	}
	// A received document's counterparty is its supplier.
	receivedListing = listTable{
		name: "received_documents", columns: receivedListColumns, tipo: "tipo_documento", counterparty: "emisor_numero",
		byCompany: "received_list", byIDExterno: "received_documents_branch_id_externo",
		byCounterparty: "received_list_emisor", byEstado: "received_list_estado", byTipo: "received_list_tipo",
	}
)

// index names the index a listing walks, by its most selective filter:
// an id_externo names one row per branch at most (the unique index of
// branch and id_externo, probed once per branch of the company), a
// counterparty a customer's or a supplier's, a state or a type a share of
// them; without any, the company's rows.
func (t listTable) index(q tenant.ListQuery) string {
	switch {
	case q.IDExterno != "":
		return t.byIDExterno
	case q.Receptor != "":
		return t.byCounterparty
	case q.Estado != "":
		return t.byEstado
	case q.Tipo != "":
		return t.byTipo
	}
	return t.byCompany
}

// listingSQL builds a listing's statement from fixed fragments, one per
// filter present, so that each shape is planned for the index it names.
func listingSQL(t listTable, q tenant.ListQuery) (string, []any) {
	var b strings.Builder
	b.WriteString(`SELECT ` + t.columns + ` FROM ` + t.name + ` INDEXED BY ` + t.index(q) + `
WHERE company_id = ?`)
	args := []any{q.CompanyID}
	if q.IDExterno != "" {
		b.WriteString(` AND branch_id IN (SELECT id FROM branches WHERE company_id = ?)` +
			` AND id_externo = ? AND id_externo <> ''`)
		args = append(args, q.CompanyID, q.IDExterno)
	}
	if q.Receptor != "" {
		b.WriteString(` AND ` + t.counterparty + ` = ?`)
		args = append(args, q.Receptor)
	}
	if q.Estado != "" {
		b.WriteString(` AND estado = ?`)
		args = append(args, string(q.Estado))
	}
	if q.Tipo != "" {
		b.WriteString(` AND ` + t.tipo + ` = ?`)
		args = append(args, q.Tipo)
	}
	// The period as the stores compare it (tenant.ListQuery.Period): a
	// bound past the years the text of a time sorts within is no bound.
	desde, hasta, _ := q.Period()
	if !desde.IsZero() {
		b.WriteString(` AND ` + listAt + ` >= ?`)
		args = append(args, formatTime(desde))
	}
	// One upper bound on the issue time, the lower of hasta and the
	// cursor's, which the index walk starts from; the cursor's id then
	// sorts out the rows issued at the cursor's very instant. (SQLite
	// bounds an index walk by a single comparison per column, not by a
	// row value over an expression.)
	upper := hasta
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
	return listPage(ctx, s, "documents", documentListing, q, scanDocument)
}

// ListReceived returns a page of a company's received documents (see
// tenant.ReceivedStore).
func (s *Store) ListReceived(ctx context.Context, q tenant.ListQuery) ([]tenant.ReceivedDocument, error) {
	return listPage(ctx, s, "received documents", receivedListing, q, scanReceived)
}

// listPage returns the page q asks for of the listing of t, its rows
// scanned with scan; what names them in errors.
func listPage[T any](ctx context.Context, s *Store, what string, t listTable, q tenant.ListQuery, scan func(scanner) (T, error)) ([]T, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	if _, _, empty := q.Period(); empty {
		return []T{}, nil
	}
	query, args := listingSQL(t, q)
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s of company %d: %w", what, q.CompanyID, err)
	}
	defer rows.Close()
	out := make([]T, 0, min(q.Limit, 64))
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("list %s of company %d: %w", what, q.CompanyID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list %s of company %d: %w", what, q.CompanyID, err)
	}
	return out, nil
}
