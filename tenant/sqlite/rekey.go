package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"facturad/tenant"
)

var _ tenant.KeyStore = (*Store)(nil)

const (
	sealedColumns = `id, sealed_contrasena_hacienda, sealed_certificate, sealed_certificate_pin`

	qSealedRows = `SELECT ` + sealedColumns + ` FROM companies WHERE id > ? ORDER BY id LIMIT ?`
	qSealedRow  = `SELECT ` + sealedColumns + ` FROM companies WHERE id = ?`
	// IS compares NULLs as equal, so an unset secret matches an unset one.
	qReplaceSealedRow = `UPDATE companies SET sealed_contrasena_hacienda = ?, sealed_certificate = ?,
    sealed_certificate_pin = ?
WHERE id = ? AND sealed_contrasena_hacienda IS ? AND sealed_certificate IS ?
    AND sealed_certificate_pin IS ?`

	qSealedKey        = `SELECT sealed FROM sealed_keys WHERE name = ?`
	qAddSealedKey     = `INSERT INTO sealed_keys (name, sealed, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`
	qReplaceSealedKey = `UPDATE sealed_keys SET sealed = ? WHERE name = ? AND sealed = ?`
	qSealedKeyNames   = `SELECT name FROM sealed_keys ORDER BY name`
)

func scanSealedRow(s scanner) (tenant.SealedRow, error) {
	var r tenant.SealedRow
	err := s.Scan(&r.CompanyID, &r.ContrasenaHacienda, &r.Certificate, &r.CertificatePIN)
	return r, err
}

// SealedRows returns the sealed columns of at most limit companies with an
// id above afterID, ordered by id.
func (s *Store) SealedRows(ctx context.Context, afterID int64, limit int) ([]tenant.SealedRow, error) {
	rows, err := s.read.QueryContext(ctx, qSealedRows, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("sealed rows after %d: %w", afterID, err)
	}
	defer rows.Close()
	var out []tenant.SealedRow
	for rows.Next() {
		r, err := scanSealedRow(rows)
		if err != nil {
			return nil, fmt.Errorf("sealed rows after %d: %w", afterID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sealed rows after %d: %w", afterID, err)
	}
	return out, nil
}

// SealedRow returns one company's sealed columns.
func (s *Store) SealedRow(ctx context.Context, companyID int64) (tenant.SealedRow, error) {
	r, err := scanSealedRow(s.read.QueryRowContext(ctx, qSealedRow, companyID))
	if err != nil {
		return tenant.SealedRow{}, fmt.Errorf("sealed row %d: %w", companyID, mapErr(err))
	}
	return r, nil
}

// ReplaceSealedRow writes next's sealed columns if the stored ones are
// still old's, and reports whether it wrote.
func (s *Store) ReplaceSealedRow(ctx context.Context, old, next tenant.SealedRow) (bool, error) {
	res, err := s.write.ExecContext(ctx, qReplaceSealedRow,
		nullBytes(next.ContrasenaHacienda), nullBytes(next.Certificate), nullBytes(next.CertificatePIN),
		old.CompanyID,
		nullBytes(old.ContrasenaHacienda), nullBytes(old.Certificate), nullBytes(old.CertificatePIN))
	return affectedOne(res, err, "replace sealed row %d", old.CompanyID)
}

// SealedKey returns the sealed key stored under name, or tenant.ErrNotFound.
func (s *Store) SealedKey(ctx context.Context, name string) ([]byte, error) {
	var b []byte
	if err := s.read.QueryRowContext(ctx, qSealedKey, name).Scan(&b); err != nil {
		return nil, fmt.Errorf("sealed key %s: %w", name, mapErr(err))
	}
	return b, nil
}

// AddSealedKey stores sealed under name unless name is taken.
func (s *Store) AddSealedKey(ctx context.Context, name string, sealed []byte) error {
	if _, err := s.write.ExecContext(ctx, qAddSealedKey, name, sealed, formatTime(s.clock())); err != nil {
		return fmt.Errorf("add sealed key %s: %w", name, err)
	}
	return nil
}

// ReplaceSealedKey writes next under name if the stored value is still old.
func (s *Store) ReplaceSealedKey(ctx context.Context, name string, old, next []byte) (bool, error) {
	res, err := s.write.ExecContext(ctx, qReplaceSealedKey, next, name, old)
	return affectedOne(res, err, "replace sealed key %s", name)
}

// SealedKeyNames lists the names of the stored keys.
func (s *Store) SealedKeyNames(ctx context.Context) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, qSealedKeyNames)
	if err != nil {
		return nil, fmt.Errorf("sealed key names: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("sealed key names: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sealed key names: %w", err)
	}
	return out, nil
}

// affectedOne reports whether an update changed a row.
func affectedOne(res sql.Result, err error, format string, args ...any) (bool, error) {
	if err != nil {
		return false, fmt.Errorf(format+": %w", append(args, err)...)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf(format+": %w", append(args, err)...)
	}
	return n == 1, nil
}
