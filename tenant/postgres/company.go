package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
	qNextCompanyID = `SELECT nextval('company_ids')`

	qInsertCompany = `INSERT INTO companies (id, owner_id, tipo_identificacion,
    numero_identificacion, razon_social, name_key, actividad_comercial, tipo_cliente,
    razon_comercial, provincia, canton, distrito, barrio, otras_senas, cod_pais, telefono, fax,
    correo_electronico, moneda_local, moneda_extranjera, facturacion_electronica, activo,
    usuario_hacienda, sealed_contrasena_hacienda, sealed_certificate, sealed_certificate_pin,
    certificate_expiry, certificate_version, created_at, updated_at, validaciones_registro,
    ambiente, cuota_mensual, correo_notificaciones, notas_impresas, logo)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
    $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $29, $30, $31, $32, $33, $34, $35)`

	// Updating a company writes the certificate columns only when a new
	// certificate was uploaded, and then steps its version in the statement
	// itself: the row lock makes racing uploads, from any replica, each get
	// their own version. Both return the stored row.
	qUpdateCompanySet = `UPDATE companies SET tipo_identificacion = $2, numero_identificacion = $3,
    razon_social = $4, name_key = $5, actividad_comercial = $6, tipo_cliente = $7,
    razon_comercial = $8, provincia = $9, canton = $10, distrito = $11, barrio = $12,
    otras_senas = $13, cod_pais = $14, telefono = $15, fax = $16, correo_electronico = $17,
    moneda_local = $18, moneda_extranjera = $19, facturacion_electronica = $20, activo = $21,
    usuario_hacienda = $22, sealed_contrasena_hacienda = $23, updated_at = $24,
    validaciones_registro = $25, ambiente = $26, cuota_mensual = $27,
    correo_notificaciones = $28, notas_impresas = $29,
    logo = CASE WHEN $30::boolean THEN $31::bytea ELSE logo END`
	qUpdateCompanyWhere = `
WHERE id = $1
RETURNING ` + companyColumns
	qUpdateCompany            = qUpdateCompanySet + qUpdateCompanyWhere
	qUpdateCompanyCertificate = qUpdateCompanySet + `, sealed_certificate = $32,
    sealed_certificate_pin = $33, certificate_expiry = $34,
    certificate_version = certificate_version + 1` + qUpdateCompanyWhere

	// qLockCompanyQuota locks the company's row for its update and reads
	// whether it has no quota yet. FOR NO KEY UPDATE, the lock the UPDATE
	// takes anyway: it does not wait for the key-share lock a reservation's
	// insert into company_usage holds on the company (its foreign key), so
	// the two cannot deadlock.
	qLockCompanyQuota = `SELECT cuota_mensual IS NULL FROM companies WHERE id = $1 FOR NO KEY UPDATE`
	// qRecountMonth makes the company's count of the month ($2) the count
	// of its documents numbered in [$3, $4). The counts are stepped only
	// while the company has a quota: one set where there was none starts
	// from the documents numbered meanwhile, in the update's transaction,
	// so that the first reservation under it finds the count made.
	qRecountMonth = `INSERT INTO company_usage (company_id, periodo, documentos)
SELECT $1, $2, count(*) FROM documents
WHERE company_id = $1 AND created_at >= $3 AND created_at < $4
ON CONFLICT (company_id, periodo) DO UPDATE SET documentos = EXCLUDED.documentos`

	qCompany = `SELECT ` + companyColumns + ` FROM companies WHERE id = $1`

	// qCompanyPrint reads what a company prints on its documents.
	qCompanyPrint = `SELECT logo, notas_impresas FROM companies WHERE id = $1`

	// Searches: one query per filter shape, so that each can use its index.
	qSearchCompanies = `SELECT ` + companyColumns + ` FROM companies
WHERE name_key LIKE $1 ESCAPE '\'
ORDER BY name_key, id LIMIT $2`
	qSearchCompaniesByOwner = `SELECT ` + companyColumns + ` FROM companies
WHERE owner_id = $1 AND name_key LIKE $2 ESCAPE '\'
ORDER BY name_key, id LIMIT $3`
	qSearchCompanyByID = `SELECT ` + companyColumns + ` FROM companies
WHERE id = $1 AND ($2::bigint IS NULL OR owner_id = $2) AND name_key LIKE $3 ESCAPE '\'
ORDER BY name_key, id LIMIT $4`
)

