package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"facturad/tenant"
)

const companyColumns = `id, owner_id, tipo_identificacion, numero_identificacion, razon_social,
    actividad_comercial, tipo_cliente, razon_comercial, provincia, canton, distrito, barrio,
    otras_senas, cod_pais, telefono, fax, correo_electronico, moneda_local, moneda_extranjera,
    facturacion_electronica, activo, usuario_hacienda, sealed_contrasena_hacienda,
    sealed_certificate, sealed_certificate_pin, certificate_expiry, certificate_version,
    created_at, updated_at, validaciones_registro, ambiente, cuota_mensual,
    correo_notificaciones, notas_impresas, logo IS NOT NULL AS has_logo`

const (
	qNextCompanyID = `UPDATE counters SET value = value + 1 WHERE name = 'company' RETURNING value`

	qInsertCompany = `INSERT INTO companies (id, owner_id, tipo_identificacion,
    numero_identificacion, razon_social, name_key, actividad_comercial, tipo_cliente,
    razon_comercial, provincia, canton, distrito, barrio, otras_senas, cod_pais, telefono, fax,
    correo_electronico, moneda_local, moneda_extranjera, facturacion_electronica, activo,
    usuario_hacienda, sealed_contrasena_hacienda, sealed_certificate, sealed_certificate_pin,
    certificate_expiry, certificate_version, created_at, updated_at, validaciones_registro,
    ambiente, cuota_mensual, correo_notificaciones, notas_impresas, logo)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
    ?, ?, ?, ?, ?)`

	// Updating a company writes the certificate columns only when a new
	// certificate was uploaded, and then steps its version in the statement
	// itself, so that racing uploads each get their own version. Both
	// return the stored row.
	qUpdateCompanySet = `UPDATE companies SET tipo_identificacion = ?, numero_identificacion = ?,
    razon_social = ?, name_key = ?, actividad_comercial = ?, tipo_cliente = ?,
    razon_comercial = ?, provincia = ?, canton = ?, distrito = ?, barrio = ?, otras_senas = ?,
    cod_pais = ?, telefono = ?, fax = ?, correo_electronico = ?, moneda_local = ?,
    moneda_extranjera = ?, facturacion_electronica = ?, activo = ?, usuario_hacienda = ?,
    sealed_contrasena_hacienda = ?, validaciones_registro = ?, ambiente = ?, cuota_mensual = ?,
    correo_notificaciones = ?, notas_impresas = ?, logo = CASE WHEN ? THEN ? ELSE logo END, `
	qUpdateCompanyWhere = `
WHERE id = ?
RETURNING ` + companyColumns
	qUpdateCompany            = qUpdateCompanySet + `updated_at = ?` + qUpdateCompanyWhere
	qUpdateCompanyCertificate = qUpdateCompanySet + `sealed_certificate = ?,
    sealed_certificate_pin = ?, certificate_expiry = ?,
    certificate_version = certificate_version + 1, updated_at = ?` + qUpdateCompanyWhere

	// qCompanyQuotaNone reads whether the company has no quota yet, in
	// the update's transaction.
	qCompanyQuotaNone = `SELECT cuota_mensual IS NULL FROM companies WHERE id = ?`
	// qRecountMonth makes the company's count of the month (?2) the count
	// of its documents numbered in [?3, ?4). The counts are stepped only
	// while the company has a quota: one set where there was none starts
	// from the documents numbered meanwhile, in the update's transaction.
	qRecountMonth = `INSERT INTO company_usage (company_id, periodo, documentos)
SELECT ?1, ?2, count(*) FROM documents
WHERE company_id = ?1 AND created_at >= ?3 AND created_at < ?4
ON CONFLICT (company_id, periodo) DO UPDATE SET documentos = excluded.documentos`

	qCompany = `SELECT ` + companyColumns + ` FROM companies WHERE id = ?`

	// qCompanyPrint reads what a company prints on its documents.
	qCompanyPrint = `SELECT logo, notas_impresas FROM companies WHERE id = ?`

	// Searches: one query per filter shape, so that each can use its index.
	qSearchCompanies = `SELECT ` + companyColumns + ` FROM companies
WHERE name_key LIKE ? ESCAPE '\'
ORDER BY name_key, id LIMIT ?`
	qSearchCompaniesByOwner = `SELECT ` + companyColumns + ` FROM companies
WHERE owner_id = ? AND name_key LIKE ? ESCAPE '\'
ORDER BY name_key, id LIMIT ?`
	qSearchCompanyByID = `SELECT ` + companyColumns + ` FROM companies
WHERE id = ? AND (? OR owner_id = ?) AND name_key LIKE ? ESCAPE '\'
ORDER BY name_key, id LIMIT ?`
)

