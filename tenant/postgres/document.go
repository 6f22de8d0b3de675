package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"facturad/tenant"
)

var _ tenant.DocumentStore = (*Store)(nil)

// documentColumns read a whole document.
const documentColumns = `id, company_id, branch_id, id_externo, request_hash, tipo, terminal,
    numero, consecutivo, clave, situacion, fecha_emision, emisor_tipo, emisor_numero,
    receptor_tipo, receptor_numero, estado, signed_xml, ind_estado, codigo_mensaje,
    mensaje_hacienda, detalle_mensaje, response_xml, last_error, attempts, next_attempt_at,
    submitted_at, checked_at, created_at, updated_at, request, phase, ambiente,
    archive_bucket, archive_key`

// stateColumns are documentColumns without the large parts (the request,
// the signed XML, the answer), which read back empty: what a listing shows
// (a page of 500 rows reads no megabytes of XML) and what a caller moving
// a document's state on needs.
const stateColumns = `id, company_id, branch_id, id_externo, request_hash, tipo, terminal,
    numero, consecutivo, clave, situacion, fecha_emision, emisor_tipo, emisor_numero,
    receptor_tipo, receptor_numero, estado, NULL::bytea, ind_estado, codigo_mensaje,
    mensaje_hacienda, detalle_mensaje, NULL::bytea, last_error, attempts, next_attempt_at,
    submitted_at, checked_at, created_at, updated_at, NULL::bytea, phase, ambiente, '', ''`

