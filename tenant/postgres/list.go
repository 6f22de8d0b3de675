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

// The listing's expressions, exactly as the listing indexes of the schema
// hold them: the planner uses an index on an expression only for the same
// expression.
const (
	listAt           = `COALESCE(fecha_emision, created_at)`
	listCounterparty = `(CASE WHEN tipo = '08' THEN emisor_numero ELSE receptor_numero END)`
)

// receivedListColumns are receivedColumns without the three XMLs and the
// request (the signature policy is a short text, read as stored).
const receivedListColumns = `id, company_id, branch_id, id_externo, request_hash, clave, tipo_documento,
    emisor_tipo, emisor_numero, emisor_nombre, receptor_tipo, receptor_numero, fecha_emision,
    total_impuesto, total_comprobante, NULL::bytea, mensaje, tipo, terminal, numero, consecutivo,
    fecha_mensaje, NULL::bytea, estado, ind_estado, codigo_mensaje, mensaje_hacienda,
    detalle_mensaje, NULL::bytea, last_error, attempts, next_attempt_at, submitted_at,
    checked_at, created_at, updated_at, NULL::bytea, firma_politica, phase, ambiente, '', ''`

// listTable is one listing's table: what a listed row reads, and the
// columns its filters compare.
type listTable struct {
	name    string
	columns string
	// tipo is the type the tipo filter compares, counterparty the
	// identification the receptor filter compares (as indexed).
	tipo, counterparty string
}

var (
	documentListing = listTable{name: "documents", columns: stateColumns, tipo: "tipo", counterparty: listCounterparty}
	// A received document's counterparty is its supplier.
	receivedListing = listTable{name: "received_documents", columns: receivedListColumns,
		tipo: "tipo_documento", counterparty: "emisor_numero"}
)

// listingSQL builds a listing's statement from fixed fragments, one per
// filter present: each shape is its own prepared statement, planned for
// the index that serves it (the company's, or the one of its most
// selective filter), and the cursor is a row comparison the index walk
// starts from.
func listingSQL(t listTable, q tenant.ListQuery) (string, []any) {
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
		// of the company's rows in order.
		b.WriteString(`SELECT ` + t.columns + `
FROM (SELECT id AS branch_of FROM branches WHERE company_id = $1) AS b
CROSS JOIN LATERAL (SELECT * FROM ` + t.name + `
    WHERE branch_id = b.branch_of AND id_externo = ` + arg(q.IDExterno) + ` AND id_externo <> '' OFFSET 0) AS ` + t.name + `
WHERE company_id = $1`)
	} else {
		b.WriteString(`SELECT ` + t.columns + ` FROM ` + t.name + `
WHERE company_id = $1`)
	}
	if q.Receptor != "" {
		b.WriteString(` AND ` + t.counterparty + ` = ` + arg(q.Receptor))
	}
	if q.Estado != "" {
		b.WriteString(` AND estado = ` + arg(string(q.Estado)))
	}
	if q.Tipo != "" {
		b.WriteString(` AND ` + t.tipo + ` = ` + arg(q.Tipo))
	}
	// The period as both stores compare it (tenant.ListQuery.Period).
	desde, hasta, _ := q.Period()
	if !desde.IsZero() {
		b.WriteString(` AND ` + listAt + ` >= ` + arg(desde))
	}
	if !hasta.IsZero() {
		b.WriteString(` AND ` + listAt + ` <= ` + arg(hasta))
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
	return listPage(ctx, s, "documents", documentListing, q, scanDocument)
}

// ListReceived returns a page of a company's received documents (see
// tenant.ReceivedStore).
func (s *Store) ListReceived(ctx context.Context, q tenant.ListQuery) ([]tenant.ReceivedDocument, error) {
	return listPage(ctx, s, "received documents", receivedListing, q, scanReceived)
}

// listPage returns the page q asks for of the listing of t, its rows
// scanned with scan; what names them in errors.
func listPage[T any](ctx context.Context, s *Store, what string, t listTable, q tenant.ListQuery, scan func(pgx.Row) (T, error)) ([]T, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	if _, _, empty := q.Period(); empty {
		return []T{}, nil
	}
	query, args := listingSQL(t, q)
	out, err := queryAll(ctx, s.pool, scan, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s of company %d: %w", what, q.CompanyID, err)
	}
	return out, nil
}
