package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

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

	qInsertReceived = `INSERT INTO received_documents (company_id, branch_id, id_externo, request_hash,
    clave, tipo_documento, emisor_tipo, emisor_numero, emisor_nombre, receptor_tipo,
    receptor_numero, fecha_emision, total_impuesto, total_comprobante, supplier_xml, mensaje, tipo,
    terminal, numero, consecutivo, fecha_mensaje, signed_xml, estado, ind_estado, codigo_mensaje,
    mensaje_hacienda, detalle_mensaje, response_xml, last_error, attempts, next_attempt_at,
    submitted_at, checked_at, created_at, updated_at, request, firma_politica, phase, ambiente)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING id`

	qSaveReceived = `UPDATE received_documents SET consecutivo = ?, fecha_mensaje = ?, signed_xml = ?,
    estado = ?, ind_estado = ?, codigo_mensaje = ?, mensaje_hacienda = ?, detalle_mensaje = ?,
    response_xml = ?, last_error = ?, attempts = ?, next_attempt_at = ?, submitted_at = ?,
    checked_at = ?, updated_at = ?, phase = ?
WHERE id = ? AND phase = ? AND updated_at = ?`

	// qDueReceived walks the received_due index in order (named: without
	// statistics the planner may choose another).
	qDueReceived = `SELECT ` + receivedColumns + ` FROM received_documents INDEXED BY received_due
WHERE ` + unsettledEstados + ` AND next_attempt_at IS NOT NULL AND next_attempt_at <= ?
ORDER BY next_attempt_at, id
LIMIT ?`
	qLeaseReceived = `UPDATE received_documents SET next_attempt_at = ?
WHERE id IN (SELECT value FROM json_each(?))`

	qReceivedByClave      = `SELECT ` + receivedColumns + ` FROM received_documents WHERE company_id = ? AND clave = ?`
	qReceivedByExternalID = `SELECT ` + receivedColumns + ` FROM received_documents
WHERE branch_id = ? AND id_externo = ? AND id_externo <> ''`
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

func scanReceived(row scanner) (tenant.ReceivedDocument, error) {
	var (
		r                                         tenant.ReceivedDocument
		estado, phase                             string
		detalle                                   sql.NullString
		fecha, fechaMsg, next, submitted, checked sql.NullString
		created, updated                          string
	)
	err := row.Scan(&r.ID, &r.CompanyID, &r.BranchID, &r.IDExterno, &r.RequestHash, &r.Clave, &r.TipoDocumento,
		&r.EmisorTipo, &r.EmisorNumero, &r.EmisorNombre, &r.ReceptorTipo, &r.ReceptorNumero, &fecha,
		&r.TotalImpuesto, &r.TotalComprobante, &r.SupplierXML, &r.Mensaje, &r.Tipo, &r.Terminal, &r.Numero,
		&r.Consecutivo, &fechaMsg, &r.SignedXML, &estado, &r.IndEstado, &r.CodigoMensaje, &r.MensajeHacienda,
		&detalle, &r.ResponseXML, &r.LastError, &r.Attempts, &next, &submitted, &checked, &created, &updated, &r.Request,
		&r.FirmaPolitica, &phase, &r.Ambiente, &r.Archive.Bucket, &r.Archive.Key)
	if err != nil {
		return tenant.ReceivedDocument{}, err
	}
	r.Estado, r.Phase, r.From = tenant.State(estado), tenant.Phase(phase), tenant.Phase(phase)
	if r.DetalleMensaje, err = decodeDetalle(detalle); err != nil {
		return tenant.ReceivedDocument{}, err
	}
	for _, f := range []struct {
		dst *time.Time
		src sql.NullString
	}{{&r.FechaEmision, fecha}, {&r.FechaMensaje, fechaMsg}, {&r.NextAttemptAt, next}, {&r.SubmittedAt, submitted}, {&r.CheckedAt, checked}} {
		if *f.dst, err = parseNullTime(f.src); err != nil {
			return tenant.ReceivedDocument{}, err
		}
	}
	if r.CreatedAt, err = parseTime(created); err != nil {
		return tenant.ReceivedDocument{}, err
	}
	if r.UpdatedAt, err = parseTime(updated); err != nil {
		return tenant.ReceivedDocument{}, err
	}
	return r, nil
}

