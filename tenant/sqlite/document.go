package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"facturad/tenant"
)

var _ tenant.DocumentStore = (*Store)(nil)

// unsettledEstados is the condition of the partial indexes over the
// documents and messages not settled yet, as the schema writes it, which a
// query must repeat as written for SQLite to read them.
const unsettledEstados = `(estado = '00' OR estado = '04' OR estado = '05')`

// documentColumns read a whole document. Its large parts live in tables of
// their own, read here by their document's id.
const documentColumns = `id, company_id, branch_id, id_externo, request_hash, tipo, terminal,
    numero, consecutivo, clave, situacion, fecha_emision, emisor_tipo, emisor_numero,
    receptor_tipo, receptor_numero, estado,
    (SELECT xml FROM document_signed_xml WHERE document_id = documents.id),
    ind_estado, codigo_mensaje, mensaje_hacienda, detalle_mensaje,
    (SELECT xml FROM document_response_xml WHERE document_id = documents.id),
    last_error, attempts, next_attempt_at, submitted_at, checked_at, created_at, updated_at,
    (SELECT request FROM document_requests WHERE document_id = documents.id), phase, ambiente,
    archive_bucket, archive_key`

// stateColumns are documentColumns without the large parts, which read
// back empty: what a listing shows (a page of 500 rows reads no megabytes
// of XML) and what a caller moving a document's state on needs.
const stateColumns = `id, company_id, branch_id, id_externo, request_hash, tipo, terminal,
    numero, consecutivo, clave, situacion, fecha_emision, emisor_tipo, emisor_numero,
    receptor_tipo, receptor_numero, estado, NULL, ind_estado, codigo_mensaje,
    mensaje_hacienda, detalle_mensaje, NULL, last_error, attempts, next_attempt_at,
    submitted_at, checked_at, created_at, updated_at, NULL, phase, ambiente, '', ''`

