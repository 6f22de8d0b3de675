package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

const branchColumns = `id, company_id, sucursal, razon_comercial, provincia, canton, distrito,
    barrio, otras_senas, cod_pais, telefono, fax, correo_electronico, moneda_local,
    moneda_extranjera, ver_moneda_extranjera, licencia, activo, created_at, updated_at`

const (
	qInsertBranch = `INSERT INTO branches (company_id, sucursal, razon_comercial, provincia,
    canton, distrito, barrio, otras_senas, cod_pais, telefono, fax, correo_electronico,
    moneda_local, moneda_extranjera, ver_moneda_extranjera, licencia, activo, created_at,
    updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18)
RETURNING id`

	// A non-zero company id must match: a branch is never updated through
	// another company.
	qUpdateBranch = `UPDATE branches SET sucursal = $2, razon_comercial = $3, provincia = $4,
    canton = $5, distrito = $6, barrio = $7, otras_senas = $8, cod_pais = $9, telefono = $10,
    fax = $11, correo_electronico = $12, moneda_local = $13, moneda_extranjera = $14,
    ver_moneda_extranjera = $15, licencia = $16, activo = $17, updated_at = $18
WHERE id = $1 AND ($19::bigint = 0 OR company_id = $19)
RETURNING company_id, created_at`

	qBranch        = `SELECT ` + branchColumns + ` FROM branches WHERE id = $1`
	qBranches      = `SELECT ` + branchColumns + ` FROM branches WHERE company_id = $1 ORDER BY id`
	qCompanyExists = `SELECT EXISTS (SELECT 1 FROM companies WHERE id = $1)`

	// qCompanyBranch reads a branch with its company: companyColumns, then
	// branchColumns, and no row when the branch is another company's.
	qCompanyBranch = `SELECT c.*, b.* FROM (SELECT ` + companyColumns + ` FROM companies WHERE id = $1) AS c
JOIN (SELECT ` + branchColumns + ` FROM branches WHERE id = $2) AS b ON b.company_id = c.id`
)

// branchDest is where a row of branchColumns is scanned into b.
func branchDest(b *tenant.Branch) []any {
	return []any{&b.ID, &b.CompanyID, &b.Sucursal, &b.RazonComercial, &b.Provincia, &b.Canton,
		&b.Distrito, &b.Barrio, &b.OtrasSenas, &b.CodPais, &b.Telefono, &b.Fax,
		&b.CorreoElectronico, &b.MonedaLocal, &b.MonedaExtranjera, &b.VerMonedaExtranjera,
		&b.Licencia, &b.Activo, &b.CreatedAt, &b.UpdatedAt}
}

func scanBranch(r pgx.Row) (tenant.Branch, error) {
	var b tenant.Branch
	if err := r.Scan(branchDest(&b)...); err != nil {
		return tenant.Branch{}, err
	}
	return utcBranch(b), nil
}

// utcBranch is a scanned branch with its times in UTC.
func utcBranch(b tenant.Branch) tenant.Branch {
	b.CreatedAt, b.UpdatedAt = b.CreatedAt.UTC(), b.UpdatedAt.UTC()
	return b
}

func insertBranch(ctx context.Context, tx pgx.Tx, b *tenant.Branch, now time.Time) error {
	err := tx.QueryRow(ctx, qInsertBranch, b.CompanyID, b.Sucursal, b.RazonComercial,
		b.Provincia, b.Canton, b.Distrito, b.Barrio, b.OtrasSenas, b.CodPais, b.Telefono, b.Fax,
		b.CorreoElectronico, b.MonedaLocal, b.MonedaExtranjera, b.VerMonedaExtranjera,
		b.Licencia, b.Activo, now).Scan(&b.ID)
	if err != nil {
		return fmt.Errorf("branch %q: %w", b.Sucursal, mapErr(err))
	}
	b.CreatedAt, b.UpdatedAt = now, now
	return nil
}

