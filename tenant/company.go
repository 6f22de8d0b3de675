package tenant

import (
	"context"
	"crypto/subtle"
	"fmt"
	"time"

	"facturad/hacienda/msg"
)

// SearchCompanies finds companies by legal name (case- and
// accent-insensitive substring; empty matches all), at most 100, ordered by
// name. An admin searches every company, a reseller its own companies, a
// branch user only its company.
func (s *Service) SearchCompanies(ctx context.Context, p Principal, name string) ([]Company, error) {
	q := CompanyQuery{NameKey: FoldName(name), Limit: 100}
	switch p.Role {
	case RoleAdmin:
	case RoleReseller:
		if p.UserID == 0 {
			return []Company{}, nil
		}
		owner := p.UserID
		q.OwnerID = &owner
	case RoleBranch:
		if p.CompanyID == 0 {
			return []Company{}, nil
		}
		q.CompanyID = p.CompanyID
	default:
		return []Company{}, nil
	}
	cs, err := s.store.SearchCompanies(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("search companies: %w", err)
	}
	// The store applies the filter; check again so that a store bug cannot
	// leak another tenant's company.
	out := cs[:0]
	for _, c := range cs {
		if canSee(p, c) {
			out = append(out, c)
		}
	}
	if out == nil {
		out = []Company{}
	}
	return out, nil
}

// Company returns one company as read by id (the get form): with its
// tax-authority password and certificate PIN opened for those who manage
// it (readsSecrets), without them (empty) for anyone else who may see it.
func (s *Service) Company(ctx context.Context, p Principal, id int64) (CompanyDetail, error) {
	c, err := s.companyFor(ctx, p, id)
	if err != nil {
		return CompanyDetail{}, err
	}
	if !s.readsSecrets(p, c) {
		return CompanyDetail{Company: c}, nil
	}
	return s.detail(c)
}

// VisibleCompany returns a company p may see, exactly as Company decides
// (another tenant's is ErrNotFound), as stored: its secrets stay sealed.
// It is for the calls about a company that answer none of its secrets
// (the connection test of A.14).
func (s *Service) VisibleCompany(ctx context.Context, p Principal, id int64) (Company, error) {
	c, err := s.companyFor(ctx, p, id)
	c.Ambiente = AmbienteFor(c, s.ambiente)
	return c, err
}

func (s *Service) detail(c Company) (CompanyDetail, error) {
	pass, err := s.sealer.Open(c.ID, PurposeHaciendaPassword, c.SealedContrasenaHacienda)
	if err != nil {
		return CompanyDetail{}, fmt.Errorf("company %d: open tax-authority password: %w", c.ID, err)
	}
	pin, err := s.sealer.Open(c.ID, PurposeCertificatePIN, c.SealedCertificatePIN)
	if err != nil {
		return CompanyDetail{}, fmt.Errorf("company %d: open certificate PIN: %w", c.ID, err)
	}
	return CompanyDetail{Company: c, ContrasenaHacienda: pass, CertificatePIN: pin, SecretsShown: true}, nil
}

// CompanySecrets are a company's opened secrets, for the code that signs
// and submits its documents.
type CompanySecrets struct {
	Certificate        Secret // the .p12 file
	CertificatePIN     Secret
	CertificateVersion int64
	CertificateExpiry  time.Time
	UsuarioHacienda    string
	ContrasenaHacienda Secret
}

// CompanySecrets opens a company's certificate, PIN and tax-authority
// password. It checks no principal: it is for the service's own pipeline,
// never for a request's caller.
func (s *Service) CompanySecrets(ctx context.Context, companyID int64) (CompanySecrets, error) {
	c, err := s.store.Company(ctx, companyID)
	if err != nil {
		return CompanySecrets{}, fmt.Errorf("company %d: %w", companyID, err)
	}
	out := CompanySecrets{
		CertificateVersion: c.CertificateVersion,
		CertificateExpiry:  c.CertificateExpiry,
		UsuarioHacienda:    c.UsuarioHacienda,
	}
	for _, x := range []struct {
		purpose string
		sealed  []byte
		dst     *Secret
	}{
		{PurposeCertificate, c.SealedCertificate, &out.Certificate},
		{PurposeCertificatePIN, c.SealedCertificatePIN, &out.CertificatePIN},
		{PurposeHaciendaPassword, c.SealedContrasenaHacienda, &out.ContrasenaHacienda},
	} {
		v, err := s.sealer.Open(c.ID, x.purpose, x.sealed)
		if err != nil {
			return CompanySecrets{}, fmt.Errorf("company %d: open %s: %w", c.ID, x.purpose, err)
		}
		*x.dst = v
	}
	return out, nil
}

