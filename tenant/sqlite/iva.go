package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"facturad/tenant"
)

var _ tenant.IVAStore = (*Store)(nil)

// The IVA summary's reads (A.15): a company's accepted documents of a
// month along documents_iva_month, its accepted messages along
// received_iva_month, each with its stored breakdown, and the XML only
// when it has none.
const (
	qIVADocuments = `SELECT d.id, d.clave, d.tipo, i.breakdown,
    CASE WHEN i.breakdown IS NULL THEN (SELECT xml FROM document_signed_xml WHERE document_id = d.id) END, NULL
FROM documents d LEFT JOIN document_iva i ON i.document_id = d.id
WHERE d.company_id = ? AND d.estado = '01' AND d.fecha_emision >= ? AND d.fecha_emision < ?
    AND d.ambiente = ?`
	qIVAReceived = `SELECT r.id, r.clave, r.tipo_documento, i.breakdown,
    CASE WHEN i.breakdown IS NULL THEN r.supplier_xml END,
    CASE WHEN i.breakdown IS NULL THEN r.signed_xml END
FROM received_documents r LEFT JOIN received_iva i ON i.received_id = r.id
WHERE r.company_id = ? AND r.estado = '01' AND r.mensaje IN ('1', '2')
    AND r.checked_at >= ? AND r.checked_at < ? AND r.ambiente = ?`

	qSaveDocumentIVA = `INSERT INTO document_iva (document_id, breakdown) SELECT id, ? FROM documents WHERE id = ?
ON CONFLICT (document_id) DO UPDATE SET breakdown = excluded.breakdown`
	qSaveReceivedIVA = `INSERT INTO received_iva (received_id, breakdown) SELECT id, ? FROM received_documents WHERE id = ?
ON CONFLICT (received_id) DO UPDATE SET breakdown = excluded.breakdown`

	// qInsertReceivedIVA writes a received document's breakdown with its
	// reservation (qInsertDocumentIVA a document's).
	qInsertReceivedIVA = `INSERT INTO received_iva (received_id, breakdown) VALUES (?, ?)`
)

// IVASources implements tenant.IVAStore.
func (s *Store) IVASources(ctx context.Context, q tenant.IVAQuery, fn func(tenant.IVASource) error) error {
	for _, received := range []bool{false, true} {
		query := qIVADocuments
		if received {
			query = qIVAReceived
		}
		if err := s.ivaRead(ctx, query, received, q, fn); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) ivaRead(ctx context.Context, query string, received bool, q tenant.IVAQuery, fn func(tenant.IVASource) error) error {
	rows, err := s.read.QueryContext(ctx, query, q.CompanyID, formatTime(q.Month.Start), formatTime(q.Month.End), q.Ambiente)
	if err != nil {
		return fmt.Errorf("iva sources: %w", mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		src := tenant.IVASource{Received: received}
		var breakdown sql.NullString
		if err := rows.Scan(&src.ID, &src.Clave, &src.Tipo, &breakdown, &src.XML, &src.Message); err != nil {
			return fmt.Errorf("iva sources: %w", mapErr(err))
		}
		if breakdown.Valid {
			src.Breakdown = []byte(breakdown.String)
		}
		if err := fn(src); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("iva sources: %w", mapErr(err))
	}
	return nil
}

// SaveIVABreakdown implements tenant.IVAStore.
func (s *Store) SaveIVABreakdown(ctx context.Context, received bool, id int64, breakdown []byte) error {
	q := qSaveDocumentIVA
	if received {
		q = qSaveReceivedIVA
	}
	res, err := s.write.ExecContext(ctx, q, string(breakdown), id)
	if err != nil {
		return fmt.Errorf("save iva breakdown of %d: %w", id, mapErr(err))
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("save iva breakdown of %d: %w", id, tenant.ErrNotFound)
	}
	return nil
}

// HasIVABreakdown reports whether the document (received: received
// document) id has a stored breakdown; the archive's sweep asks before it
// drops the row's XML.
func (s *Store) HasIVABreakdown(ctx context.Context, received bool, id int64) (bool, error) {
	q := `SELECT EXISTS (SELECT 1 FROM document_iva WHERE document_id = ?)`
	if received {
		q = `SELECT EXISTS (SELECT 1 FROM received_iva WHERE received_id = ?)`
	}
	var ok bool
	if err := s.read.QueryRowContext(ctx, q, id).Scan(&ok); err != nil {
		return false, fmt.Errorf("iva breakdown of %d: %w", id, mapErr(err))
	}
	return ok, nil
}

var _ tenant.IVABatchSaver = (*Store)(nil)

// SaveIVABreakdowns implements tenant.IVABatchSaver: one transaction.
func (s *Store) SaveIVABreakdowns(ctx context.Context, ws []tenant.IVABreakdownWrite) (err error) {
	if len(ws) == 0 {
		return nil
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save %d iva breakdowns: %w", len(ws), mapErr(err))
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	for _, w := range ws {
		q := qSaveDocumentIVA
		if w.Received {
			q = qSaveReceivedIVA
		}
		if _, err := tx.ExecContext(ctx, q, string(w.Breakdown), w.ID); err != nil {
			return fmt.Errorf("save %d iva breakdowns: %w", len(ws), mapErr(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save %d iva breakdowns: %w", len(ws), mapErr(err))
	}
	return nil
}