// companyRow scans company rows into one set of destinations, so that a
// search allocates nothing per row beyond the values read.
type companyRow struct {
	c                tenant.Company
	expiry           sql.NullString
	created, updated string
	dest             []any
}

func newCompanyRow() *companyRow {
	r := &companyRow{}
	c := &r.c
	r.dest = []any{&c.ID, &c.OwnerID, &c.TipoIdentificacion, &c.NumeroIdentificacion,
		&c.RazonSocial, &c.ActividadComercial, &c.TipoCliente, &c.RazonComercial, &c.Provincia,
		&c.Canton, &c.Distrito, &c.Barrio, &c.OtrasSenas, &c.CodPais, &c.Telefono, &c.Fax,
		&c.CorreoElectronico, &c.MonedaLocal, &c.MonedaExtranjera, &c.FacturacionElectronica,
		&c.Activo, &c.UsuarioHacienda, &c.SealedContrasenaHacienda, &c.SealedCertificate,
		&c.SealedCertificatePIN, &r.expiry, &c.CertificateVersion, &r.created, &r.updated,
		&c.ValidacionesRegistro, &c.Ambiente, &c.CuotaMensual, &c.CorreoNotificaciones,
		&c.NotasImpresas, &c.HasLogo}
	return r
}

func (r *companyRow) scan(s scanner) (tenant.Company, error) {
	r.c = tenant.Company{}
	if err := s.Scan(r.dest...); err != nil {
		return tenant.Company{}, err
	}
	return r.parsed()
}

// parsed is the company scanned into r.dest, its times parsed.
func (r *companyRow) parsed() (tenant.Company, error) {
	var err error
	if r.c.CertificateExpiry, err = parseNullTime(r.expiry); err != nil {
		return tenant.Company{}, err
	}
	if r.c.CreatedAt, err = parseTime(r.created); err != nil {
		return tenant.Company{}, err
	}
	if r.c.UpdatedAt, err = parseTime(r.updated); err != nil {
		return tenant.Company{}, err
	}
	return r.c, nil
}

func scanCompany(s scanner) (tenant.Company, error) { return newCompanyRow().scan(s) }

// NextCompanyID reserves the next company id.
func (s *Store) NextCompanyID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.write.QueryRowContext(ctx, qNextCompanyID).Scan(&id); err != nil {
		return 0, fmt.Errorf("reserve company id: %w", err)
	}
	return id, nil
}

// CreateCompany inserts the company, its first branch and that branch's API
// user in one transaction. A user without a role is a branch user.
func (s *Store) CreateCompany(ctx context.Context, c *tenant.Company, b *tenant.Branch, u *tenant.APIUser) (err error) {
	if c.ID <= 0 {
		return fmt.Errorf("create company: id %d was not reserved with NextCompanyID", c.ID)
	}
	now := s.clock()
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create company %d: %w", c.ID, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	_, err = tx.ExecContext(ctx, qInsertCompany, c.ID, c.OwnerID, c.TipoIdentificacion,
		c.NumeroIdentificacion, c.RazonSocial, tenant.FoldName(c.RazonSocial),
		c.ActividadComercial, c.TipoCliente, c.RazonComercial, c.Provincia, c.Canton,
		c.Distrito, c.Barrio, c.OtrasSenas, c.CodPais, c.Telefono, c.Fax, c.CorreoElectronico,
		c.MonedaLocal, c.MonedaExtranjera, c.FacturacionElectronica, c.Activo,
		c.UsuarioHacienda, nullBytes(c.SealedContrasenaHacienda), nullBytes(c.SealedCertificate),
		nullBytes(c.SealedCertificatePIN), nullTime(c.CertificateExpiry), c.CertificateVersion,
		formatTime(now), formatTime(now), c.ValidacionesRegistro, c.Ambiente, c.CuotaMensual,
		c.CorreoNotificaciones, c.NotasImpresas, nullBytes(c.Logo))
	if err != nil {
		return fmt.Errorf("create company %d: %w", c.ID, mapErr(err))
	}
	nb := *b
	nb.CompanyID = c.ID
	if err := insertBranch(ctx, tx, &nb, now); err != nil {
		return fmt.Errorf("create company %d: %w", c.ID, err)
	}
	nu := *u
	nu.CompanyID, nu.BranchID = c.ID, nb.ID
	if nu.Role == "" {
		nu.Role = tenant.RoleBranch
	}
	if err := insertAPIUser(ctx, tx, &nu, now); err != nil {
		return fmt.Errorf("create company %d: %w", c.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create company %d: commit: %w", c.ID, mapErr(err))
	}
	c.CreatedAt, c.UpdatedAt = now, now
	*b, *u = nb, nu
	return nil
}

