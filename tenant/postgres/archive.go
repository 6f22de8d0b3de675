package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

var _ tenant.ArchiveStore = (*Store)(nil)

// archiveTable is the table of kind, and what its drop empties.
func archiveTable(kind tenant.ArchiveKind) (table, drop string, err error) {
	switch kind {
	case tenant.ArchiveIssued:
		return "documents", "signed_xml = NULL, response_xml = NULL", nil
	case tenant.ArchiveReceived:
		return "received_documents", "supplier_xml = ''::bytea, signed_xml = NULL, response_xml = NULL", nil
	}
	return "", "", kind.Check()
}

// settledPhases repeats the partial indexes' condition as they write it.
const settledPhases = `phase IN ('accepted', 'rejected')`

// archiveRowColumns read a tenant.ArchiveRow; notDeferred leaves out the
// rows deferred past $2.
const (
	archiveRowColumns = `id, company_id, ambiente, clave, fecha_emision, created_at, archived_at,
    archive_bucket, archive_key, archive_failures`
	notDeferred = `(archive_retry_at IS NULL OR archive_retry_at <= $2)`
)

// UnarchivedRows reads the settled rows not archived yet along the
// *_unarchived partial index.
func (s *Store) UnarchivedRows(ctx context.Context, kind tenant.ArchiveKind, after int64, now time.Time, limit int) ([]tenant.ArchiveRow, error) {
	table, _, err := archiveTable(kind)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + archiveRowColumns + ` FROM ` + table + `
WHERE archived_at IS NULL AND ` + settledPhases + ` AND id > $1 AND ` + notDeferred + `
ORDER BY id LIMIT $3`
	return s.archiveRows(ctx, kind, q, after, now.UTC(), limit)
}

// DroppableRows reads the archived rows still kept along the
// *_archived_kept partial index.
func (s *Store) DroppableRows(ctx context.Context, kind tenant.ArchiveKind, before, now time.Time, limit int) ([]tenant.ArchiveRow, error) {
	table, _, err := archiveTable(kind)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + archiveRowColumns + ` FROM ` + table + `
WHERE archived_at IS NOT NULL AND parts_dropped_at IS NULL AND archived_at <= $1 AND ` + notDeferred + `
ORDER BY archived_at, id LIMIT $3`
	return s.archiveRows(ctx, kind, q, before.UTC(), now.UTC(), limit)
}

func (s *Store) archiveRows(ctx context.Context, kind tenant.ArchiveKind, q string, arg any, now time.Time, limit int) ([]tenant.ArchiveRow, error) {
	rows, err := s.pool.Query(ctx, q, arg, now, limit)
	if err != nil {
		return nil, fmt.Errorf("archive rows of %s: %w", kind, mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tenant.ArchiveRow, error) {
		var (
			a              tenant.ArchiveRow
			fecha, archivd *time.Time
		)
		err := r.Scan(&a.ID, &a.CompanyID, &a.Ambiente, &a.Clave, &fecha, &a.CreatedAt, &archivd, &a.Archive.Bucket, &a.Archive.Key, &a.Failures)
		a.Kind, a.FechaEmision, a.ArchivedAt, a.CreatedAt = kind, fromNullTime(fecha), fromNullTime(archivd), a.CreatedAt.UTC()
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("archive rows of %s: %w", kind, mapErr(err))
	}
	return out, nil
}

// MarkArchived records the copy of a settled row, once.
func (s *Store) MarkArchived(ctx context.Context, kind tenant.ArchiveKind, id int64, loc tenant.ArchiveLocation, at time.Time) error {
	table, _, err := archiveTable(kind)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE `+table+` SET archived_at = $2, archive_bucket = $3, archive_key = $4,
    archive_failures = 0, archive_retry_at = NULL
WHERE id = $1 AND archived_at IS NULL AND `+settledPhases, id, at.UTC().Truncate(time.Microsecond), loc.Bucket, loc.Key)
	if err != nil {
		return fmt.Errorf("mark %s %d archived: %w", kind, id, mapErr(err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	return s.archiveMiss(ctx, table, kind, id, "mark archived", `archived_at IS NOT NULL`)
}

// DropParts empties an archived, settled row's parts in one conditional
// statement: a row the condition does not hold for keeps them.
func (s *Store) DropParts(ctx context.Context, kind tenant.ArchiveKind, id int64, at time.Time) error {
	table, drop, err := archiveTable(kind)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE `+table+` SET `+drop+`, parts_dropped_at = $2,
    archive_failures = 0, archive_retry_at = NULL
WHERE id = $1 AND archived_at IS NOT NULL AND parts_dropped_at IS NULL AND `+settledPhases,
		id, at.UTC().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("drop the parts of %s %d: %w", kind, id, mapErr(err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	return s.archiveMiss(ctx, table, kind, id, "drop the parts", "false")
}

// DeferArchive counts a failure of the sweep on a row and passes it over
// until until.
func (s *Store) DeferArchive(ctx context.Context, kind tenant.ArchiveKind, id int64, until time.Time) error {
	table, _, err := archiveTable(kind)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE `+table+` SET archive_failures = archive_failures + 1, archive_retry_at = $2
WHERE id = $1`, id, until.UTC().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("defer %s %d: %w", kind, id, mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("defer %s %d: %w", kind, id, tenant.ErrNotFound)
	}
	return nil
}

// archiveMiss explains a conditional archive write that matched no row:
// ErrNotFound for a missing row, nil when done holds (the write was made
// already), else ErrConflict.
func (s *Store) archiveMiss(ctx context.Context, table string, kind tenant.ArchiveKind, id int64, what, done string) error {
	var n, d int
	err := s.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE `+done+`) FROM `+table+` WHERE id = $1`, id).Scan(&n, &d)
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