// companyRow is where a row of companyColumns is scanned.
type companyRow struct {
	c      tenant.Company
	expiry *time.Time
}

func (r *companyRow) dest() []any {
	c := &r.c
	return []any{&c.ID, &c.OwnerID, &c.TipoIdentificacion, &c.NumeroIdentificacion,
		&c.RazonSocial, &c.ActividadComercial, &c.TipoCliente, &c.RazonComercial, &c.Provincia,
		&c.Canton, &c.Distrito, &c.Barrio, &c.OtrasSenas, &c.CodPais, &c.Telefono, &c.Fax,
		&c.CorreoElectronico, &c.MonedaLocal, &c.MonedaExtranjera, &c.FacturacionElectronica,
		&c.Activo, &c.UsuarioHacienda, &c.SealedContrasenaHacienda, &c.SealedCertificate,
		&c.SealedCertificatePIN, &r.expiry, &c.CertificateVersion, &c.CreatedAt, &c.UpdatedAt,
		&c.ValidacionesRegistro, &c.Ambiente, &c.CuotaMensual, &c.CorreoNotificaciones,
		&c.NotasImpresas, &c.HasLogo}
}

// company is the scanned company, its times in UTC.
func (r *companyRow) company() tenant.Company {
	c := r.c
	c.CertificateExpiry = fromNullTime(r.expiry)
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c
}

func scanCompany(r pgx.Row) (tenant.Company, error) {
	var row companyRow
	if err := r.Scan(row.dest()...); err != nil {
		return tenant.Company{}, err
	}
	return row.company(), nil
}

// NextCompanyID reserves the next company id from the company_ids
// sequence.
func (s *Store) NextCompanyID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.pool.QueryRow(ctx, qNextCompanyID).Scan(&id); err != nil {
		return 0, fmt.Errorf("reserve company id: %w", err)
	}
	return id, nil
}

// CreateCompany inserts the company, its first branch and that branch's API
// user in one transaction. A user without a role is a branch user.
func (s *Store) CreateCompany(ctx context.Context, c *tenant.Company, b *tenant.Branch, u *tenant.APIUser) error {
	if c.ID <= 0 {
		return fmt.Errorf("create company: id %d was not reserved with NextCompanyID", c.ID)
	}
	now := s.clock()
	nb, nu := *b, *u
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, qInsertCompany, c.ID, c.OwnerID, c.TipoIdentificacion,
			c.NumeroIdentificacion, c.RazonSocial, tenant.FoldName(c.RazonSocial),
			c.ActividadComercial, c.TipoCliente, c.RazonComercial, c.Provincia, c.Canton,
			c.Distrito, c.Barrio, c.OtrasSenas, c.CodPais, c.Telefono, c.Fax,
			c.CorreoElectronico, c.MonedaLocal, c.MonedaExtranjera, c.FacturacionElectronica,
			c.Activo, c.UsuarioHacienda, nullBytes(c.SealedContrasenaHacienda),
			nullBytes(c.SealedCertificate), nullBytes(c.SealedCertificatePIN),
			nullTime(c.CertificateExpiry), c.CertificateVersion, now, c.ValidacionesRegistro,
			c.Ambiente, c.CuotaMensual, c.CorreoNotificaciones, c.NotasImpresas, nullBytes(c.Logo))
		if err != nil {
			return mapErr(err)
		}
		nb.CompanyID = c.ID
		if err := insertBranch(ctx, tx, &nb, now); err != nil {
			return err
		}
		nu.CompanyID, nu.BranchID = c.ID, nb.ID
		if nu.Role == "" {
			nu.Role = tenant.RoleBranch
		}
		return insertAPIUser(ctx, tx, &nu, now)
	})
	if err != nil {
		return fmt.Errorf("create company %d: %w", c.ID, err)
	}
	c.CreatedAt, c.UpdatedAt = now, now
	*b, *u = nb, nu
	return nil
}