// CreateCompany creates a company with its first branch (in.Sucursal,
// default 001) and that branch's API user, whose credentials are returned
// once. An admin's company has no owner; a reseller's is owned by the
// reseller. A branch user cannot create companies: it gets ErrNotFound,
// since the contract has no 403 and a branch user acts for one company only.
//
// When FacturacionElectronica is true the certificate, its PIN and the
// tax-authority user and password are required, because documents cannot be
// signed or submitted without them.
func (s *Service) CreateCompany(ctx context.Context, p Principal, in CompanyInput) (CreatedCompany, error) {
	var owner int64
	switch p.Role {
	case RoleAdmin:
	case RoleReseller:
		if p.UserID == 0 {
			return CreatedCompany{}, ErrNotFound
		}
		owner = p.UserID
	default:
		return CreatedCompany{}, ErrNotFound
	}

	e := normCompany(&in, true)
	var cuota *int64
	if in.CuotaMensual != nil {
		cuota = parseCuota(e, *in.CuotaMensual) // only admins and resellers create companies
	}
	if in.FacturacionElectronica {
		if len(in.Certificate) == 0 && !e.Has("Certificado") {
			e.Add("Certificado", msg.RequiredWithFE.With())
		}
		if in.UsuarioHacienda == "" {
			e.Add("UsuarioHacienda", msg.RequiredWithFE.With())
		}
		if len(in.ContrasenaHacienda) == 0 {
			e.Add("ContrasenaHacienda", msg.RequiredWithFE.With())
		}
	}
	var expiry time.Time
	if len(in.Certificate) > 0 && !e.Has("Certificado") && !e.Has("Clave") {
		var err error
		if expiry, err = s.checkCertificate(ctx, e, in.Certificate, in.CertificatePIN, s.identificationToMatch(e, in)); err != nil {
			return CreatedCompany{}, err
		}
	}
	if err := e.orNil(); err != nil {
		return CreatedCompany{}, err
	}

	id, err := s.store.NextCompanyID(ctx)
	if err != nil {
		return CreatedCompany{}, fmt.Errorf("create company: %w", err)
	}
	c := Company{ID: id, OwnerID: owner, Ambiente: s.ambiente, CuotaMensual: cuota}
	applyCompanyInput(&c, in)
	c.Activo = flag(in.Activo)
	if err := s.sealCompanySecrets(&c, in, expiry); err != nil {
		return CreatedCompany{}, err
	}
	if len(c.SealedCertificate) > 0 {
		c.CertificateVersion = 1 // the first upload; later ones are stepped by the store
	}

	b := Branch{
		CompanyID:         id,
		Sucursal:          in.Sucursal,
		RazonComercial:    in.RazonComercial,
		Provincia:         in.Provincia,
		Canton:            in.Canton,
		Distrito:          in.Distrito,
		Barrio:            in.Barrio,
		OtrasSenas:        in.OtrasSenas,
		CodPais:           in.CodPais,
		Telefono:          in.Telefono,
		Fax:               in.Fax,
		CorreoElectronico: in.CorreoElectronico,
		MonedaLocal:       in.MonedaLocal,
		MonedaExtranjera:  in.MonedaExtranjera,
		Activo:            true,
	}
	u, creds, err := s.newUser("", RoleBranch, in.Identificacion, in.Sucursal)
	if err != nil {
		return CreatedCompany{}, err
	}
	if err := s.store.CreateCompany(ctx, &c, &b, &u); err != nil {
		return CreatedCompany{}, fmt.Errorf("create company: %w", err)
	}
	// The store sets the timestamps; read the company back as stored.
	if stored, err := s.store.Company(ctx, id); err == nil {
		c = stored
	}
	if len(c.SealedCertificate) > 0 {
		s.announceCertificate(ctx, c)
	}
	// The secrets just sent are not handed back: the caller has them, and
	// an answer is one more place for them to be kept (decision 162).
	return CreatedCompany{Company: c, Branch: b, Credentials: creds}, nil
}

// identificationToMatch is the company identification a certificate must
// carry, or "" when the identification itself is invalid (then it is
// reported on its own field and the certificate is only opened).
func (s *Service) identificationToMatch(e *ValidationError, in CompanyInput) string {
	if e.Has("Identificacion") || e.Has("TipoIdentificacion") {
		return ""
	}
	return in.Identificacion
}