// The reservation of a document (ReserveDocument) is one statement, so one
// transaction: the quota's count (when the company has a quota), the step
// of the sequence, the insert of the document and of its IVA breakdown
// commit together or not at all. Its parameters: $1..$30 the document's
// columns (see reserve), $31 the Costa Rica month of the reservation
// (YYYY-MM), $32 the IVA breakdown (NULL for none), and for a caller's
// clave $33 its number.
//
// quota reads the company's quota in the statement itself, so that a
// changed quota applies to the next reservation. counted steps the
// company's count of the month while it is below the quota: the row lock
// queues the reservations of that company (of a company with a quota
// only) until the statement commits, and on a count at the quota nothing
// is stepped. admitted is one row when the company has no quota or was
// counted, none when the quota refuses (or the count of the month has no
// row yet: the caller makes it and asks again). Only then are the sequence
// stepped and the document inserted, so a refusal takes no number. The
// answer is one row per existing company: the document's id and number
// (NULL when refused), the quota and the count after this document, and
// whether the month's count has a row.
const (
	reserveQuota = `WITH quota AS (
    SELECT cuota_mensual AS cuota FROM companies WHERE id = $1
), counted AS (
    UPDATE company_usage AS u SET documentos = u.documentos + 1
    FROM quota
    WHERE u.company_id = $1 AND u.periodo = $31 AND u.documentos < quota.cuota
    RETURNING u.documentos
), admitted AS (
    SELECT 1 FROM quota WHERE quota.cuota IS NULL
    UNION ALL
    SELECT 1 FROM counted
), `
	reserveInsert = `, doc AS (
    INSERT INTO documents (company_id, branch_id, id_externo, request_hash, tipo, terminal,
        numero, consecutivo, clave, situacion, fecha_emision, emisor_tipo, emisor_numero,
        receptor_tipo, receptor_numero, estado, signed_xml, ind_estado, codigo_mensaje,
        mensaje_hacienda, detalle_mensaje, response_xml, last_error, attempts, next_attempt_at,
        submitted_at, checked_at, created_at, updated_at, request, phase, ambiente)
    SELECT $1, $2, $3, $4, $5, $6, seq.last_numero, $7, $8, $9, $10, $11, $12, $13,
        $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $27, $28, $29, $30
    FROM seq
    RETURNING id, numero
), iva AS (
    INSERT INTO document_iva (document_id, breakdown)
    SELECT doc.id, $32::text FROM doc WHERE $32::text IS NOT NULL
)
SELECT doc.id, doc.numero, quota.cuota, counted.documentos,
    doc.id IS NOT NULL OR quota.cuota IS NULL
        OR EXISTS (SELECT 1 FROM company_usage WHERE company_id = $1 AND periodo = $31)
FROM quota LEFT JOIN doc ON true LEFT JOIN counted ON true`

	// qReserveDocument steps the sequence of (branch, terminal, tipo) and
	// inserts the document with the new number: the upsert's
	// row lock queues the writers of that sequence (and only those) until
	// the insert commits, and a failed insert (a unique rule, a missing
	// branch) rolls the step back with it. One round trip.
	qReserveDocument = reserveQuota + `seq AS (
    INSERT INTO document_sequences AS s (branch_id, terminal, tipo, last_numero)
    SELECT $2, $6, $5, 1 FROM admitted
    ON CONFLICT (branch_id, terminal, tipo) DO UPDATE SET last_numero = s.last_numero + 1
    RETURNING last_numero
)` + reserveInsert

	// qReserveNumberedDocument inserts a document numbered by the caller's
	// own clave ($33): the sequence rises to that number (never falls, is
	// not stepped), so that a number the service hands out later is never
	// this one.
	qReserveNumberedDocument = reserveQuota + `seq AS (
    INSERT INTO document_sequences AS s (branch_id, terminal, tipo, last_numero)
    SELECT $2, $6, $5, $33::bigint FROM admitted
    ON CONFLICT (branch_id, terminal, tipo) DO UPDATE SET last_numero = GREATEST(s.last_numero, EXCLUDED.last_numero)
    RETURNING $33::bigint AS last_numero
)` + reserveInsert

	// qCountMonth makes the count of a company's month ($2) from the
	// documents it numbered in [$3, $4), when no other reservation made it
	// meanwhile. While the row is missing, no reservation of a company
	// with a quota numbers anything (each comes here first), so the count
	// misses none of them; it can miss only a reservation that read the
	// company without a quota and commits after this count began, in the
	// instant a quota is set (docs/design/quotas.md).
	qCountMonth = `INSERT INTO company_usage (company_id, periodo, documentos)
SELECT $1, $2, count(*) FROM documents
WHERE company_id = $1 AND created_at >= $3 AND created_at < $4
ON CONFLICT (company_id, periodo) DO NOTHING`

	// qRefused explains a refused reservation: the company's count of the
	// month, and whether the branch holds the id_externo already (a
	// concurrent send of the same request, which is a conflict, not a
	// refusal).
	qRefused = `SELECT
    (SELECT documentos FROM company_usage WHERE company_id = $1 AND periodo = $2),
    EXISTS (SELECT 1 FROM documents WHERE branch_id = $3 AND id_externo = $4 AND id_externo <> '')`
)