// CreateBranch inserts a branch of b.CompanyID and its first API user in one
// transaction. A user without a role is a branch user.
func (s *Store) CreateBranch(ctx context.Context, b *tenant.Branch, u *tenant.APIUser) error {
	now := s.clock()
	nb, nu := *b, *u
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := insertBranch(ctx, tx, &nb, now); err != nil {
			return err
		}
		nu.CompanyID, nu.BranchID = nb.CompanyID, nb.ID
		if nu.Role == "" {
			nu.Role = tenant.RoleBranch
		}
		return insertAPIUser(ctx, tx, &nu, now)
	})
	if err != nil {
		return fmt.Errorf("create branch of company %d: %w", b.CompanyID, err)
	}
	*b, *u = nb, nu
	return nil
}

// UpdateBranch replaces the branch's fields but ID, CompanyID and CreatedAt,
// which it reads back into b with the new UpdatedAt. When b.CompanyID is not
// zero the branch must belong to that company, or the answer is ErrNotFound.
func (s *Store) UpdateBranch(ctx context.Context, b *tenant.Branch) error {
	now := s.clock()
	var (
		company int64
		created time.Time
	)
	err := s.pool.QueryRow(ctx, qUpdateBranch, b.ID, b.Sucursal, b.RazonComercial,
		b.Provincia, b.Canton, b.Distrito, b.Barrio, b.OtrasSenas, b.CodPais, b.Telefono, b.Fax,
		b.CorreoElectronico, b.MonedaLocal, b.MonedaExtranjera, b.VerMonedaExtranjera,
		b.Licencia, b.Activo, now, b.CompanyID).Scan(&company, &created)
	if err != nil {
		return fmt.Errorf("update branch %d: %w", b.ID, mapErr(err))
	}
	b.CompanyID, b.CreatedAt, b.UpdatedAt = company, created.UTC(), now
	return nil
}

// Branch returns one branch.
func (s *Store) Branch(ctx context.Context, id int64) (tenant.Branch, error) {
	b, err := scanBranch(s.pool.QueryRow(ctx, qBranch, id))
	if err != nil {
		return tenant.Branch{}, fmt.Errorf("branch %d: %w", id, mapErr(err))
	}
	return b, nil
}

// CompanyBranch reads the branch branchID with its company companyID in
// one query; a branch of another company is ErrNotFound.
func (s *Store) CompanyBranch(ctx context.Context, companyID, branchID int64) (tenant.Company, tenant.Branch, error) {
	var (
		c companyRow
		b tenant.Branch
	)
	if err := s.pool.QueryRow(ctx, qCompanyBranch, companyID, branchID).Scan(append(c.dest(), branchDest(&b)...)...); err != nil {
		return tenant.Company{}, tenant.Branch{}, fmt.Errorf("branch %d of company %d: %w", branchID, companyID, mapErr(err))
	}
	return c.company(), utcBranch(b), nil
}

// Branches lists a company's branches ordered by id; an unknown company is
// ErrNotFound.
func (s *Store) Branches(ctx context.Context, companyID int64) ([]tenant.Branch, error) {
	rows, err := s.pool.Query(ctx, qBranches, companyID)
	if err != nil {
		return nil, fmt.Errorf("branches of company %d: %w", companyID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tenant.Branch, error) {
		return scanBranch(r)
	})
	if err != nil {
		return nil, fmt.Errorf("branches of company %d: %w", companyID, err)
	}
	if len(out) == 0 {
		if err := s.companyExists(ctx, companyID); err != nil {
			return nil, fmt.Errorf("branches of company %d: %w", companyID, err)
		}
		out = []tenant.Branch{}
	}
	return out, nil
}

// companyExists returns ErrNotFound when the company does not exist.
func (s *Store) companyExists(ctx context.Context, id int64) error {
	var ok bool
	if err := s.pool.QueryRow(ctx, qCompanyExists, id).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return tenant.ErrNotFound
	}
	return nil
}
