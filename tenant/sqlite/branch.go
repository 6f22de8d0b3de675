package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

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
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING id`

	// A non-zero company id must match: a branch is never updated through
	// another company.
	qUpdateBranch = `UPDATE branches SET sucursal = ?, razon_comercial = ?, provincia = ?,
    canton = ?, distrito = ?, barrio = ?, otras_senas = ?, cod_pais = ?, telefono = ?, fax = ?,
    correo_electronico = ?, moneda_local = ?, moneda_extranjera = ?, ver_moneda_extranjera = ?,
    licencia = ?, activo = ?, updated_at = ?
WHERE id = ? AND (? = 0 OR company_id = ?)
RETURNING company_id, created_at`

	qBranch   = `SELECT ` + branchColumns + ` FROM branches WHERE id = ?`
	qBranches = `SELECT ` + branchColumns + ` FROM branches WHERE company_id = ? ORDER BY id`

	qCompanyExists = `SELECT EXISTS (SELECT 1 FROM companies WHERE id = ?)`

	// qCompanyBranch reads a branch with its company: companyColumns, then
	// branchColumns, and no row when the branch is another company's.
	//
	// The ids are compared as CAST(? AS INTEGER), not as a bare ?. Planning
	// a join, SQLite weighs `column = ?` terms by whether the value bound
	// is 0 or 1 (its guess for flag columns), and so compiles the statement
	// again whenever a call binds 1 where the last on the connection bound
	// another value, or the other way round: each send of the first
	// company (ids 1 and 1), and the next one on its connection, compiled
	// this 50-column statement again, and the read took 110 µs instead of
	// 27 (BenchmarkReads/CompanyBranchFirstInTurn). A cast is not a bound
	// value to SQLite's planner, and the ids are still read by their
	// primary keys (TestCompanyBranchPlan, TestCompanyBranchCompiledOnce).
	qCompanyBranch = `SELECT c.*, b.* FROM (SELECT ` + companyColumns + ` FROM companies WHERE id = CAST(? AS INTEGER)) AS c