// UpdateCompany replaces the company's fields but ID, OwnerID, CreatedAt
// and, unless newCertificate, the certificate, and reads the stored row back
// into c. With newCertificate the certificate version is stepped by the
// UPDATE itself: the single write connection and the row update make racing
// uploads get distinct versions.
func (s *Store) UpdateCompany(ctx context.Context, c *tenant.Company, newCertificate bool) (err error) {
	args := []any{c.TipoIdentificacion,
		c.NumeroIdentificacion, c.RazonSocial, tenant.FoldName(c.RazonSocial),
		c.ActividadComercial, c.TipoCliente, c.RazonComercial, c.Provincia, c.Canton,
		c.Distrito, c.Barrio, c.OtrasSenas, c.CodPais, c.Telefono, c.Fax, c.CorreoElectronico,
		c.MonedaLocal, c.MonedaExtranjera, c.FacturacionElectronica, c.Activo,
		c.UsuarioHacienda, nullBytes(c.SealedContrasenaHacienda), c.ValidacionesRegistro,
		c.Ambiente, c.CuotaMensual, c.CorreoNotificaciones, c.NotasImpresas, c.ReplaceLogo,
		nullBytes(c.Logo)}
	q := qUpdateCompany
	if newCertificate {
		q = qUpdateCompanyCertificate
		args = append(args, nullBytes(c.SealedCertificate), nullBytes(c.SealedCertificatePIN),
			nullTime(c.CertificateExpiry))
	}
	args = append(args, formatTime(s.clock()), c.ID)
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("update company %d: %w", c.ID, mapErr(err))
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	var none bool
	if err := tx.QueryRowContext(ctx, qCompanyQuotaNone, c.ID).Scan(&none); err != nil {
		return fmt.Errorf("update company %d: %w", c.ID, mapErr(err))
	}
	stored, err := scanCompany(tx.QueryRowContext(ctx, q, args...))
	if err != nil {
		return fmt.Errorf("update company %d: %w", c.ID, mapErr(err))
	}
	if none && stored.CuotaMensual != nil {
		// A quota where there was none: the month's count starts from
		// what the company numbered meanwhile.
		m := tenant.MonthOf(s.clock())
		if _, err := tx.ExecContext(ctx, qRecountMonth, c.ID, m.Periodo, formatTime(m.Start), formatTime(m.End)); err != nil {
			return fmt.Errorf("update company %d: count the month: %w", c.ID, mapErr(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("update company %d: commit: %w", c.ID, mapErr(err))
	}
	*c = stored
	return nil
}

// Company returns one company.
func (s *Store) Company(ctx context.Context, id int64) (tenant.Company, error) {
	c, err := scanCompany(s.stmts.company.QueryRowContext(ctx, id))
	if err != nil {
		return tenant.Company{}, fmt.Errorf("company %d: %w", id, mapErr(err))
	}
	return c, nil
}

// CompanyPrint returns the company's logo (nil when it has none) and
// notes.
func (s *Store) CompanyPrint(ctx context.Context, id int64) (tenant.CompanyPrint, error) {
	var p tenant.CompanyPrint
	if err := s.read.QueryRowContext(ctx, qCompanyPrint, id).Scan(&p.Logo, &p.Notas); err != nil {
		return tenant.CompanyPrint{}, fmt.Errorf("company %d: what it prints: %w", id, mapErr(err))
	}
	return p, nil
}

// SearchCompanies returns the companies whose folded legal name contains
// q.NameKey, ordered by folded name then id, at most 100.
func (s *Store) SearchCompanies(ctx context.Context, q tenant.CompanyQuery) ([]tenant.Company, error) {
	limit := q.Limit
	if limit <= 0 || limit > searchLimit {
		limit = searchLimit
	}
	pattern := likeContains(tenant.FoldName(q.NameKey))
	var (
		rows *sql.Rows
		err  error
	)
	switch {
	case q.CompanyID != 0:
		anyOwner, owner := true, int64(0)
		if q.OwnerID != nil {
			anyOwner, owner = false, *q.OwnerID
		}
		rows, err = s.stmts.searchByID.QueryContext(ctx, q.CompanyID, anyOwner, owner, pattern, limit)
	case q.OwnerID != nil:
		rows, err = s.stmts.searchByOwner.QueryContext(ctx, *q.OwnerID, pattern, limit)
	default:
		rows, err = s.stmts.search.QueryContext(ctx, pattern, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("search companies: %w", err)
	}
	defer rows.Close()
	out := []tenant.Company{}
	row := newCompanyRow()
	for rows.Next() {
		c, err := row.scan(rows)
		if err != nil {
			return nil, fmt.Errorf("search companies: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search companies: %w", err)
	}
	return out, nil
}
