package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"facturad/tenant"
)

var _ tenant.KeyStore = (*Store)(nil)

const (
	sealedColumns = `id, sealed_contrasena_hacienda, sealed_certificate, sealed_certificate_pin`

	qSealedRows = `SELECT ` + sealedColumns + ` FROM companies WHERE id > $1 ORDER BY id LIMIT $2`
	qSealedRow  = `SELECT ` + sealedColumns + ` FROM companies WHERE id = $1`
	// IS NOT DISTINCT FROM compares NULLs as equal, so an unset secret
	// matches an unset one.
	qReplaceSealedRow = `UPDATE companies SET sealed_contrasena_hacienda = $2, sealed_certificate = $3,
    sealed_certificate_pin = $4
WHERE id = $1 AND sealed_contrasena_hacienda IS NOT DISTINCT FROM $5
    AND sealed_certificate IS NOT DISTINCT FROM $6 AND sealed_certificate_pin IS NOT DISTINCT FROM $7`

	qSealedKey        = `SELECT sealed FROM sealed_keys WHERE name = $1`
	qAddSealedKey     = `INSERT INTO sealed_keys (name, sealed, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`
	qReplaceSealedKey = `UPDATE sealed_keys SET sealed = $3 WHERE name = $1 AND sealed = $2`
	qSealedKeyNames   = `SELECT name FROM sealed_keys ORDER BY name`
)

func scanSealedRow(row pgx.Row) (tenant.SealedRow, error) {
	var r tenant.SealedRow
	err := row.Scan(&r.CompanyID, &r.ContrasenaHacienda, &r.Certificate, &r.CertificatePIN)
	return r, err
}

// SealedRows returns the sealed columns of at most limit companies with an
// id above afterID, ordered by id.
func (s *Store) SealedRows(ctx context.Context, afterID int64, limit int) ([]tenant.SealedRow, error) {
	rows, err := s.pool.Query(ctx, qSealedRows, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("sealed rows after %d: %w", afterID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tenant.SealedRow, error) {
		return scanSealedRow(r)
	})
	if err != nil {
		return nil, fmt.Errorf("sealed rows after %d: %w", afterID, err)
	}
	return out, nil
}

// SealedRow returns one company's sealed columns.
func (s *Store) SealedRow(ctx context.Context, companyID int64) (tenant.SealedRow, error) {
	r, err := scanSealedRow(s.pool.QueryRow(ctx, qSealedRow, companyID))
	if err != nil {
		return tenant.SealedRow{}, fmt.Errorf("sealed row %d: %w", companyID, mapErr(err))
	}
	return r, nil
}

// ReplaceSealedRow writes next's sealed columns if the stored ones are
// still old's, and reports whether it wrote.
func (s *Store) ReplaceSealedRow(ctx context.Context, old, next tenant.SealedRow) (bool, error) {
	tag, err := s.pool.Exec(ctx, qReplaceSealedRow, old.CompanyID,
		nullBytes(next.ContrasenaHacienda), nullBytes(next.Certificate), nullBytes(next.CertificatePIN),
		nullBytes(old.ContrasenaHacienda), nullBytes(old.Certificate), nullBytes(old.CertificatePIN))
	return affectedOne(tag, err, "replace sealed row %d", old.CompanyID)
}

// SealedKey returns the sealed key stored under name, or tenant.ErrNotFound.
func (s *Store) SealedKey(ctx context.Context, name string) ([]byte, error) {
	var b []byte
	if err := s.pool.QueryRow(ctx, qSealedKey, name).Scan(&b); err != nil {
		return nil, fmt.Errorf("sealed key %s: %w", name, mapErr(err))
	}
	return b, nil
}

// AddSealedKey stores sealed under name unless name is taken.
func (s *Store) AddSealedKey(ctx context.Context, name string, sealed []byte) error {
	if _, err := s.pool.Exec(ctx, qAddSealedKey, name, sealed, s.clock()); err != nil {
		return fmt.Errorf("add sealed key %s: %w", name, err)
	}
	return nil
}

// ReplaceSealedKey writes next under name if the stored value is still old.
func (s *Store) ReplaceSealedKey(ctx context.Context, name string, old, next []byte) (bool, error) {
	tag, err := s.pool.Exec(ctx, qReplaceSealedKey, name, old, next)
	return affectedOne(tag, err, "replace sealed key %s", name)
}

// SealedKeyNames lists the names of the stored keys.
func (s *Store) SealedKeyNames(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, qSealedKeyNames)
	if err != nil {
		return nil, fmt.Errorf("sealed key names: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("sealed key names: %w", err)
	}
	return out, nil
}

// affectedOne reports whether an update changed a row.
func affectedOne(tag pgconn.CommandTag, err error, format string, args ...any) (bool, error) {
	if err != nil {
		return false, fmt.Errorf(format+": %w", append(args, err)...)
	}
	return tag.RowsAffected() == 1, nil
}
