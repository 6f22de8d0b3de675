package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

const (
	receivedColumns = `id, company_id, branch_id, id_externo, request_hash, clave, tipo_documento,
    emisor_tipo, emisor_numero, emisor_nombre, receptor_tipo, receptor_numero, fecha_emision,
    total_impuesto, total_comprobante, supplier_xml, mensaje, tipo, terminal, numero, consecutivo,
    fecha_mensaje, signed_xml, estado, ind_estado, codigo_mensaje, mensaje_hacienda,
    detalle_mensaje, response_xml, last_error, attempts, next_attempt_at, submitted_at,
    checked_at, created_at, updated_at, request, firma_politica, phase, ambiente,
    archive_bucket, archive_key`

	// qReserveReceived steps the document sequence of (branch, terminal,
	// tipo) and inserts the received document with the number, and its IVA
	// breakdown ($38, NULL for none), in one statement, as
	// qReserveDocument does: a broken unique rule rolls the step back.
	qReserveReceived = `WITH seq AS (
    INSERT INTO document_sequences AS s (branch_id, terminal, tipo, last_numero)
    VALUES ($2, $18, $17, 1)
    ON CONFLICT (branch_id, terminal, tipo) DO UPDATE SET last_numero = s.last_numero + 1
    RETURNING last_numero
), rec AS (
INSERT INTO received_documents (company_id, branch_id, id_externo, request_hash, clave,
    tipo_documento, emisor_tipo, emisor_numero, emisor_nombre, receptor_tipo, receptor_numero,
    fecha_emision, total_impuesto, total_comprobante, supplier_xml, mensaje, tipo, terminal,
    numero, consecutivo, fecha_mensaje, signed_xml, estado, ind_estado, codigo_mensaje,
    mensaje_hacienda, detalle_mensaje, response_xml, last_error, attempts, next_attempt_at,
    submitted_at, checked_at, created_at, updated_at, request, firma_politica, phase, ambiente)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
    (SELECT last_numero FROM seq), $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30,
    $31, $32, $33, $33, $34, $35, $36, $37)
RETURNING id, numero
), iva AS (
    INSERT INTO received_iva (received_id, breakdown)
    SELECT rec.id, $38::text FROM rec WHERE $38::text IS NOT NULL
)
SELECT id, numero FROM rec`

	qSaveReceived = `UPDATE received_documents SET consecutivo = $2, fecha_mensaje = $3, signed_xml = $4,
    estado = $5, ind_estado = $6, codigo_mensaje = $7, mensaje_hacienda = $8, detalle_mensaje = $9,
    response_xml = $10, last_error = $11, attempts = $12, next_attempt_at = $13, submitted_at = $14,
    checked_at = $15, updated_at = $16, phase = $18
WHERE id = $1 AND phase = $17 AND updated_at = $19`

	// qClaimDueReceived locks up to $3 due rows along the received_due
	// index, skipping those another claimer holds, and moves their next
	// attempt to the lease's end, as qClaimDueDocuments does for
	// documents.
	qClaimDueReceived = `WITH due AS (
    SELECT id AS due_id, next_attempt_at AS due_at FROM received_documents
    WHERE estado IN ('00', '04', '05') AND next_attempt_at IS NOT NULL AND next_attempt_at <= $1
    ORDER BY next_attempt_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE received_documents SET next_attempt_at = $2
    FROM due WHERE id = due.due_id
    RETURNING due.due_at, ` + receivedColumns + `
)
SELECT ` + receivedColumns + ` FROM claimed ORDER BY due_at, id`

	qReceivedByClave      = `SELECT ` + receivedColumns + ` FROM received_documents WHERE company_id = $1 AND clave = $2`
	qReceivedByExternalID = `SELECT ` + receivedColumns + ` FROM received_documents
WHERE branch_id = $1 AND id_externo = $2 AND id_externo <> ''`
)

func checkReceived(r *tenant.ReceivedDocument) error {
	switch {
	case r.CompanyID <= 0:
		return errors.New("no company")
	case r.BranchID <= 0:
		return errors.New("no branch")
	case r.Tipo == "" || r.Terminal == "":
		return errors.New("no message type or terminal")
	case r.Attempts < 0:
		return fmt.Errorf("negative attempts %d", r.Attempts)
	}
	return r.CheckSave()
}

func scanReceived(row pgx.Row) (tenant.ReceivedDocument, error) {
	var (
		r                                         tenant.ReceivedDocument
		estado, phase                             string
		fecha, fechaMsg, next, submitted, checked *time.Time
	)
	err := row.Scan(&r.ID, &r.CompanyID, &r.BranchID, &r.IDExterno, &r.RequestHash, &r.Clave, &r.TipoDocumento,
		&r.EmisorTipo, &r.EmisorNumero, &r.EmisorNombre, &r.ReceptorTipo, &r.ReceptorNumero, &fecha,
		&r.TotalImpuesto, &r.TotalComprobante, &r.SupplierXML, &r.Mensaje, &r.Tipo, &r.Terminal, &r.Numero,
		&r.Consecutivo, &fechaMsg, &r.SignedXML, &estado, &r.IndEstado, &r.CodigoMensaje, &r.MensajeHacienda,
		&r.DetalleMensaje, &r.ResponseXML, &r.LastError, &r.Attempts, &next, &submitted, &checked,
		&r.CreatedAt, &r.UpdatedAt, &r.Request, &r.FirmaPolitica, &phase, &r.Ambiente, &r.Archive.Bucket, &r.Archive.Key)
	if err != nil {
		return tenant.ReceivedDocument{}, err
	}
	r.Estado, r.Phase, r.From = tenant.State(estado), tenant.Phase(phase), tenant.Phase(phase)
	r.FechaEmision, r.FechaMensaje = fromNullTime(fecha), fromNullTime(fechaMsg)
	r.NextAttemptAt, r.SubmittedAt, r.CheckedAt = fromNullTime(next), fromNullTime(submitted), fromNullTime(checked)
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return r, nil
}