const (
	// qNextDocumentNumber steps the sequence, creating it at 1, and
	// qDocumentNumber reads where it stands. They run in the transaction
	// that inserts the document, so a failed insert undoes the step.
	//
	// The write statements on a document's path have no RETURNING clause:
	// SQLite buffers a RETURNING clause's rows in a temporary b-tree that
	// it opens and closes on every run. Without it, a document's four
	// writes take a quarter less CPU (BenchmarkDocumentStore/Lifecycle:
	// 490-510 µs before, 355-390 µs after).
	qNextDocumentNumber = `INSERT INTO document_sequences (branch_id, terminal, tipo, last_numero)
VALUES (?, ?, ?, 1)
ON CONFLICT (branch_id, terminal, tipo) DO UPDATE SET last_numero = last_numero + 1`
	qDocumentNumber = `SELECT last_numero FROM document_sequences WHERE branch_id = ? AND terminal = ? AND tipo = ?`

	// qRaiseDocumentNumber records a number the caller chose (its own
	// clave's): the sequence rises to it, never falls, so that a number the
	// service hands out later is never this one.
	qRaiseDocumentNumber = `INSERT INTO document_sequences (branch_id, terminal, tipo, last_numero)
VALUES (?, ?, ?, ?)
ON CONFLICT (branch_id, terminal, tipo) DO UPDATE SET last_numero = max(last_numero, excluded.last_numero)`

	// The monthly quota (A.14), in the transaction that numbers the
	// document: qQuota reads the company's quota and its count of the
	// month (NULL when the company has no quota, or the month no count
	// yet); a month without a count is counted from the company's
	// documents numbered in it (qCountMonth, over
	// documents_company_created) and written with qInsertUsage; a count
	// below the quota is stepped with qStepUsage. A company that does
	// not exist has no row.
	qQuota = `SELECT c.cuota_mensual, u.documentos FROM companies c
LEFT JOIN company_usage u ON u.company_id = c.id AND u.periodo = ?
WHERE c.id = ?`
	qCountMonth = `SELECT count(*) FROM documents
WHERE company_id = ? AND created_at >= ? AND created_at < ?`
	qInsertUsage = `INSERT INTO company_usage (company_id, periodo, documentos) VALUES (?, ?, ?)`
	qStepUsage   = `UPDATE company_usage SET documentos = documentos + 1
WHERE company_id = ? AND periodo = ?`
	// qExternalIDTaken tells a reservation the quota refused from a
	// concurrent send of the same request, which is a conflict.
	qExternalIDTaken = `SELECT count(*) FROM documents
WHERE branch_id = ? AND id_externo = ? AND id_externo <> ''`

	qInsertDocument = `INSERT INTO documents (company_id, branch_id, id_externo, request_hash,
    tipo, terminal, numero, consecutivo, clave, situacion, fecha_emision, emisor_tipo,
    emisor_numero, receptor_tipo, receptor_numero, estado, ind_estado, codigo_mensaje,
    mensaje_hacienda, detalle_mensaje, last_error, attempts, next_attempt_at, submitted_at,
    checked_at, created_at, updated_at, phase, ambiente)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

	qSaveDocument = `UPDATE documents SET consecutivo = ?, clave = ?, situacion = ?,
    fecha_emision = ?, emisor_tipo = ?, emisor_numero = ?, receptor_tipo = ?,
    receptor_numero = ?, estado = ?, ind_estado = ?, codigo_mensaje = ?,
    mensaje_hacienda = ?, detalle_mensaje = ?, last_error = ?, attempts = ?,
    next_attempt_at = ?, submitted_at = ?, checked_at = ?, updated_at = ?, phase = ?
WHERE id = ? AND phase = ? AND updated_at = ?`

	// qSaveDocumentState is qSaveDocument for a save that leaves the
	// document's identity (its number, clave, date and parties) as stored,
	// which is every save after the one that signs it. SQLite rewrites the
	// entries of every index that holds a column an UPDATE sets, whether
	// or not its value changes: the full statement touches eight of the
	// table's indexes, this one the three that hold the state. A save
	// whose identity differs matches no row here and takes qSaveDocument.
	qSaveDocumentState = `UPDATE documents SET estado = ?, ind_estado = ?, codigo_mensaje = ?,
    mensaje_hacienda = ?, detalle_mensaje = ?, last_error = ?, attempts = ?,
    next_attempt_at = ?, submitted_at = ?, checked_at = ?, updated_at = ?, phase = ?
WHERE id = ? AND phase = ? AND updated_at = ? AND consecutivo = ? AND clave = ? AND situacion = ?
    AND fecha_emision IS ? AND emisor_tipo = ? AND emisor_numero = ? AND receptor_tipo = ?
    AND receptor_numero = ?`

	// The parts are written once: a save writes a part it carries only
	// when it differs from the stored one, and a part it does not carry
	// is kept. The request is kept from numbering on.
	qInsertRequest = `INSERT INTO document_requests (document_id, request) VALUES (?, ?)`
	qSaveSignedXML = `INSERT INTO document_signed_xml (document_id, xml) VALUES (?, ?)
ON CONFLICT (document_id) DO UPDATE SET xml = excluded.xml WHERE xml IS NOT excluded.xml`
	qSaveResponseXML = `INSERT INTO document_response_xml (document_id, xml) VALUES (?, ?)
ON CONFLICT (document_id) DO UPDATE SET xml = excluded.xml WHERE xml IS NOT excluded.xml`

	// qInsertDocumentIVA writes a document's IVA breakdown with its
	// reservation.
	qInsertDocumentIVA = `INSERT INTO document_iva (document_id, breakdown) VALUES (?, ?)`

	// qDocumentExists tells a missing document from one changed since it
	// was read, when a save matched no row.
	qDocumentExists = `SELECT count(*) FROM documents WHERE id = ?`

	// The lookups repeat the partial indexes' conditions so that SQLite
	// uses them.
	qDocumentByClave = `SELECT ` + documentColumns + ` FROM documents
WHERE clave = ? AND clave <> ''`
	qDocumentStateByClave = `SELECT ` + stateColumns + ` FROM documents
WHERE clave = ? AND clave <> ''`
	qDocumentByExternalID = `SELECT ` + documentColumns + ` FROM documents
WHERE branch_id = ? AND id_externo = ? AND id_externo <> ''`

	// qDueDocuments walks the documents_due index in order. It names the
	// index: without statistics the planner would rather look up each
	// state in documents_waiting and sort what it finds, which grows
	// with every document waiting, due or not.
	qDueDocuments = `SELECT ` + documentColumns + ` FROM documents INDEXED BY documents_due
WHERE ` + unsettledEstados + ` AND next_attempt_at IS NOT NULL AND next_attempt_at <= ?
ORDER BY next_attempt_at, id
LIMIT ?`
	qLeaseDocuments = `UPDATE documents SET next_attempt_at = ?
WHERE id IN (SELECT value FROM json_each(?))`
)

// checkNewDocument rejects a document that cannot be numbered.
func checkNewDocument(d *tenant.Document) error {
	switch {
	case d.CompanyID <= 0:
		return errors.New("no company")
	case d.BranchID <= 0:
		return errors.New("no branch")
	case d.Tipo == "":
		return errors.New("no document type")
	case d.Terminal == "":
		return errors.New("no terminal")
	case d.Clave != "" && (d.Numero < 1 || d.Numero > 9999999999):
		return fmt.Errorf("a caller's clave needs its own number (1 to 9999999999), not %d", d.Numero)
	}
	return checkDocumentState(d)
}

func checkDocumentState(d *tenant.Document) error {
	if err := d.CheckSave(); err != nil {
		return err
	}
	if d.Attempts < 0 {
		return fmt.Errorf("negative attempts %d", d.Attempts)
	}
	return nil
}

// encodeDetalle stores the lines as a JSON array; a nil list is NULL, so
// that nil and empty both come back as they went in.
func encodeDetalle(lines []string) (any, error) {
	if lines == nil {
		return nil, nil
	}
	for i, l := range lines {
		// JSON would replace the invalid bytes: refuse rather than alter.
		if !utf8.ValidString(l) {
			return nil, fmt.Errorf("detalle mensaje line %d is not valid UTF-8", i+1)
		}
	}
	b, err := json.Marshal(lines)
	if err != nil {
		return nil, fmt.Errorf("detalle mensaje: %w", err)
	}
	return string(b), nil
}

func decodeDetalle(s sql.NullString) ([]string, error) {
	if !s.Valid {
		return nil, nil
	}
	lines := []string{}
	if err := json.Unmarshal([]byte(s.String), &lines); err != nil {
		return nil, fmt.Errorf("stored detalle mensaje: %w", err)
	}
	return lines, nil
}

func scanDocument(r scanner) (tenant.Document, error) {
	var (
		d                               tenant.Document
		estado, phase                   string
		detalle                         sql.NullString
		fecha, next, submitted, checked sql.NullString
		created, updated                string
	)
	err := r.Scan(&d.ID, &d.CompanyID, &d.BranchID, &d.IDExterno, &d.RequestHash, &d.Tipo,
		&d.Terminal, &d.Numero, &d.Consecutivo, &d.Clave, &d.Situacion, &fecha, &d.EmisorTipo,
		&d.EmisorNumero, &d.ReceptorTipo, &d.ReceptorNumero, &estado, &d.SignedXML,
		&d.IndEstado, &d.CodigoMensaje, &d.MensajeHacienda, &detalle, &d.ResponseXML,
		&d.LastError, &d.Attempts, &next, &submitted, &checked, &created, &updated, &d.Request, &phase, &d.Ambiente,
		&d.Archive.Bucket, &d.Archive.Key)
	if err != nil {
		return tenant.Document{}, err
	}
	d.Estado, d.Phase, d.From = tenant.State(estado), tenant.Phase(phase), tenant.Phase(phase)
	if d.DetalleMensaje, err = decodeDetalle(detalle); err != nil {
		return tenant.Document{}, err
	}
	for _, f := range []struct {
		dst *time.Time
		src sql.NullString
	}{{&d.FechaEmision, fecha}, {&d.NextAttemptAt, next}, {&d.SubmittedAt, submitted}, {&d.CheckedAt, checked}} {
		if *f.dst, err = parseNullTime(f.src); err != nil {
			return tenant.Document{}, err
		}
	}
	if d.CreatedAt, err = parseTime(created); err != nil {
		return tenant.Document{}, err
	}
	if d.UpdatedAt, err = parseTime(updated); err != nil {
		return tenant.Document{}, err
	}
	return d, nil
}

// ReserveDocument takes the next number of the (BranchID, Terminal, Tipo)
// sequence, or for a caller's clave keeps d.Numero and raises the sequence
// to it, and inserts d with it (its request, claim and IVA breakdown
// beside it) in one IMMEDIATE transaction. A broken unique rule (the
// branch's id_externo, a taken clave) rolls back the step of the sequence
// too, so the number is not consumed.
func (s *Store) ReserveDocument(ctx context.Context, d *tenant.Document) error {
	if err := checkNewDocument(d); err != nil {
		return fmt.Errorf("reserve document %q of branch %d: %w", d.IDExterno, d.BranchID, err)
	}
	detalle, err := encodeDetalle(d.DetalleMensaje)
	if err != nil {
		return fmt.Errorf("reserve document %q of branch %d: %w", d.IDExterno, d.BranchID, err)
	}
	now := s.clock()
	month := tenant.MonthOf(now)
	var (
		numero, id int64
		quota      *tenant.QuotaUse
		refused    *tenant.QuotaError
	)
	var claimDetail string
	if c := d.Claim; c != nil {
		if err := tenant.CheckClaim(c); err != nil {
			return fmt.Errorf("reserve document %q of branch %d: %w", d.IDExterno, d.BranchID, err)
		}
		if claimDetail, err = c.EncodeDetail(); err != nil {
			return fmt.Errorf("reserve document %q of branch %d: %w", d.IDExterno, d.BranchID, err)
		}
	}
	err = s.batch.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		quota, refused = nil, nil
		var err error
		// A claim on another document is checked first, against the
		// claims on it: the write transaction is exclusive, so none is
		// reserved meanwhile. A repeat of an id_externo the branch holds
		// is a conflict before that: the check would see the first
		// call's own claim and refuse what is a replay.
		if c := d.Claim; c != nil && c.RefID != 0 {
			if err := s.externalIDFree(ctx, tx, d); err != nil {
				return err
			}
			if err := checkClaims(ctx, tx, c); err != nil {
				return err
			}
		}
		if quota, err = s.countQuota(ctx, tx, d, month); err != nil {
			var qe *tenant.QuotaError
			if errors.As(err, &qe) {
				// Refused: what was counted stays, nothing is numbered.
				refused = qe
				return nil
			}
			return err
		}
		if d.Clave != "" {
			// A caller's clave carries its number: keep it, raise the
			// sequence past it.
			numero = d.Numero
			if _, err := tx.StmtContext(ctx, s.wstmts.raiseNumber).ExecContext(ctx, d.BranchID, d.Terminal, d.Tipo, numero); err != nil {
				return fmt.Errorf("number: %w", mapErr(err))
			}
		} else if numero, err = s.nextNumber(ctx, tx, d.BranchID, d.Terminal, d.Tipo); err != nil {
			return err
		}
		res, err := tx.StmtContext(ctx, s.wstmts.insert).ExecContext(ctx, d.CompanyID, d.BranchID, d.IDExterno,
			nullBytes(d.RequestHash), d.Tipo, d.Terminal, numero, d.Consecutivo, d.Clave,
			d.Situacion, nullTime(d.FechaEmision), d.EmisorTipo, d.EmisorNumero, d.ReceptorTipo,
			d.ReceptorNumero, string(d.Estado), d.IndEstado, d.CodigoMensaje, d.MensajeHacienda,
			detalle, d.LastError, d.Attempts, nullTime(d.NextAttemptAt), nullTime(d.SubmittedAt),
			nullTime(d.CheckedAt), formatTime(now), formatTime(now), string(d.Phase), d.Ambiente)
		if err != nil {
			return mapErr(err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return mapErr(err)
		}
		if len(d.Request) > 0 {
			if _, err := tx.StmtContext(ctx, s.wstmts.insertRequest).ExecContext(ctx, id, d.Request); err != nil {
				return fmt.Errorf("request: %w", mapErr(err))
			}
		}
		if c := d.Claim; c != nil {
			var ref any
			if c.RefID != 0 {
				ref = c.RefID
			}
			if _, err := tx.ExecContext(ctx, qInsertClaim, id, ref, c.Kind, c.Amount, claimDetail); err != nil {
				return fmt.Errorf("claim: %w", mapErr(err))
			}
		}
		if len(d.IVABreakdown) > 0 {
			if _, err := tx.StmtContext(ctx, s.wstmts.insertIVA).ExecContext(ctx, id, string(d.IVABreakdown)); err != nil {
				return fmt.Errorf("iva breakdown: %w", mapErr(err))
			}
		}
		return s.saveParts(ctx, tx, id, d)
	})
	if err == nil && refused != nil {
		err = refused
	}
	if err != nil {
		return fmt.Errorf("reserve document %q of branch %d: %w", d.IDExterno, d.BranchID, err)
	}
	d.ID, d.Numero, d.CreatedAt, d.UpdatedAt, d.From = id, numero, now, now, d.Phase
	d.Quota = quota
	return nil
}

// countQuota counts the document d against its company's monthly quota in
// the transaction tx that numbers it: nil when the company has no quota;
// the quota and the count with d when d is within it; a *tenant.QuotaError
// when the company has numbered its quota (the month's count, made if it
// was missing, is then left as it is for tx to keep), or ErrConflict when
// the branch holds d's id_externo already (a repeat never counts). A
// missing company is ErrNotFound.
func (s *Store) countQuota(ctx context.Context, tx *sql.Tx, d *tenant.Document, month tenant.Month) (*tenant.QuotaUse, error) {
	var cuota, used sql.NullInt64
	if err := tx.StmtContext(ctx, s.wstmts.quota).QueryRowContext(ctx, month.Periodo, d.CompanyID).Scan(&cuota, &used); err != nil {
		return nil, fmt.Errorf("company %d: %w", d.CompanyID, mapErr(err))
	}
	if !cuota.Valid {
		return nil, nil
	}
	q := &tenant.QuotaUse{Periodo: month.Periodo, Limit: cuota.Int64, Used: used.Int64}
	if !used.Valid {
		if err := tx.StmtContext(ctx, s.wstmts.countMonth).QueryRowContext(ctx, d.CompanyID,
			formatTime(month.Start), formatTime(month.End)).Scan(&q.Used); err != nil {
			return nil, fmt.Errorf("count the month: %w", mapErr(err))
		}
	}
	if q.Used >= q.Limit {
		if err := s.externalIDFree(ctx, tx, d); err != nil {
			return nil, err
		}
		if !used.Valid {
			if _, err := tx.StmtContext(ctx, s.wstmts.insertUsage).ExecContext(ctx, d.CompanyID, month.Periodo, q.Used); err != nil {
				return nil, fmt.Errorf("count the month: %w", mapErr(err))
			}
		}
		return nil, &tenant.QuotaError{QuotaUse: *q}
	}
	q.Used++
	var err error
	if used.Valid {
		_, err = tx.StmtContext(ctx, s.wstmts.stepUsage).ExecContext(ctx, d.CompanyID, month.Periodo)
	} else {
		_, err = tx.StmtContext(ctx, s.wstmts.insertUsage).ExecContext(ctx, d.CompanyID, month.Periodo, q.Used)
	}
	if err != nil {
		return nil, fmt.Errorf("count the month: %w", mapErr(err))
	}
	return q, nil
}

// SaveDocument replaces the mutable fields of the document d.ID and sets
// d.UpdatedAt, provided the stored UpdatedAt is still d.UpdatedAt (the
// version d was read at): a document changed since is ErrConflict and left
// as it is. An unknown id is ErrNotFound, a clave another document holds
// ErrConflict.
func (s *Store) SaveDocument(ctx context.Context, d *tenant.Document) error {
	if err := checkDocumentState(d); err != nil {
		return fmt.Errorf("save document %d: %w", d.ID, err)
	}
	detalle, err := encodeDetalle(d.DetalleMensaje)
	if err != nil {
		return fmt.Errorf("save document %d: %w", d.ID, err)
	}
	read := d.UpdatedAt.UTC().Truncate(time.Microsecond)
	now := nextVersion(s.clock(), read)
	err = s.batch.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		saved, err := updated(tx.StmtContext(ctx, s.wstmts.saveState).ExecContext(ctx, string(d.Estado), d.IndEstado,
			d.CodigoMensaje, d.MensajeHacienda, detalle, d.LastError, d.Attempts,
			nullTime(d.NextAttemptAt), nullTime(d.SubmittedAt), nullTime(d.CheckedAt), formatTime(now),
			string(d.Phase), d.ID, string(d.From), formatTime(read), d.Consecutivo, d.Clave, d.Situacion, nullTime(d.FechaEmision),
			d.EmisorTipo, d.EmisorNumero, d.ReceptorTipo, d.ReceptorNumero))
		if err == nil && !saved {
			saved, err = updated(tx.StmtContext(ctx, s.wstmts.save).ExecContext(ctx, d.Consecutivo, d.Clave, d.Situacion,
				nullTime(d.FechaEmision), d.EmisorTipo, d.EmisorNumero, d.ReceptorTipo,
				d.ReceptorNumero, string(d.Estado), d.IndEstado, d.CodigoMensaje, d.MensajeHacienda,
				detalle, d.LastError, d.Attempts, nullTime(d.NextAttemptAt), nullTime(d.SubmittedAt),
				nullTime(d.CheckedAt), formatTime(now), string(d.Phase), d.ID, string(d.From), formatTime(read)))
		}
		if err != nil {
			return mapErr(err)
		}
		if saved {
			if err := s.saveParts(ctx, tx, d.ID, d); err != nil {
				return err
			}
			return s.writeOutbox(ctx, tx, d.CompanyID, d.ID, d.Event)
		}
		return missedSave(tx.StmtContext(ctx, s.wstmts.exists).QueryRowContext(ctx, d.ID), d.From, read)
	})
	if err != nil {
		return fmt.Errorf("save document %d: %w", d.ID, err)
	}
	d.UpdatedAt, d.Event, d.From = now, nil, d.Phase
	return nil
}

// missedSave explains a save that matched no row from count, the read of
// how many rows have its id: ErrConflict when the row left the phase or
// the version it was read at, ErrNotFound when there is none.
func missedSave(count *sql.Row, from tenant.Phase, read time.Time) error {
	var n int
	if err := count.Scan(&n); err != nil {
		return mapErr(err)
	}
	if n == 0 {
		return tenant.ErrNotFound
	}
	return fmt.Errorf("moved since it was read (%s at %s): %w", from, read.Format(time.RFC3339Nano), tenant.ErrConflict)
}

// updated reports whether an UPDATE of one row by its id matched it.
func updated(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// nextNumber steps the sequence of a branch, terminal and document type in
// tx and returns the number it stepped to.
func (s *Store) nextNumber(ctx context.Context, tx *sql.Tx, branchID int64, terminal, tipo string) (int64, error) {
	if _, err := tx.StmtContext(ctx, s.wstmts.nextNumber).ExecContext(ctx, branchID, terminal, tipo); err != nil {
		return 0, fmt.Errorf("number: %w", mapErr(err))
	}
	var n int64
	if err := tx.StmtContext(ctx, s.wstmts.number).QueryRowContext(ctx, branchID, terminal, tipo).Scan(&n); err != nil {
		return 0, fmt.Errorf("number: %w", mapErr(err))
	}
	return n, nil
}

// saveParts writes the signed XML and the answer d carries, in the
// transaction that inserted or saved document id: each only when it
// differs from the stored one, and neither when d carries none.
func (s *Store) saveParts(ctx context.Context, tx *sql.Tx, id int64, d *tenant.Document) error {
	if len(d.SignedXML) > 0 {
		if _, err := tx.StmtContext(ctx, s.wstmts.saveSigned).ExecContext(ctx, id, d.SignedXML); err != nil {
			return fmt.Errorf("signed XML: %w", mapErr(err))
		}
	}
	if len(d.ResponseXML) > 0 {
		if _, err := tx.StmtContext(ctx, s.wstmts.saveResponse).ExecContext(ctx, id, d.ResponseXML); err != nil {
			return fmt.Errorf("answer XML: %w", mapErr(err))
		}
	}
	return nil
}

// nextVersion is the UpdatedAt a save stamps: the store's time, but always
// after the version read, so that two saves never leave the same
// UpdatedAt even when the clock stands still or steps back.
func nextVersion(now, read time.Time) time.Time {
	if !now.After(read) {
		return read.Add(time.Microsecond)
	}
	return now
}

// DocumentByClave returns the document with that clave; an empty clave is
// ErrNotFound.
func (s *Store) DocumentByClave(ctx context.Context, clave string) (tenant.Document, error) {
	if clave == "" {
		return tenant.Document{}, fmt.Errorf("document by empty clave: %w", tenant.ErrNotFound)
	}
	d, err := scanDocument(s.stmts.documentByClave.QueryRowContext(ctx, clave))
	if err != nil {
		return tenant.Document{}, fmt.Errorf("document %s: %w", clave, mapErr(err))
	}
	return d, nil
}

// DocumentStateByClave is DocumentByClave without the document's parts.
func (s *Store) DocumentStateByClave(ctx context.Context, clave string) (tenant.Document, error) {
	if clave == "" {
		return tenant.Document{}, fmt.Errorf("document by empty clave: %w", tenant.ErrNotFound)
	}
	d, err := scanDocument(s.stmts.documentStateByClave.QueryRowContext(ctx, clave))
	if err != nil {
		return tenant.Document{}, fmt.Errorf("document %s: %w", clave, mapErr(err))
	}
	return d, nil
}

// DocumentByExternalID returns the branch's document with that id_externo;
// an empty id_externo is ErrNotFound.
func (s *Store) DocumentByExternalID(ctx context.Context, branchID int64, idExterno string) (tenant.Document, error) {
	if idExterno == "" {
		return tenant.Document{}, fmt.Errorf("document of branch %d by empty id_externo: %w", branchID, tenant.ErrNotFound)
	}
	d, err := scanDocument(s.stmts.documentByExternalID.QueryRowContext(ctx, branchID, idExterno))
	if err != nil {
		return tenant.Document{}, fmt.Errorf("document %q of branch %d: %w", idExterno, branchID, mapErr(err))
	}
	return d, nil
}

// ClaimDueDocuments selects up to limit due documents (state 04 or 05,
// NextAttemptAt set and not after now), most overdue first, and moves their
// NextAttemptAt to leaseUntil, in one IMMEDIATE transaction (the group
// commit's, see claimDue): every writer, in this process or another on the
// same file, waits for it, so no two claims overlap. A limit below 1 claims
// nothing.
func (s *Store) ClaimDueDocuments(ctx context.Context, now, leaseUntil time.Time, limit int) ([]tenant.Document, error) {
	return claimDue(ctx, s, "documents", qDueDocuments, qLeaseDocuments, now, leaseUntil, limit, scanDocument,
		func(d *tenant.Document, lease time.Time) int64 { d.NextAttemptAt = lease; return d.ID })
}

// claimDue is the claim of due rows (documents, received documents,
// e-mails): in one write of the group commit (batcher) it selects up to
// limit rows with qDue (now, limit), scanned with scan, and moves their
// next_attempt_at to leaseUntil with qLease (the lease's end, a JSON array
// of their ids). The batch's transaction is IMMEDIATE, so no two claims
// overlap; sharing it, a claim that leases rows costs no commit (no fsync)
// of its own, nor holds the one write connection apart from the writes of
// the sends about. The rows are returned once the lease is committed.
// leased sets a claimed row's NextAttemptAt to the lease's end and returns
// its id; what names the rows in errors. A lease end not after now is an
// error; a limit below 1 claims nothing.
func claimDue[T any](ctx context.Context, s *Store, what, qDue, qLease string, now, leaseUntil time.Time, limit int,
	scan func(scanner) (T, error), leased func(*T, time.Time) int64) ([]T, error) {
	if !leaseUntil.After(now) {
		return nil, fmt.Errorf("claim due %s: lease end %s is not after now %s",
			what, leaseUntil.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
	}
	if limit < 1 {
		return []T{}, nil
	}
	lease := leaseUntil.UTC().Truncate(time.Microsecond)
	var out []T
	err := s.batch.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := queryAll(ctx, tx, scan, qDue, formatTime(now), limit)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			out = rows
			return nil
		}
		ids := make([]string, len(rows))
		for i := range rows {
			ids[i] = strconv.FormatInt(leased(&rows[i], lease), 10)
		}
		res, err := tx.ExecContext(ctx, qLease, formatTime(lease), "["+strings.Join(ids, ",")+"]")
		if err != nil {
			return fmt.Errorf("lease: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(rows)) {
			return fmt.Errorf("lease: %d of %d rows updated (%v)", n, len(rows), err)
		}
		out = rows
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim due %s: %w", what, err)
	}
	return out, nil
}

const (
	qInsertClaim = `INSERT INTO document_claims (document_id, ref_id, kind, amount, detail) VALUES (?, ?, ?, ?, ?)`
	// qDocumentClaims reads the balances of the documents of the JSON
	// array ?1 and the claims on them of documents not rejected.
	qDocumentClaims = `SELECT c.document_id, COALESCE(c.ref_id, 0), c.kind, c.amount, c.detail, d.estado
FROM document_claims c JOIN documents d ON d.id = c.document_id
WHERE (c.ref_id IN (SELECT value FROM json_each(?1)) AND d.estado <> '02')
    OR (c.ref_id IS NULL AND c.document_id IN (SELECT value FROM json_each(?1)))
ORDER BY c.document_id`
)

// externalIDFree is ErrConflict when the branch holds d's id_externo
// already.
func (s *Store) externalIDFree(ctx context.Context, tx *sql.Tx, d *tenant.Document) error {
	if d.IDExterno == "" {
		return nil
	}
	var taken int
	if err := tx.StmtContext(ctx, s.wstmts.externalTaken).QueryRowContext(ctx, d.BranchID, d.IDExterno).Scan(&taken); err != nil {
		return fmt.Errorf("id_externo: %w", mapErr(err))
	}
	if taken > 0 {
		return fmt.Errorf("id_externo taken: %w", tenant.ErrConflict)
	}
	return nil
}

// checkClaims calls c.Check, in the reservation's transaction tx, with the
// live claims on the document c references; a missing document is
// ErrNotFound.
func checkClaims(ctx context.Context, tx *sql.Tx, c *tenant.Claim) error {
	var id int64
	if err := tx.QueryRowContext(ctx, `SELECT id FROM documents WHERE id = ?`, c.RefID).Scan(&id); err != nil {
		return fmt.Errorf("referenced document %d: %w", c.RefID, mapErr(err))
	}
	if c.Check == nil {
		return nil
	}
	live, err := readClaims(ctx, tx, []int64{c.RefID})
	if err != nil {
		return err
	}
	return c.Check(live[c.RefID].On)
}

// DocumentClaims implements tenant.ClaimStore.
func (s *Store) DocumentClaims(ctx context.Context, ids []int64) (map[int64]tenant.Claims, error) {
	return readClaims(ctx, s.read, ids)
}

// claimQuerier is the read pool or a write transaction.
type claimQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func readClaims(ctx context.Context, q claimQuerier, ids []int64) (map[int64]tenant.Claims, error) {
	if len(ids) == 0 {
		return map[int64]tenant.Claims{}, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("read claims: %w", err)
	}
	rows, err := q.QueryContext(ctx, qDocumentClaims, string(list))
	if err != nil {
		return nil, fmt.Errorf("read claims: %w", mapErr(err))
	}
	defer rows.Close()
	m, err := tenant.ScanClaims(rows)
	if err != nil {
		return nil, fmt.Errorf("read claims: %w", mapErr(err))
	}
	return m, nil
}
