package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"facturad/tenant"
)

var _ tenant.ArchiveStore = (*Store)(nil)

// settledPhases repeats the partial indexes' condition as they write it.
const settledPhases = `phase IN ('accepted', 'rejected')`

// archiveRowColumns read a tenant.ArchiveRow; notDeferred leaves out the
// rows deferred past its parameter.
const (
	archiveRowColumns = `id, company_id, ambiente, clave, fecha_emision, created_at, archived_at,
    archive_bucket, archive_key, archive_failures`
	notDeferred = `(archive_retry_at IS NULL OR archive_retry_at <= ?)`
)

// archiveTable is the table of kind and the statements its drop runs
// after the row's mark (each with the row's id as its one parameter).
func archiveTable(kind tenant.ArchiveKind) (table string, drop []string, err error) {
	switch kind {
	case tenant.ArchiveIssued:
		return "documents", []string{
			`DELETE FROM document_signed_xml WHERE document_id = ?`,
			`DELETE FROM document_response_xml WHERE document_id = ?`,
		}, nil
	case tenant.ArchiveReceived:
		return "received_documents", []string{
			`UPDATE received_documents SET supplier_xml = X'', signed_xml = NULL, response_xml = NULL WHERE id = ?`,
		}, nil
	}
	return "", nil, kind.Check()
}

// UnarchivedRows reads the settled rows not archived yet along the
// *_unarchived partial index.
func (s *Store) UnarchivedRows(ctx context.Context, kind tenant.ArchiveKind, after int64, now time.Time, limit int) ([]tenant.ArchiveRow, error) {
	table, _, err := archiveTable(kind)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + archiveRowColumns + ` FROM ` + table + `
WHERE archived_at IS NULL AND ` + settledPhases + ` AND id > ? AND ` + notDeferred + `
ORDER BY id LIMIT ?`
	return s.archiveRows(ctx, kind, q, after, formatTime(now), limit)
}

// DroppableRows reads the archived rows still kept along the
// *_archived_kept partial index.
func (s *Store) DroppableRows(ctx context.Context, kind tenant.ArchiveKind, before, now time.Time, limit int) ([]tenant.ArchiveRow, error) {
	table, _, err := archiveTable(kind)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + archiveRowColumns + ` FROM ` + table + `
WHERE archived_at IS NOT NULL AND parts_dropped_at IS NULL AND archived_at <= ? AND ` + notDeferred + `
ORDER BY archived_at, id LIMIT ?`
	return s.archiveRows(ctx, kind, q, formatTime(before), formatTime(now), limit)
}

func (s *Store) archiveRows(ctx context.Context, kind tenant.ArchiveKind, q string, arg, now any, limit int) (_ []tenant.ArchiveRow, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("archive rows of %s: %w", kind, mapErr(err))
		}
	}()
	rows, err := s.read.QueryContext(ctx, q, arg, now, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tenant.ArchiveRow
	for rows.Next() {
		var (
			a                 = tenant.ArchiveRow{Kind: kind}
			fecha, archivedAt sql.NullString
			created           string
		)
		if err := rows.Scan(&a.ID, &a.CompanyID, &a.Ambiente, &a.Clave, &fecha, &created, &archivedAt, &a.Archive.Bucket, &a.Archive.Key, &a.Failures); err != nil {
			return nil, err
		}
		if a.FechaEmision, err = parseNullTime(fecha); err != nil {
			return nil, err
		}
		if a.ArchivedAt, err = parseNullTime(archivedAt); err != nil {
			return nil, err
		}
		if a.CreatedAt, err = parseTime(created); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// MarkArchived records the copy of a settled row, once.
func (s *Store) MarkArchived(ctx context.Context, kind tenant.ArchiveKind, id int64, loc tenant.ArchiveLocation, at time.Time) error {
	table, _, err := archiveTable(kind)
	if err != nil {
		return err
	}
	res, err := s.write.ExecContext(ctx, `UPDATE `+table+` SET archived_at = ?, archive_bucket = ?, archive_key = ?,
    archive_failures = 0, archive_retry_at = NULL
WHERE id = ? AND archived_at IS NULL AND `+settledPhases, formatTime(at), loc.Bucket, loc.Key, id)
	if err != nil {
		return fmt.Errorf("mark %s %d archived: %w", kind, id, mapErr(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("mark %s %d archived: %w", kind, id, mapErr(err))
	} else if n == 1 {
		return nil
	}
	return s.archiveMiss(ctx, table, kind, id, "mark archived", "archived_at IS NOT NULL")
}

// DropParts marks an archived, settled row dropped and drops its parts in
// one transaction: a row the mark's condition does not hold for keeps
// them.
func (s *Store) DropParts(ctx context.Context, kind tenant.ArchiveKind, id int64, at time.Time) (err error) {
	table, drop, err := archiveTable(kind)
	if err != nil {
		return err
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("drop the parts of %s %d: %w", kind, id, mapErr(err))
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	res, err := tx.ExecContext(ctx, `UPDATE `+table+` SET parts_dropped_at = ?,
    archive_failures = 0, archive_retry_at = NULL
WHERE id = ? AND archived_at IS NOT NULL AND parts_dropped_at IS NULL AND `+settledPhases, formatTime(at), id)
	if err != nil {
		return fmt.Errorf("drop the parts of %s %d: %w", kind, id, mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("drop the parts of %s %d: %w", kind, id, mapErr(err))
	}
	if n != 1 {
		if err := tx.Rollback(); err != nil {
			return fmt.Errorf("drop the parts of %s %d: %w", kind, id, mapErr(err))
		}
		return s.archiveMiss(ctx, table, kind, id, "drop the parts", "0")
	}
	for _, q := range drop {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("drop the parts of %s %d: %w", kind, id, mapErr(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("drop the parts of %s %d: %w", kind, id, mapErr(err))
	}
	return nil
}

// DeferArchive counts a failure of the sweep on a row and passes it over
// until until.
func (s *Store) DeferArchive(ctx context.Context, kind tenant.ArchiveKind, id int64, until time.Time) error {
	table, _, err := archiveTable(kind)
	if err != nil {
		return err
	}
	res, err := s.write.ExecContext(ctx, `UPDATE `+table+` SET archive_failures = archive_failures + 1, archive_retry_at = ?
WHERE id = ?`, formatTime(until), id)
	if err != nil {
		return fmt.Errorf("defer %s %d: %w", kind, id, mapErr(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("defer %s %d: %w", kind, id, mapErr(err))
	} else if n == 0 {
		return fmt.Errorf("defer %s %d: %w", kind, id, tenant.ErrNotFound)
	}
	return nil
}

// archiveMiss explains a conditional archive write that matched no row:
// ErrNotFound for a missing row, nil when done holds (the write was made
// already), else ErrConflict.
func (s *Store) archiveMiss(ctx context.Context, table string, kind tenant.ArchiveKind, id int64, what, done string) error {
	var n, d int
	err := s.read.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE `+done+`) FROM `+table+` WHERE id = ?`, id).Scan(&n, &d)
	switch {
	case err != nil:
		return fmt.Errorf("%s of %s %d: %w", what, kind, id, mapErr(err))
	case n == 0:
		return fmt.Errorf("%s of %s %d: %w", what, kind, id, tenant.ErrNotFound)
	case d > 0:
		return nil
	}
	return fmt.Errorf("%s of %s %d: not settled, not archived or dropped already: %w", what, kind, id, tenant.ErrConflict)
}