JOIN (SELECT ` + branchColumns + ` FROM branches WHERE id = CAST(? AS INTEGER)) AS b ON b.company_id = c.id`
)

// branchRow scans branch rows into one set of destinations, so that a list
// allocates nothing per row beyond the values read.
type branchRow struct {
	b                tenant.Branch
	created, updated string
	dest             []any
}

func newBranchRow() *branchRow {
	r := &branchRow{}
	b := &r.b
	r.dest = []any{&b.ID, &b.CompanyID, &b.Sucursal, &b.RazonComercial, &b.Provincia,
		&b.Canton, &b.Distrito, &b.Barrio, &b.OtrasSenas, &b.CodPais, &b.Telefono, &b.Fax,
		&b.CorreoElectronico, &b.MonedaLocal, &b.MonedaExtranjera, &b.VerMonedaExtranjera,
		&b.Licencia, &b.Activo, &r.created, &r.updated}
	return r
}

func (r *branchRow) scan(s scanner) (tenant.Branch, error) {
	r.b = tenant.Branch{}
	if err := s.Scan(r.dest...); err != nil {
		return tenant.Branch{}, err
	}
	return r.parsed()
}

// parsed is the branch scanned into r.dest, its times parsed.
func (r *branchRow) parsed() (tenant.Branch, error) {
	var err error
	if r.b.CreatedAt, err = parseTime(r.created); err != nil {
		return tenant.Branch{}, err
	}
	if r.b.UpdatedAt, err = parseTime(r.updated); err != nil {
		return tenant.Branch{}, err
	}
	return r.b, nil
}

func scanBranch(s scanner) (tenant.Branch, error) { return newBranchRow().scan(s) }

// querier is a *sql.Tx or *sql.DB.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func insertBranch(ctx context.Context, q querier, b *tenant.Branch, now time.Time) error {
	err := q.QueryRowContext(ctx, qInsertBranch, b.CompanyID, b.Sucursal, b.RazonComercial,
		b.Provincia, b.Canton, b.Distrito, b.Barrio, b.OtrasSenas, b.CodPais, b.Telefono, b.Fax,
		b.CorreoElectronico, b.MonedaLocal, b.MonedaExtranjera, b.VerMonedaExtranjera,
		b.Licencia, b.Activo, formatTime(now), formatTime(now)).Scan(&b.ID)
	if err != nil {
		return fmt.Errorf("branch %q: %w", b.Sucursal, mapErr(err))
	}
	b.CreatedAt, b.UpdatedAt = now, now
	return nil
}

// CreateBranch inserts a branch of b.CompanyID and its first API user in one
// transaction. A user without a role is a branch user.
func (s *Store) CreateBranch(ctx context.Context, b *tenant.Branch, u *tenant.APIUser) (err error) {
	now := s.clock()
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create branch of company %d: %w", b.CompanyID, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	nb := *b
	if err := insertBranch(ctx, tx, &nb, now); err != nil {
		return fmt.Errorf("create branch of company %d: %w", b.CompanyID, err)
	}
	nu := *u
	nu.CompanyID, nu.BranchID = nb.CompanyID, nb.ID
	if nu.Role == "" {
		nu.Role = tenant.RoleBranch
	}
	if err := insertAPIUser(ctx, tx, &nu, now); err != nil {
		return fmt.Errorf("create branch of company %d: %w", b.CompanyID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create branch of company %d: commit: %w", b.CompanyID, mapErr(err))
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
		created string
	)
	err := s.write.QueryRowContext(ctx, qUpdateBranch, b.Sucursal, b.RazonComercial,
		b.Provincia, b.Canton, b.Distrito, b.Barrio, b.OtrasSenas, b.CodPais, b.Telefono, b.Fax,
		b.CorreoElectronico, b.MonedaLocal, b.MonedaExtranjera, b.VerMonedaExtranjera,
		b.Licencia, b.Activo, formatTime(now), b.ID, b.CompanyID, b.CompanyID).Scan(&company, &created)
	if err != nil {
		return fmt.Errorf("update branch %d: %w", b.ID, mapErr(err))
	}
	createdAt, err := parseTime(created)
	if err != nil {
		return fmt.Errorf("update branch %d: %w", b.ID, err)
	}
	b.CompanyID, b.CreatedAt, b.UpdatedAt = company, createdAt, now
	return nil
}

// Branch returns one branch.
func (s *Store) Branch(ctx context.Context, id int64) (tenant.Branch, error) {
	b, err := scanBranch(s.stmts.branch.QueryRowContext(ctx, id))
	if err != nil {
		return tenant.Branch{}, fmt.Errorf("branch %d: %w", id, mapErr(err))
	}
	return b, nil
}

// CompanyBranch reads the branch branchID with its company companyID in
// one query; a branch of another company is ErrNotFound.
func (s *Store) CompanyBranch(ctx context.Context, companyID, branchID int64) (tenant.Company, tenant.Branch, error) {
	c, b := newCompanyRow(), newBranchRow()
	err := s.stmts.companyBranch.QueryRowContext(ctx, companyID, branchID).Scan(append(c.dest, b.dest...)...)
	if err != nil {
		return tenant.Company{}, tenant.Branch{}, fmt.Errorf("branch %d of company %d: %w", branchID, companyID, mapErr(err))
	}
	company, err := c.parsed()
	if err != nil {
		return tenant.Company{}, tenant.Branch{}, fmt.Errorf("company %d: %w", companyID, err)
	}
	branch, err := b.parsed()
	if err != nil {
		return tenant.Company{}, tenant.Branch{}, fmt.Errorf("branch %d: %w", branchID, err)
	}
	return company, branch, nil
}

// Branches lists a company's branches ordered by id; an unknown company is
// ErrNotFound.
func (s *Store) Branches(ctx context.Context, companyID int64) ([]tenant.Branch, error) {
	rows, err := s.stmts.branches.QueryContext(ctx, companyID)
	if err != nil {
		return nil, fmt.Errorf("branches of company %d: %w", companyID, err)
	}
	defer rows.Close()
	out := []tenant.Branch{}
	row := newBranchRow()
	for rows.Next() {
		b, err := row.scan(rows)
		if err != nil {
			return nil, fmt.Errorf("branches of company %d: %w", companyID, err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("branches of company %d: %w", companyID, err)
	}
	if len(out) == 0 {
		if err := s.companyExists(ctx, companyID); err != nil {
			return nil, fmt.Errorf("branches of company %d: %w", companyID, err)
		}
	}
	return out, nil
}

// companyExists returns ErrNotFound when the company does not exist.
func (s *Store) companyExists(ctx context.Context, id int64) error {
	var ok bool
	if err := s.stmts.companyExists.QueryRowContext(ctx, id).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return tenant.ErrNotFound
	}
	return nil
}