// ReserveReceived steps the (BranchID, Terminal, Tipo) document sequence
// and inserts r with the number in one statement; a broken unique rule
// (the company's clave, the branch's id_externo) is ErrConflict and takes
// no number.
func (s *Store) ReserveReceived(ctx context.Context, r *tenant.ReceivedDocument) error {
	if err := checkReceived(r); err != nil {
		return fmt.Errorf("reserve received document %s of company %d: %w", r.Clave, r.CompanyID, err)
	}
	now := s.clock()
	var id, numero int64
	err := s.pool.QueryRow(ctx, qReserveReceived, r.CompanyID, r.BranchID, r.IDExterno, nullBytes(r.RequestHash),
		r.Clave, r.TipoDocumento, r.EmisorTipo, r.EmisorNumero, r.EmisorNombre, r.ReceptorTipo, r.ReceptorNumero,
		docTime(r.FechaEmision), r.TotalImpuesto, r.TotalComprobante, r.SupplierXML, r.Mensaje, r.Tipo, r.Terminal,
		r.Consecutivo, docTime(r.FechaMensaje), nullBytes(r.SignedXML), string(r.Estado), r.IndEstado,
		r.CodigoMensaje, r.MensajeHacienda, r.DetalleMensaje, nullBytes(r.ResponseXML), r.LastError, r.Attempts,
		docTime(r.NextAttemptAt), docTime(r.SubmittedAt), docTime(r.CheckedAt), now, nullBytes(r.Request),
		r.FirmaPolitica, string(r.Phase), r.Ambiente, nullText(r.IVABreakdown)).Scan(&id, &numero)
	if err != nil {
		return fmt.Errorf("reserve received document %s of company %d: %w", r.Clave, r.CompanyID, mapErr(err))
	}
	r.ID, r.Numero, r.CreatedAt, r.UpdatedAt, r.From = id, numero, now, now, r.Phase
	return nil
}

// SaveReceived replaces the message's fields of r.ID provided the stored
// UpdatedAt is still r.UpdatedAt; a row changed since is ErrConflict, an
// unknown id ErrNotFound.
func (s *Store) SaveReceived(ctx context.Context, r *tenant.ReceivedDocument) error {
	if err := checkReceived(r); err != nil {
		return fmt.Errorf("save received document %d: %w", r.ID, err)
	}
	read := r.UpdatedAt.UTC().Truncate(time.Microsecond)
	now := nextVersion(s.clock(), read)
	q, args := withOutbox("WITH doc AS ("+qSaveReceived+" RETURNING id)"+outboxSelect, []any{r.ID, r.Consecutivo, docTime(r.FechaMensaje), nullBytes(r.SignedXML),
		string(r.Estado), r.IndEstado, r.CodigoMensaje, r.MensajeHacienda, r.DetalleMensaje, nullBytes(r.ResponseXML),
		r.LastError, r.Attempts, docTime(r.NextAttemptAt), docTime(r.SubmittedAt), docTime(r.CheckedAt), now, string(r.From), string(r.Phase), read},
		r.CompanyID, 0, r.Event)
	var id int64
	err := s.pool.QueryRow(ctx, q, args...).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.missedSave(ctx, "received_documents", r.ID, r.From, read)
	}
	if err != nil {
		return fmt.Errorf("save received document %d: %w", r.ID, mapErr(err))
	}
	r.UpdatedAt, r.Event, r.From = now, nil, r.Phase
	return nil
}

// ReceivedByClave returns the company's received document with that clave.
func (s *Store) ReceivedByClave(ctx context.Context, companyID int64, clave string) (tenant.ReceivedDocument, error) {
	r, err := scanReceived(s.pool.QueryRow(ctx, qReceivedByClave, companyID, clave))
	if err != nil {
		return tenant.ReceivedDocument{}, fmt.Errorf("received document %s of company %d: %w", clave, companyID, mapErr(err))
	}
	return r, nil
}

// ReceivedByExternalID returns the branch's received document with that
// id_externo; an empty one is ErrNotFound.
func (s *Store) ReceivedByExternalID(ctx context.Context, branchID int64, idExterno string) (tenant.ReceivedDocument, error) {
	r, err := scanReceived(s.pool.QueryRow(ctx, qReceivedByExternalID, branchID, idExterno))
	if err != nil {
		return tenant.ReceivedDocument{}, fmt.Errorf("received document %q of branch %d: %w", idExterno, branchID, mapErr(err))
	}
	return r, nil
}

// ClaimDueReceived locks up to limit due received documents (the message
// in state 00, 04 or 05, NextAttemptAt set and not after now) with FOR
// UPDATE SKIP LOCKED, most overdue first, and moves their NextAttemptAt to
// leaseUntil in the same statement: claimers on any number of connections
// or replicas never get the same row. A limit below 1 claims nothing.
func (s *Store) ClaimDueReceived(ctx context.Context, now, leaseUntil time.Time, limit int) ([]tenant.ReceivedDocument, error) {
	return claimDue(ctx, s, "received documents", qClaimDueReceived, now, leaseUntil, limit, scanReceived)
}

var _ tenant.ReceivedStore = (*Store)(nil)