// ReserveReceived steps the (BranchID, Terminal, Tipo) document sequence
// and inserts r with the number (and its IVA breakdown, when it carries
// one) in one IMMEDIATE transaction; a broken unique rule (the company's
// clave, the branch's id_externo) rolls the step back, so no number is
// consumed.
func (s *Store) ReserveReceived(ctx context.Context, r *tenant.ReceivedDocument) error {
	if err := checkReceived(r); err != nil {
		return fmt.Errorf("reserve received document %s of company %d: %w", r.Clave, r.CompanyID, err)
	}
	detalle, err := encodeDetalle(r.DetalleMensaje)
	if err != nil {
		return fmt.Errorf("reserve received document %s of company %d: %w", r.Clave, r.CompanyID, err)
	}
	now := s.clock()
	var numero, id int64
	err = s.batch.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if numero, err = s.nextNumber(ctx, tx, r.BranchID, r.Terminal, r.Tipo); err != nil {
			return err
		}
		err = mapErr(tx.QueryRowContext(ctx, qInsertReceived, r.CompanyID, r.BranchID, r.IDExterno,
			nullBytes(r.RequestHash), r.Clave, r.TipoDocumento, r.EmisorTipo, r.EmisorNumero, r.EmisorNombre,
			r.ReceptorTipo, r.ReceptorNumero, nullTime(r.FechaEmision), r.TotalImpuesto, r.TotalComprobante,
			r.SupplierXML, r.Mensaje, r.Tipo, r.Terminal, numero, r.Consecutivo, nullTime(r.FechaMensaje),
			nullBytes(r.SignedXML), string(r.Estado), r.IndEstado, r.CodigoMensaje, r.MensajeHacienda, detalle,
			nullBytes(r.ResponseXML), r.LastError, r.Attempts, nullTime(r.NextAttemptAt), nullTime(r.SubmittedAt),
			nullTime(r.CheckedAt), formatTime(now), formatTime(now), nullBytes(r.Request), r.FirmaPolitica, string(r.Phase), r.Ambiente).Scan(&id))
		if err != nil || len(r.IVABreakdown) == 0 {
			return err
		}
		if _, err := tx.ExecContext(ctx, qInsertReceivedIVA, id, string(r.IVABreakdown)); err != nil {
			return fmt.Errorf("iva breakdown: %w", mapErr(err))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reserve received document %s of company %d: %w", r.Clave, r.CompanyID, err)
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
	detalle, err := encodeDetalle(r.DetalleMensaje)
	if err != nil {
		return fmt.Errorf("save received document %d: %w", r.ID, err)
	}
	read := r.UpdatedAt.UTC().Truncate(time.Microsecond)
	now := nextVersion(s.clock(), read)
	err = s.batch.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, qSaveReceived, r.Consecutivo, nullTime(r.FechaMensaje), nullBytes(r.SignedXML),
			string(r.Estado), r.IndEstado, r.CodigoMensaje, r.MensajeHacienda, detalle, nullBytes(r.ResponseXML),
			r.LastError, r.Attempts, nullTime(r.NextAttemptAt), nullTime(r.SubmittedAt), nullTime(r.CheckedAt),
			formatTime(now), string(r.Phase), r.ID, string(r.From), formatTime(read))
		if err != nil {
			return mapErr(err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return s.writeOutbox(ctx, tx, r.CompanyID, 0, r.Event)
		}
		return missedSave(tx.QueryRowContext(ctx, `SELECT count(*) FROM received_documents WHERE id = ?`, r.ID), r.From, read)
	})
	if err != nil {
		return fmt.Errorf("save received document %d: %w", r.ID, err)
	}
	r.UpdatedAt, r.Event, r.From = now, nil, r.Phase
	return nil
}

// ReceivedByClave returns the company's received document with that clave.
func (s *Store) ReceivedByClave(ctx context.Context, companyID int64, clave string) (tenant.ReceivedDocument, error) {
	r, err := scanReceived(s.read.QueryRowContext(ctx, qReceivedByClave, companyID, clave))
	if err != nil {
		return tenant.ReceivedDocument{}, fmt.Errorf("received document %s of company %d: %w", clave, companyID, mapErr(err))
	}
	return r, nil
}

// ReceivedByExternalID returns the branch's received document with that
// id_externo; an empty one is ErrNotFound.
func (s *Store) ReceivedByExternalID(ctx context.Context, branchID int64, idExterno string) (tenant.ReceivedDocument, error) {
	r, err := scanReceived(s.read.QueryRowContext(ctx, qReceivedByExternalID, branchID, idExterno))
	if err != nil {
		return tenant.ReceivedDocument{}, fmt.Errorf("received document %q of branch %d: %w", idExterno, branchID, mapErr(err))
	}
	return r, nil
}

// ClaimDueReceived selects up to limit due received documents (the message
// in state 00, 04 or 05, NextAttemptAt set and not after now), most overdue
// first, and moves their NextAttemptAt to leaseUntil, in one IMMEDIATE
// transaction, as ClaimDueDocuments does: no two claims overlap. A limit
// below 1 claims nothing.
func (s *Store) ClaimDueReceived(ctx context.Context, now, leaseUntil time.Time, limit int) ([]tenant.ReceivedDocument, error) {
	return claimDue(ctx, s, "received documents", qDueReceived, qLeaseReceived, now, leaseUntil, limit, scanReceived,
		func(r *tenant.ReceivedDocument, lease time.Time) int64 { r.NextAttemptAt = lease; return r.ID })
}

var _ tenant.ReceivedStore = (*Store)(nil)