// UpdateCompany replaces a company's details (a full replace). Secrets
// follow "sent replaces, absent keeps": a new Certificado (with its Clave)
// replaces the stored certificate and PIN and the store steps
// CertificateVersion in the same write (racing uploads, on any replica, each
// get their own version); an update without one keeps the stored
// certificate even if another request replaced it meanwhile; an
// empty ContrasenaHacienda keeps the stored password; a Clave without a
// Certificado is refused (a PIN belongs to its file), except the stored
// PIN sent again by a caller who reads it (readsSecrets). A ValidacionesRegistro
// not sent keeps the stored one (sent empty, it clears it), and so do a
// CorreoNotificaciones and NotasImpresas; a Logo sent replaces the stored
// one, QuitarLogo removes it, and neither keeps it. A CuotaMensual is
// taken only from an admin or the owning reseller (managesCompany); anyone
// else's is ignored. A different
// Ambiente is a move (checkMove). An empty Activo keeps the current state;
// setting it to N drops the cached credentials of every user of the
// company. It returns the company as stored, its secrets sealed.
func (s *Service) UpdateCompany(ctx context.Context, p Principal, id int64, in CompanyInput) (Company, error) {
	c, err := s.companyFor(ctx, p, id)
	if err != nil {
		return Company{}, err
	}
	e := normCompany(&in, false)
	cuota, setCuota := c.CuotaMensual, in.CuotaMensual != nil && managesCompany(p, c.OwnerID)
	if setCuota {
		cuota = parseCuota(e, *in.CuotaMensual)
	}
	newCert := len(in.Certificate) > 0
	newCredentials := in.UsuarioHacienda != c.UsuarioHacienda || len(in.ContrasenaHacienda) > 0
	idChanged := in.Identificacion != c.NumeroIdentificacion || in.TipoIdentificacion != c.TipoIdentificacion
	hasCert := len(c.SealedCertificate) > 0
	if !newCert && !e.Has("Certificado") {
		switch {
		case hasCert && idChanged && !e.Has("Identificacion"):
			e.Add("Certificado", msg.CertificateNewID.With(c.NumeroIdentificacion))
		case !hasCert && in.FacturacionElectronica:
			e.Add("Certificado", msg.RequiredWithFE.With())
		}
	}
	if in.FacturacionElectronica {
		if in.UsuarioHacienda == "" {
			e.Add("UsuarioHacienda", msg.RequiredWithFE.With())
		}
		if len(in.ContrasenaHacienda) == 0 && len(c.SealedContrasenaHacienda) == 0 {
			e.Add("ContrasenaHacienda", msg.RequiredWithFE.With())
		}
	}
	if !newCert && len(in.CertificatePIN) > 0 && !e.Has("Clave") {
		// A PIN opens one certificate: a new one without its certificate
		// would be dropped (the stored certificate keeps its own PIN).
		// The stored PIN sent again, as a full-replace client does, is
		// fine for a caller who reads it (readsSecrets). Anyone else is
		// refused whatever the value: were the stored PIN accepted, the
		// answer would tell whether a guess is the PIN (decision 163).
		switch {
		case !s.readsSecrets(p, c):
			e.Add("Clave", msg.PINOnlyWithCertificate.With())
		case !s.samePIN(c, in.CertificatePIN):
			e.Add("Clave", msg.PINWithoutCertificate.With())
		}
	}
	var expiry time.Time
	if newCert && !e.Has("Certificado") && !e.Has("Clave") {
		var err error
		if expiry, err = s.checkCertificate(ctx, e, in.Certificate, in.CertificatePIN, s.identificationToMatch(e, in)); err != nil {
			return Company{}, err
		}
	}
	if in.Ambiente != nil && !e.Has(FieldAmbiente) {
		if err := s.checkMove(ctx, e, c, *in.Ambiente, newCert, len(in.ContrasenaHacienda) > 0); err != nil {
			return Company{}, err
		}
	}
	if err := e.orNil(); err != nil {
		return Company{}, err
	}

	wasActive := c.Activo
	c.Ambiente = AmbienteFor(c, s.ambiente)
	from := c.Ambiente
	c.CuotaMensual = cuota
	applyCompanyInput(&c, in)
	if in.Activo != "" {
		c.Activo = flag(in.Activo)
	}
	if !newCert {
		in.Certificate, in.CertificatePIN = nil, nil
	}
	if err := s.sealCompanySecrets(&c, in, expiry); err != nil {
		return Company{}, err
	}
	if err := s.store.UpdateCompany(ctx, &c, newCert); err != nil {
		return Company{}, fmt.Errorf("update company %d: %w", id, err)
	}
	if wasActive && !c.Activo {
		if err := s.forgetCompanyUsers(ctx, c.ID, 0); err != nil {
			return Company{}, fmt.Errorf("deactivate company %d: %w", id, err)
		}
	}
	if c.Ambiente != from {
		s.resetSequences(ctx, c.ID, c.Ambiente)
	}
	if newCredentials {
		s.resumeOnNewCredentials(ctx, c.ID)
	}
	if newCert {
		s.announceCertificate(ctx, c)
	}
	// The store read the stored row back into c. Its secrets are not
	// opened: an update's answer never carries them (decision 162).
	return c, nil
}