// UpdateCompany replaces the company's fields but ID, OwnerID, CreatedAt
// and, unless newCertificate, the certificate, and reads the stored row back
// into c. With newCertificate the certificate version is stepped by the
// UPDATE itself, which holds the row lock, so racing uploads get distinct
// versions.
func (s *Store) UpdateCompany(ctx context.Context, c *tenant.Company, newCertificate bool) error {
	args := []any{c.ID, c.TipoIdentificacion,
		c.NumeroIdentificacion, c.RazonSocial, tenant.FoldName(c.RazonSocial),
		c.ActividadComercial, c.TipoCliente, c.RazonComercial, c.Provincia, c.Canton,
		c.Distrito, c.Barrio, c.OtrasSenas, c.CodPais, c.Telefono, c.Fax, c.CorreoElectronico,
		c.MonedaLocal, c.MonedaExtranjera, c.FacturacionElectronica, c.Activo,
		c.UsuarioHacienda, nullBytes(c.SealedContrasenaHacienda), s.clock(), c.ValidacionesRegistro,
		c.Ambiente, c.CuotaMensual, c.CorreoNotificaciones, c.NotasImpresas, c.ReplaceLogo,
		nullBytes(c.Logo)}
	q := qUpdateCompany
	if newCertificate {
		q = qUpdateCompanyCertificate
		args = append(args, nullBytes(c.SealedCertificate), nullBytes(c.SealedCertificatePIN),
			nullTime(c.CertificateExpiry))
	}
	// A quota set where there was none counts the month's documents in
	// the same transaction (qRecountMonth); the row lock taken first
	// keeps two updates from both finding no quota.
	var stored tenant.Company
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var none bool
		if err := tx.QueryRow(ctx, qLockCompanyQuota, c.ID).Scan(&none); err != nil {
			return mapErr(err)
		}
		var err error
		if stored, err = scanCompany(tx.QueryRow(ctx, q, args...)); err != nil {
			return mapErr(err)
		}
		if none && stored.CuotaMensual != nil {
			m := tenant.MonthOf(s.clock())
			if _, err := tx.Exec(ctx, qRecountMonth, c.ID, m.Periodo, m.Start, m.End); err != nil {
				return fmt.Errorf("count the month: %w", mapErr(err))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update company %d: %w", c.ID, err)
	}
	*c = stored
	return nil
}

// Company returns one company.
func (s *Store) Company(ctx context.Context, id int64) (tenant.Company, error) {
	c, err := scanCompany(s.pool.QueryRow(ctx, qCompany, id))
	if err != nil {
		return tenant.Company{}, fmt.Errorf("company %d: %w", id, mapErr(err))
	}
	return c, nil
}

// CompanyPrint returns the company's logo (nil when it has none) and
// notes.
func (s *Store) CompanyPrint(ctx context.Context, id int64) (tenant.CompanyPrint, error) {
	var p tenant.CompanyPrint
	if err := s.pool.QueryRow(ctx, qCompanyPrint, id).Scan(&p.Logo, &p.Notas); err != nil {
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
		rows pgx.Rows
		err  error
	)
	switch {
	case q.CompanyID != 0:
		rows, err = s.pool.Query(ctx, qSearchCompanyByID, q.CompanyID, q.OwnerID, pattern, limit)
	case q.OwnerID != nil:
		rows, err = s.pool.Query(ctx, qSearchCompaniesByOwner, *q.OwnerID, pattern, limit)
	default:
		rows, err = s.pool.Query(ctx, qSearchCompanies, pattern, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("search companies: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tenant.Company, error) {
		return scanCompany(r)
	})
	if err != nil {
		return nil, fmt.Errorf("search companies: %w", err)
	}
	if out == nil {
		out = []tenant.Company{}
	}
	return out, nil
}
