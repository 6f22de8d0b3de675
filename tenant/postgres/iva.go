package postgres

import (
	"context"
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
    CASE WHEN i.breakdown IS NULL THEN d.signed_xml END
FROM documents d LEFT JOIN document_iva i ON i.document_id = d.id
WHERE d.company_id = $1 AND d.estado = '01' AND d.fecha_emision >= $2 AND d.fecha_emision < $3
    AND d.ambiente = $4`
	qIVAReceived = `SELECT r.id, r.clave, r.tipo_documento, i.breakdown,
    CASE WHEN i.breakdown IS NULL THEN r.supplier_xml END,
    CASE WHEN i.breakdown IS NULL THEN r.signed_xml END
FROM received_documents r LEFT JOIN received_iva i ON i.received_id = r.id
WHERE r.company_id = $1 AND r.estado = '01' AND r.mensaje IN ('1', '2')
    AND r.checked_at >= $2 AND r.checked_at < $3 AND r.ambiente = $4`

	qSaveDocumentIVA = `INSERT INTO document_iva (document_id, breakdown) SELECT id, $2 FROM documents WHERE id = $1
ON CONFLICT (document_id) DO UPDATE SET breakdown = excluded.breakdown`
	qSaveReceivedIVA = `INSERT INTO received_iva (received_id, breakdown) SELECT id, $2 FROM received_documents WHERE id = $1
ON CONFLICT (received_id) DO UPDATE SET breakdown = excluded.breakdown`
)

// IVASources implements tenant.IVAStore.
func (s *Store) IVASources(ctx context.Context, q tenant.IVAQuery, fn func(tenant.IVASource) error) error {
	for _, received := range []bool{false, true} {
		query := qIVADocuments
		if received {
			query = qIVAReceived
		}
		rows, err := s.pool.Query(ctx, query, q.CompanyID, q.Month.Start, q.Month.End, q.Ambiente)
		if err != nil {
			return fmt.Errorf("iva sources: %w", mapErr(err))
		}
		for rows.Next() {
			src := tenant.IVASource{Received: received}
			var breakdown *string
			dst := []any{&src.ID, &src.Clave, &src.Tipo, &breakdown, &src.XML}
			if received {
				dst = append(dst, &src.Message)
			}
			if err := rows.Scan(dst...); err != nil {
				rows.Close()
				return fmt.Errorf("iva sources: %w", mapErr(err))
			}
			if breakdown != nil {
				src.Breakdown = []byte(*breakdown)
			}
			if err := fn(src); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("iva sources: %w", mapErr(err))
		}
	}
	return nil
}

// SaveIVABreakdown implements tenant.IVAStore.
func (s *Store) SaveIVABreakdown(ctx context.Context, received bool, id int64, breakdown []byte) error {
	q := qSaveDocumentIVA
	if received {
		q = qSaveReceivedIVA
	}
	tag, err := s.pool.Exec(ctx, q, id, string(breakdown))
	if err != nil {
		return fmt.Errorf("save iva breakdown of %d: %w", id, mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("save iva breakdown of %d: %w", id, tenant.ErrNotFound)
	}
	return nil
}

// HasIVABreakdown reports whether the document (received: received
// document) id has a stored breakdown; the archive's sweep asks before it
// drops the row's XML.
func (s *Store) HasIVABreakdown(ctx context.Context, received bool, id int64) (bool, error) {
	q := `SELECT EXISTS (SELECT 1 FROM document_iva WHERE document_id = $1)`
	if received {
		q = `SELECT EXISTS (SELECT 1 FROM received_iva WHERE received_id = $1)`
	}
	var ok bool
	if err := s.pool.QueryRow(ctx, q, id).Scan(&ok); err != nil {
		return false, fmt.Errorf("iva breakdown of %d: %w", id, mapErr(err))
	}
	return ok, nil
}

var _ tenant.IVABatchSaver = (*Store)(nil)

const (
	qSaveDocumentIVAs = `INSERT INTO document_iva (document_id, breakdown)
SELECT d.id, b.breakdown FROM unnest($1::bigint[], $2::text[]) AS b (id, breakdown) JOIN documents d ON d.id = b.id
ON CONFLICT (document_id) DO UPDATE SET breakdown = excluded.breakdown`
	qSaveReceivedIVAs = `INSERT INTO received_iva (received_id, breakdown)
SELECT r.id, b.breakdown FROM unnest($1::bigint[], $2::text[]) AS b (id, breakdown) JOIN received_documents r ON r.id = b.id
ON CONFLICT (received_id) DO UPDATE SET breakdown = excluded.breakdown`
)

// SaveIVABreakdowns implements tenant.IVABatchSaver: one statement for the
// issued documents' breakdowns and one for the received ones'.
func (s *Store) SaveIVABreakdowns(ctx context.Context, ws []tenant.IVABreakdownWrite) error {
	for _, received := range []bool{false, true} {
		var ids []int64
		var bs []string
		for _, w := range ws {
			if w.Received == received {
				ids, bs = append(ids, w.ID), append(bs, string(w.Breakdown))
			}
		}
		if len(ids) == 0 {
			continue
		}
		q := qSaveDocumentIVAs
		if received {
			q = qSaveReceivedIVAs
		}
		if _, err := s.pool.Exec(ctx, q, ids, bs); err != nil {
			return fmt.Errorf("save %d iva breakdowns: %w", len(ids), mapErr(err))
		}
	}
	return nil
}