const (
	// qSaveDocument writes a document's fields. Its large parts are written
	// only when the save carries them and they differ from the stored
	// ones: an unchanged value keeps the stored one, which PostgreSQL then
	// does not store again (an UPDATE that sets a TOASTed column to a new
	// datum writes it anew, even one equal to it), and a part the save does
	// not carry ($11, $16 NULL) is kept. The request is kept from numbering
	// on.
	qSaveDocument = `WITH doc AS (
    UPDATE documents SET consecutivo = $2, clave = $3, situacion = $4,
        fecha_emision = $5, emisor_tipo = $6, emisor_numero = $7, receptor_tipo = $8,
        receptor_numero = $9, estado = $10,
        signed_xml = CASE WHEN $11::bytea IS NULL OR signed_xml = $11::bytea THEN signed_xml ELSE $11::bytea END,
        ind_estado = $12, codigo_mensaje = $13, mensaje_hacienda = $14, detalle_mensaje = $15,
        response_xml = CASE WHEN $16::bytea IS NULL OR response_xml = $16::bytea THEN response_xml ELSE $16::bytea END,
        last_error = $17, attempts = $18, next_attempt_at = $19, submitted_at = $20,
        checked_at = $21, updated_at = $22, phase = $24
    WHERE id = $1 AND phase = $23 AND updated_at = $25
    RETURNING id
)
SELECT id FROM doc`

	// The lookups repeat the partial indexes' conditions so that the
	// planner uses them whatever the parameter.
	qDocumentByClave = `SELECT ` + documentColumns + ` FROM documents
WHERE clave = $1 AND clave <> ''`
	qDocumentStateByClave = `SELECT ` + stateColumns + ` FROM documents
WHERE clave = $1 AND clave <> ''`
	qDocumentByExternalID = `SELECT ` + documentColumns + ` FROM documents
WHERE branch_id = $1 AND id_externo = $2 AND id_externo <> ''`

	// qClaimDueDocuments locks up to $3 due documents along the
	// documents_due index, skipping those another claimer holds, and moves
	// their next attempt to the lease's end. A row a concurrent claimer
	// leased and committed meanwhile is re-checked against the new
	// next_attempt_at and dropped, so no document is claimed twice.
	qClaimDueDocuments = `WITH due AS (
    SELECT id AS due_id, next_attempt_at AS due_at FROM documents
    WHERE estado IN ('00', '04', '05') AND next_attempt_at IS NOT NULL AND next_attempt_at <= $1
    ORDER BY next_attempt_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE documents SET next_attempt_at = $2
    FROM due WHERE id = due.due_id
    RETURNING due.due_at, ` + documentColumns + `
)
SELECT ` + documentColumns + ` FROM claimed ORDER BY due_at, id`
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

func scanDocument(r pgx.Row) (tenant.Document, error) {
	var (
		d                               tenant.Document
		estado, phase                   string
		fecha, next, submitted, checked *time.Time
	)
	err := r.Scan(&d.ID, &d.CompanyID, &d.BranchID, &d.IDExterno, &d.RequestHash, &d.Tipo,
		&d.Terminal, &d.Numero, &d.Consecutivo, &d.Clave, &d.Situacion, &fecha, &d.EmisorTipo,
		&d.EmisorNumero, &d.ReceptorTipo, &d.ReceptorNumero, &estado, &d.SignedXML,
		&d.IndEstado, &d.CodigoMensaje, &d.MensajeHacienda, &d.DetalleMensaje, &d.ResponseXML,
		&d.LastError, &d.Attempts, &next, &submitted, &checked, &d.CreatedAt, &d.UpdatedAt, &d.Request, &phase, &d.Ambiente,
		&d.Archive.Bucket, &d.Archive.Key)
	if err != nil {
		return tenant.Document{}, err
	}
	d.Estado, d.Phase, d.From = tenant.State(estado), tenant.Phase(phase), tenant.Phase(phase)
	d.FechaEmision, d.NextAttemptAt = fromNullTime(fecha), fromNullTime(next)
	d.SubmittedAt, d.CheckedAt = fromNullTime(submitted), fromNullTime(checked)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, nil
}

// docTime is t as stored: UTC, microseconds, zero as NULL.
func docTime(t time.Time) *time.Time {
	return nullTime(t.UTC().Truncate(time.Microsecond))
}

// ReserveDocument takes the next number of the (BranchID, Ambiente,
// Terminal, Tipo) sequence, or for a caller's clave keeps d.Numero and
// raises the sequence to it, and inserts d with it in one statement, which
// counts it against the company's monthly quota first. A broken unique
// rule (the branch's id_externo, a taken clave) is ErrConflict and rolls
// back the step of the sequence and the count too, so neither the number
// nor the quota is consumed. A count at the quota steps nothing and is a
// *tenant.QuotaError.
func (s *Store) ReserveDocument(ctx context.Context, d *tenant.Document) error {
	if err := checkNewDocument(d); err != nil {
		return fmt.Errorf("reserve document %q of branch %d: %w", d.IDExterno, d.BranchID, err)
	}
	if d.Claim == nil {
		return s.reserve(ctx, s.pool, d)
	}
	if err := tenant.CheckClaim(d.Claim); err != nil {
		return fmt.Errorf("reserve document %q of branch %d: %w", d.IDExterno, d.BranchID, err)
	}
	// A claim: the referenced document is locked, the claims on it
	// checked, the document numbered and the claim written, in one
	// transaction.
	var saved tenant.Document
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		saved = *d
		if c := d.Claim; c.RefID != 0 {
			if err := lockClaims(ctx, tx, d); err != nil {
				return err
			}
		}
		if err := s.reserve(ctx, tx, &saved); err != nil {
			return err
		}
		detail, err := d.Claim.EncodeDetail()
		if err != nil {
			return err
		}
		var ref *int64
		if d.Claim.RefID != 0 {
			ref = &d.Claim.RefID
		}
		if _, err := tx.Exec(ctx, qInsertClaim, saved.ID, ref, d.Claim.Kind, d.Claim.Amount, detail); err != nil {
			return fmt.Errorf("reserve document %q of branch %d: claim: %w", d.IDExterno, d.BranchID, mapErr(err))
		}
		return nil
	})
	if err != nil {
		return err
	}
	*d = saved
	return nil
}