// applyCompanyInput copies the plain fields of a checked request.
func applyCompanyInput(c *Company, in CompanyInput) {
	c.TipoIdentificacion = in.TipoIdentificacion
	c.NumeroIdentificacion = in.Identificacion
	c.RazonSocial = in.RazonSocial
	c.ActividadComercial = in.ActividadComercial
	c.TipoCliente = in.TipoCliente
	c.RazonComercial = in.RazonComercial
	c.Provincia = in.Provincia
	c.Canton = in.Canton
	c.Distrito = in.Distrito
	c.Barrio = in.Barrio
	c.OtrasSenas = in.OtrasSenas
	c.CodPais = in.CodPais
	c.Telefono = in.Telefono
	c.Fax = in.Fax
	c.CorreoElectronico = in.CorreoElectronico
	c.MonedaLocal = in.MonedaLocal
	c.MonedaExtranjera = in.MonedaExtranjera
	c.FacturacionElectronica = in.FacturacionElectronica
	c.UsuarioHacienda = in.UsuarioHacienda
	if in.ValidacionesRegistro != nil {
		c.ValidacionesRegistro = *in.ValidacionesRegistro
	}
	if in.Ambiente != nil && *in.Ambiente != "" {
		c.Ambiente = *in.Ambiente
	}
	if in.CorreoNotificaciones != nil {
		c.CorreoNotificaciones = *in.CorreoNotificaciones
	}
	applyPrint(c, in)
}

// sealCompanySecrets seals the secrets sent in a request into c: the
// password when sent, the certificate and PIN when a certificate was sent
// (recording expiry; the store steps the version).
func (s *Service) sealCompanySecrets(c *Company, in CompanyInput, expiry time.Time) error {
	if len(in.ContrasenaHacienda) > 0 {
		v, err := s.sealer.Seal(c.ID, PurposeHaciendaPassword, in.ContrasenaHacienda)
		if err != nil {
			return fmt.Errorf("seal tax-authority password: %w", err)
		}
		c.SealedContrasenaHacienda = v
	}
	if len(in.Certificate) > 0 {
		cert, err := s.sealer.Seal(c.ID, PurposeCertificate, in.Certificate)
		if err != nil {
			return fmt.Errorf("seal certificate: %w", err)
		}
		pin, err := s.sealer.Seal(c.ID, PurposeCertificatePIN, in.CertificatePIN)
		if err != nil {
			return fmt.Errorf("seal certificate PIN: %w", err)
		}
		c.SealedCertificate, c.SealedCertificatePIN = cert, pin
		c.CertificateExpiry = expiry
	}
	return nil
}

// samePIN reports whether pin is the company's stored certificate PIN.
func (s *Service) samePIN(c Company, pin Secret) bool {
	if len(c.SealedCertificatePIN) == 0 {
		return false
	}
	stored, err := s.sealer.Open(c.ID, PurposeCertificatePIN, c.SealedCertificatePIN)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(stored, pin) == 1
}

// resumeOnNewCredentials makes the company's documents stopped on refused
// tax-authority credentials due at once: the credentials just sent are
// tried now rather than at the next slow probe. The update stands even
// should this fail (the probes still come); the failure is logged.
func (s *Service) resumeOnNewCredentials(ctx context.Context, companyID int64) {
	cs, ok := s.store.(CredentialStopStore)
	if !ok {
		return
	}
	n, err := cs.ResumeCredentialStop(ctx, companyID, s.now())
	switch {
	case err != nil:
		s.log.ErrorContext(ctx, "resume documents stopped on credentials after a credentials update", "company", companyID, "err", err)
	case n > 0:
		s.log.InfoContext(ctx, "tax-authority credentials updated; stopped documents resumed", "company", companyID, "documents", n)
	}
}