// lockClaims locks the document d's claim references and calls the
// claim's Check with the live claims on it. A repeat of an id_externo the
// branch holds is ErrConflict before the check, which would see the first
// call's own claim and refuse what is a replay: asked once the lock is
// held, so that a first call committed meanwhile (it held the lock) is
// seen, as every statement of a READ COMMITTED transaction sees what was
// committed before it.
func lockClaims(ctx context.Context, tx pgx.Tx, d *tenant.Document) error {
	c := d.Claim
	var id int64
	if err := tx.QueryRow(ctx, qLockClaimed, c.RefID).Scan(&id); err != nil {
		return fmt.Errorf("referenced document %d: %w", c.RefID, mapErr(err))
	}
	if d.IDExterno != "" {
		var taken bool
		if err := tx.QueryRow(ctx, qExternalIDTaken, d.BranchID, d.IDExterno).Scan(&taken); err != nil {
			return fmt.Errorf("id_externo: %w", mapErr(err))
		}
		if taken {
			return fmt.Errorf("reserve document %q of branch %d: id_externo taken: %w", d.IDExterno, d.BranchID, tenant.ErrConflict)
		}
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

const (
	qLockClaimed = `SELECT id FROM documents WHERE id = $1 FOR UPDATE`
	// qExternalIDTaken says whether branch $1 holds id_externo $2.
	qExternalIDTaken = `SELECT EXISTS (SELECT 1 FROM documents WHERE branch_id = $1 AND id_externo = $2 AND id_externo <> '')`
	qInsertClaim     = `INSERT INTO document_claims (document_id, ref_id, kind, amount, detail) VALUES ($1, $2, $3, $4, $5)`
	// qDocumentClaims reads the balances of documents $1 and the claims
	// on them of documents not rejected.
	qDocumentClaims = `SELECT c.document_id, COALESCE(c.ref_id, 0), c.kind, c.amount, c.detail, d.estado
FROM document_claims c JOIN documents d ON d.id = c.document_id
WHERE (c.ref_id = ANY($1) AND d.estado <> '02') OR (c.ref_id IS NULL AND c.document_id = ANY($1))
ORDER BY c.document_id`
)

// DocumentClaims implements tenant.ClaimStore.
func (s *Store) DocumentClaims(ctx context.Context, ids []int64) (map[int64]tenant.Claims, error) {
	return readClaims(ctx, s.pool, ids)
}

func readClaims(ctx context.Context, q pgQuerier, ids []int64) (map[int64]tenant.Claims, error) {
	if len(ids) == 0 {
		return map[int64]tenant.Claims{}, nil
	}
	rows, err := q.Query(ctx, qDocumentClaims, ids)
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

// pgQuerier is what a reservation runs its statements on: the pool, or
// the transaction of a reservation with a claim.
type pgQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// reserve runs the reservation on db.
func (s *Store) reserve(ctx context.Context, db pgQuerier, d *tenant.Document) error {
	now := s.clock()
	month := tenant.MonthOf(now)
	q, extra := qReserveDocument, []any{month.Periodo, nullText(d.IVABreakdown)}
	if d.Clave != "" {
		// A caller's clave carries its number: keep it, raise the
		// sequence past it.
		q, extra = qReserveNumberedDocument, append(extra, d.Numero)
	}
	args := append([]any{d.CompanyID, d.BranchID, d.IDExterno,
		nullBytes(d.RequestHash), d.Tipo, d.Terminal, d.Consecutivo, d.Clave, d.Situacion,
		docTime(d.FechaEmision), d.EmisorTipo, d.EmisorNumero, d.ReceptorTipo,
		d.ReceptorNumero, string(d.Estado), nullBytes(d.SignedXML), d.IndEstado,
		d.CodigoMensaje, d.MensajeHacienda, d.DetalleMensaje, nullBytes(d.ResponseXML),
		d.LastError, d.Attempts, docTime(d.NextAttemptAt), docTime(d.SubmittedAt),
		docTime(d.CheckedAt), now, nullBytes(d.Request), string(d.Phase), d.Ambiente}, extra...)
	fail := func(err error) error {
		return fmt.Errorf("reserve document %q of branch %d: %w", d.IDExterno, d.BranchID, err)
	}
	// A company with a quota whose month has no count yet is counted
	// (qCountMonth) and asked again; the second time the row is there.
	for attempt := 1; ; attempt++ {
		// Scanned into values, not pointers: no allocation per column.
		var (
			id, numero, cuota, used pgtype.Int8
			counting                bool
		)
		if err := db.QueryRow(ctx, q, args...).Scan(&id, &numero, &cuota, &used, &counting); err != nil {
			return fail(mapErr(err))
		}
		switch {
		case id.Valid:
			d.ID, d.Numero, d.CreatedAt, d.UpdatedAt, d.From = id.Int64, numero.Int64, now, now, d.Phase
			d.Quota = nil
			if cuota.Valid && used.Valid {
				d.Quota = &tenant.QuotaUse{Periodo: month.Periodo, Limit: cuota.Int64, Used: used.Int64}
			}
			return nil
		case !counting && attempt < 4:
			if _, err := db.Exec(ctx, qCountMonth, d.CompanyID, month.Periodo, month.Start, month.End); err != nil {
				return fail(fmt.Errorf("count the month: %w", mapErr(err)))
			}
		case !counting:
			return fail(errors.New("the month's count of the company could not be made"))
		default:
			err := s.refused(ctx, db, d, month.Periodo, cuota.Int64)
			if errors.Is(err, errCountMoved) && attempt < 4 {
				continue
			}
			return fail(err)
		}
	}
}

// errCountMoved is a refusal whose month's count, read again, is below the
// quota the reservation was refused under: the count was made again
// meanwhile (a quota set where there was none recounts the month), so the
// reservation is asked again rather than refused on a count that no longer
// stands.
var errCountMoved = errors.New("the month's count moved under the refusal")

// refused is the error of a reservation the quota refused: ErrConflict
// when the branch holds its id_externo already (a concurrent send of the
// same request won; a repeat never counts), errCountMoved (wrapping a
// *tenant.QuotaError) when the month's count, read again, is gone or below
// the quota, else a *tenant.QuotaError.
func (s *Store) refused(ctx context.Context, db pgQuerier, d *tenant.Document, periodo string, limit int64) error {
	var (
		used  *int64
		taken bool
	)
	if err := db.QueryRow(ctx, qRefused, d.CompanyID, periodo, d.BranchID, d.IDExterno).Scan(&used, &taken); err != nil {
		return mapErr(err)
	}
	if taken {
		return fmt.Errorf("id_externo taken: %w", tenant.ErrConflict)
	}
	if used == nil || *used < limit {
		return fmt.Errorf("%w: %w", errCountMoved, &tenant.QuotaError{QuotaUse: tenant.QuotaUse{Periodo: periodo, Limit: limit, Used: limit}})
	}
	return &tenant.QuotaError{QuotaUse: tenant.QuotaUse{Periodo: periodo, Limit: limit, Used: *used}}
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
	read := d.UpdatedAt.UTC().Truncate(time.Microsecond)
	now := nextVersion(s.clock(), read)
	var id int64
	q, args := withOutbox(qSaveDocument, []any{d.ID, d.Consecutivo, d.Clave, d.Situacion,
		docTime(d.FechaEmision), d.EmisorTipo, d.EmisorNumero, d.ReceptorTipo,
		d.ReceptorNumero, string(d.Estado), nullBytes(d.SignedXML), d.IndEstado,
		d.CodigoMensaje, d.MensajeHacienda, d.DetalleMensaje, nullBytes(d.ResponseXML),
		d.LastError, d.Attempts, docTime(d.NextAttemptAt), docTime(d.SubmittedAt),
		docTime(d.CheckedAt), now, string(d.From), string(d.Phase), read}, d.CompanyID, d.ID, d.Event)
	err := s.pool.QueryRow(ctx, q, args...).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.missedSave(ctx, "documents", d.ID, d.From, read)
	}
	if err != nil {
		return fmt.Errorf("save document %d: %w", d.ID, mapErr(err))
	}
	d.UpdatedAt, d.Event, d.From = now, nil, d.Phase
	return nil
}

// missedSave explains a save of the row id of table (documents,
// received_documents) that matched no row: ErrConflict when the row left
// the phase or the version it was read at, ErrNotFound when there is none.
func (s *Store) missedSave(ctx context.Context, table string, id int64, from tenant.Phase, read time.Time) error {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE id = $1`, id).Scan(&n); err != nil {
		return mapErr(err)
	}
	if n == 0 {
		return tenant.ErrNotFound
	}
	return fmt.Errorf("moved since it was read (%s at %s): %w", from, read.Format(time.RFC3339Nano), tenant.ErrConflict)
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
	d, err := scanDocument(s.pool.QueryRow(ctx, qDocumentByClave, clave))
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
	d, err := scanDocument(s.pool.QueryRow(ctx, qDocumentStateByClave, clave))
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
	d, err := scanDocument(s.pool.QueryRow(ctx, qDocumentByExternalID, branchID, idExterno))
	if err != nil {
		return tenant.Document{}, fmt.Errorf("document %q of branch %d: %w", idExterno, branchID, mapErr(err))
	}
	return d, nil
}

// ClaimDueDocuments locks up to limit due documents (state 04 or 05,
// NextAttemptAt set and not after now) with FOR UPDATE SKIP LOCKED, most
// overdue first, and moves their NextAttemptAt to leaseUntil in the same
// statement. Claimers on any number of connections or replicas skip each
// other's rows instead of waiting, and never get the same document. A limit
// below 1 claims nothing.
func (s *Store) ClaimDueDocuments(ctx context.Context, now, leaseUntil time.Time, limit int) ([]tenant.Document, error) {
	return claimDue(ctx, s, "documents", qClaimDueDocuments, now, leaseUntil, limit, scanDocument)
}

// claimDue runs qClaim, a statement that leases up to $3 rows due at $1
// until $2 and returns them (documents, received documents, e-mails),
// and scans what it returns with scan; what names the rows in errors. A
// lease end not after now is an error; a limit below 1 claims nothing.
func claimDue[T any](ctx context.Context, s *Store, what, qClaim string, now, leaseUntil time.Time, limit int, scan func(pgx.Row) (T, error)) ([]T, error) {
	if !leaseUntil.After(now) {
		return nil, fmt.Errorf("claim due %s: lease end %s is not after now %s",
			what, leaseUntil.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
	}
	if limit < 1 {
		return []T{}, nil
	}
	out, err := queryAll(ctx, s.pool, scan, qClaim, now.UTC().Truncate(time.Microsecond), leaseUntil.UTC().Truncate(time.Microsecond), limit)
	if err != nil {
		return nil, fmt.Errorf("claim due %s: %w", what, err)
	}
	return out, nil
}
