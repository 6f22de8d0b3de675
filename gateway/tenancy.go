package gateway

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"

	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/tenant"
)

// The tenancy routes of A.2–A.4 and the reseller call. Path parameter names
// are the router's; error bodies use the contract's names for them.
const (
	pathResellers   = "/api/resellers/v4"
	pathCompanies   = "/api/companies/v4"
	pathCompany     = "/api/companies/{companyId}/v4"
	pathBranches    = "/api/companies/{companyId}/branches/v4"
	pathBranch      = "/api/companies/{companyId}/branches/{branchId}/v4"
	pathBranchUsers = "/api/companies/{companyId}/branches/{branchId}/users/v4"
	pathBranchUser  = "/api/companies/{companyId}/branches/{branchId}/users/{userId}/v4"
	pathUserToken   = "/api/companies/{companyId}/branches/{branchId}/users/{userId}/token/v4"
	paramUserID     = "userId"
	paramCompanyID  = "companyId"
	paramBranchID   = "branchId"
	paramWebhookID  = "webhookId"
)

// tenancyRoutes are the calls of A.2–A.4, the reseller call and the API
// users' listing, update and token rotation, served over Options.Tenants.
func (s *Server) tenancyRoutes() []Route {
	mp := s.o.MaxMultipartBody
	return []Route{
		{Method: http.MethodPost, Path: pathResellers, Handle: s.createReseller, shape: credentialsShape, Audit: tenant.AuditResellerCreate},
		{Method: http.MethodGet, Path: pathCompanies, MaxBody: noBodyLimit, Handle: s.searchCompanies},
		{Method: http.MethodPost, Path: pathCompanies, MaxMultipart: mp, Handle: s.createCompany, shape: createCompanyShape, Audit: tenant.AuditCompanyCreate},
		{Method: http.MethodGet, Path: pathCompany, MaxBody: noBodyLimit, Handle: s.getCompany},
		{Method: http.MethodPut, Path: pathCompany, MaxMultipart: mp, Handle: s.updateCompany, shape: s.updateCompanyShape, Audit: tenant.AuditCompanyUpdate},
		{Method: http.MethodGet, Path: pathBranches, MaxBody: noBodyLimit, Handle: s.listBranches},
		// POST and PUT on the branches path take a multipart company form
		// too (A.2's second published path); a company created there is
		// recorded as compania.crear.
		{Method: http.MethodPost, Path: pathBranches, MaxMultipart: mp, Handle: s.createBranchOrCompany, Audit: tenant.AuditBranchCreate, shape: func(c *call) {
			if isMultipart(c.rc.Request.Header.ContentType()) {
				createCompanyShape(c)
				return
			}
			createBranchShape(c)
		}},
		{Method: http.MethodPut, Path: pathBranches, MaxMultipart: mp, Handle: s.updateCompanyOnBranches, shape: s.updateCompanyShape, Audit: tenant.AuditCompanyUpdate},
		{Method: http.MethodPut, Path: pathBranch, Handle: s.updateBranch, shape: updateBranchShape, Audit: tenant.AuditBranchUpdate},
		{Method: http.MethodPost, Path: pathBranchUsers, Handle: s.createAPIUser, shape: credentialsShape, Audit: tenant.AuditUserCreate},
		{Method: http.MethodGet, Path: pathBranchUsers, MaxBody: noBodyLimit, Handle: s.listAPIUsers},
		{Method: http.MethodPut, Path: pathBranchUser, Handle: s.updateAPIUser, shape: apiUserShape, Audit: tenant.AuditUserUpdate},
		{Method: http.MethodPost, Path: pathUserToken, Handle: s.rotateAPIToken, shape: credentialsShape, Audit: tenant.AuditTokenRotate},
	}
}

// The shapes of the calls that answer with a message field (A.6): the body
// of their 500, and the field a conflict is about. They are set before
// authentication, so that every 500 of these calls has the call's form.

func apiUserShape(c *call) {
	c.a6 = func(code, text string) any { return api.APIUser{MensajeAPI: text, MensajeAPIKey: code} }
}

func credentialsShape(c *call) {
	c.a6 = func(code, text string) any { return api.Credentials{MensajeAPI: text, MensajeAPIKey: code} }
	c.conflictField, c.conflictMsg = "usuario", msg.ConflictUsuario
}

func createCompanyShape(c *call) {
	c.a6 = func(code, text string) any {
		a := newCreateCompanyAnswer(tenant.CreatedCompany{})
		a.MensajeAPI, a.MensajeAPIKey = text, code
		return a
	}
	c.conflictField, c.conflictMsg = "Identificacion", msg.ConflictCompany
}

func (s *Server) updateCompanyShape(c *call) {
	c.a6 = func(code, text string) any {
		return api.UpdatedCompany{CompanyDetail: newCompanyDetailAnswer(tenant.CompanyDetail{}, s.o.Now()), MensajeAPI: text, MensajeAPIKey: code}
	}
	c.conflictField, c.conflictMsg = "Identificacion", msg.ConflictCompany
}

func createBranchShape(c *call) {
	c.a6 = func(code, text string) any {
		return api.CreatedBranch{Branch: newBranchAnswer(tenant.Branch{}), MensajeAPI: text, MensajeAPIKey: code}
	}
	c.conflictField, c.conflictMsg = "sucursal", msg.ConflictBranch
}

func updateBranchShape(c *call) {
	c.a6 = func(code, text string) any {
		return api.UpdatedBranch{Branch: newBranchAnswer(tenant.Branch{}), MensajeAPI: text, MensajeAPIKey: code}
	}
	c.conflictField, c.conflictMsg = "sucursal", msg.ConflictBranch
}

// pathID reads a positive integer path parameter; field is the contract's
// name for it in a 400.
func (r *Request) pathID(param, field string) (int64, error) {
	v := r.Params[param]
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, invalid(field, msg.PositiveInt.With())
	}
	return id, nil
}

func (s *Server) createReseller(ctx context.Context, r *Request) (Reply, error) {
	username, err := usernameBody(r.Body)
	if err != nil {
		return Reply{}, err
	}
	cr, err := s.o.Tenants.CreateReseller(ctx, r.Principal, username)
	if err != nil {
		return Reply{}, err
	}
	r.Changed(0, "") // a reseller is the platform's, of no company
	return Reply{JSON: newCredentialsAnswer(cr)}, nil
}

// usernameBody reads {"usuario": "..."}. A missing or blank name comes back
// empty, for the service to refuse on usuario once it has checked access.
func usernameBody(body []byte) (string, error) {
	in, err := api.DecodeUserRequest(body)
	if err != nil {
		return "", err
	}
	u := in.Usuario
	if len(bytes.TrimSpace([]byte(u))) == 0 {
		// Missing: the service says so on usuario, after it has checked
		// that the caller may act on the branch (another tenant's branch
		// is a 404 whatever the body holds).
		return "", nil
	}
	return u, nil
}

func (s *Server) searchCompanies(ctx context.Context, r *Request) (Reply, error) {
	var name string
	if vs := queryValues(r.Query, "Name"); len(vs) > 0 {
		name = vs[len(vs)-1]
	}
	cs, err := s.o.Tenants.SearchCompanies(ctx, r.Principal, name)
	if err != nil {
		return Reply{}, err
	}
	now := s.o.Now()
	out := make([]api.Company, 0, len(cs))
	for _, co := range cs {
		out = append(out, newCompanyAnswer(co, now))
	}
	return Reply{JSON: out}, nil
}

func (s *Server) getCompany(ctx context.Context, r *Request) (Reply, error) {
	id, err := r.pathID(paramCompanyID, "id")
	if err != nil {
		return Reply{}, err
	}
	d, err := s.o.Tenants.Company(ctx, r.Principal, id)
	if err != nil {
		return Reply{}, err
	}
	return Reply{JSON: newCompanyDetailAnswer(d, s.o.Now())}, nil
}

func (s *Server) createCompany(ctx context.Context, r *Request) (Reply, error) {
	in, err := r.companyInput()
	if err != nil {
		return Reply{}, err
	}
	cc, err := s.o.Tenants.CreateCompany(ctx, r.Principal, in)
	if err != nil {
		return Reply{}, err
	}
	r.Changed(cc.ID, tenant.AuditCompanyCreate)
	return Reply{JSON: newCreateCompanyAnswer(cc)}, nil
}

func (s *Server) updateCompany(ctx context.Context, r *Request) (Reply, error) {
	return s.updateCompanyAt(ctx, r, "id")
}

func (s *Server) updateCompanyAt(ctx context.Context, r *Request, idField string) (Reply, error) {
	id, err := r.pathID(paramCompanyID, idField)
	if err != nil {
		return Reply{}, err
	}
	in, err := r.companyInput()
	if err != nil {
		return Reply{}, err
	}
	c, err := s.o.Tenants.UpdateCompany(ctx, r.Principal, id, in)
	if err != nil {
		return Reply{}, err
	}
	// The get form without the secrets, whoever the caller: an update's
	// answer never carries them (decision 162).
	return Reply{JSON: api.UpdatedCompany{CompanyDetail: newCompanyDetailAnswer(tenant.CompanyDetail{Company: c}, s.o.Now())}}, nil
}

// companyInput decodes the company form (A.2), multipart or URL-encoded,
// field names matched without regard to case.
func (r *Request) companyInput() (tenant.CompanyInput, error) {
	f, err := api.DecodeCompanyForm(r.ContentType, r.Body)
	if err != nil {
		return tenant.CompanyInput{}, err
	}
	return tenant.CompanyInput{
		TipoIdentificacion:     f.TipoIdentificacion,
		Identificacion:         f.Identificacion,
		RazonSocial:            f.RazonSocial,
		ActividadComercial:     f.ActividadComercial,
		UsuarioHacienda:        f.UsuarioHacienda,
		ContrasenaHacienda:     secret(f.ContrasenaHacienda),
		TipoCliente:            f.TipoCliente,
		RazonComercial:         f.RazonComercial,
		Provincia:              f.Provincia,
		Canton:                 f.Canton,
		Distrito:               f.Distrito,
		Barrio:                 f.Barrio,
		OtrasSenas:             f.OtrasSenas,
		CodPais:                f.CodPais,
		Telefono:               f.Telefono,
		Fax:                    f.Fax,
		CorreoElectronico:      f.CorreoElectronico,
		Sucursal:               f.Sucursal,
		MonedaLocal:            f.MonedaLocal,
		MonedaExtranjera:       f.MonedaExtranjera,
		FacturacionElectronica: f.FacturacionElectronica,
		Activo:                 f.Activo,
		Certificate:            f.Certificado,
		CertificatePIN:         secret(f.Clave),
		ValidacionesRegistro:   f.ValidacionesRegistro,
		Ambiente:               f.Ambiente,
		CuotaMensual:           f.CuotaMensual,
		CorreoNotificaciones:   f.CorreoNotificaciones,
		NotasImpresas:          f.NotasImpresas,
		Logo:                   f.Logo,
		QuitarLogo:             f.QuitarLogo == "S",
	}, nil
}

func secret(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

func isURLEncoded(ct string) bool {
	const ue = "application/x-www-form-urlencoded"
	return len(ct) >= len(ue) && strings.EqualFold(ct[:len(ue)], ue)
}

func (s *Server) listBranches(ctx context.Context, r *Request) (Reply, error) {
	id, err := r.pathID(paramCompanyID, "CompaniaId")
	if err != nil {
		return Reply{}, err
	}
	bs, err := s.o.Tenants.Branches(ctx, r.Principal, id)
	if err != nil {
		return Reply{}, err
	}
	out := make([]api.Branch, 0, len(bs))
	for _, b := range bs {
		out = append(out, newBranchAnswer(b))
	}
	return Reply{JSON: out}, nil
}

// createBranchOrCompany is POST on the branches path: a multipart body is a
// company create (the path's id is not used), anything else a branch create.
func (s *Server) createBranchOrCompany(ctx context.Context, r *Request) (Reply, error) {
	if isMultipart(r.ContentType) {
		return s.createCompany(ctx, r)
	}
	return s.createBranch(ctx, r)
}

// updateCompanyOnBranches is PUT on the branches path: only a multipart
// company update is published there.
func (s *Server) updateCompanyOnBranches(ctx context.Context, r *Request) (Reply, error) {
	ct := r.ContentType
	if !isMultipart(ct) && !isURLEncoded(ct) {
		return Reply{}, invalid("body", msg.UpdateNeedsForm.With())
	}
	return s.updateCompanyAt(ctx, r, "CompaniaId")
}

func (s *Server) createBranch(ctx context.Context, r *Request) (Reply, error) {
	companyID, err := r.pathID(paramCompanyID, "CompaniaId")
	if err != nil {
		return Reply{}, err
	}
	in, err := branchInput(r.Body)
	if err != nil {
		return Reply{}, err
	}
	b, cr, err := s.o.Tenants.CreateBranch(ctx, r.Principal, companyID, in)
	if err != nil {
		return Reply{}, err
	}
	return Reply{JSON: api.CreatedBranch{
		Branch:     newBranchAnswer(b),
		Usuario:    cr.Usuario,
		Contrasena: cr.Contrasena,
		APIToken:   cr.APIToken,
	}}, nil
}

func (s *Server) updateBranch(ctx context.Context, r *Request) (Reply, error) {
	companyID, err := r.pathID(paramCompanyID, "CompaniaId")
	if err != nil {
		return Reply{}, err
	}
	branchID, err := r.pathID(paramBranchID, "Id")
	if err != nil {
		return Reply{}, err
	}
	in, err := branchInput(r.Body)
	if err != nil {
		return Reply{}, err
	}
	b, err := s.o.Tenants.UpdateBranch(ctx, r.Principal, companyID, branchID, in)
	if err != nil {
		return Reply{}, err
	}
	return Reply{JSON: api.UpdatedBranch{Branch: newBranchAnswer(b)}}, nil
}

// branchInput decodes a branch's JSON body (A.3), names matched without
// regard to case, with the published alternate spellings.
func branchInput(body []byte) (tenant.BranchInput, error) {
	in, err := api.DecodeBranchInput(body)
	return tenant.BranchInput(in), err
}

func (s *Server) createAPIUser(ctx context.Context, r *Request) (Reply, error) {
	companyID, err := r.pathID(paramCompanyID, "companiaId")
	if err != nil {
		return Reply{}, err
	}
	branchID, err := r.pathID(paramBranchID, "branchId")
	if err != nil {
		return Reply{}, err
	}
	username, err := usernameBody(r.Body)
	if err != nil {
		return Reply{}, err
	}
	cr, err := s.o.Tenants.CreateAPIUser(ctx, r.Principal, companyID, branchID, username)
	if err != nil {
		return Reply{}, err
	}
	return Reply{JSON: newCredentialsAnswer(cr)}, nil
}

// userPath reads the company, branch and user ids of a user route.
func (r *Request) userPath(withUser bool) (companyID, branchID, userID int64, err error) {
	if companyID, err = r.pathID(paramCompanyID, "companiaId"); err != nil {
		return
	}
	if branchID, err = r.pathID(paramBranchID, "branchId"); err != nil {
		return
	}
	if withUser {
		userID, err = r.pathID(paramUserID, "userId")
	}
	return
}

func (s *Server) listAPIUsers(ctx context.Context, r *Request) (Reply, error) {
	companyID, branchID, _, err := r.userPath(false)
	if err != nil {
		return Reply{}, err
	}
	users, err := s.o.Tenants.BranchUsers(ctx, r.Principal, companyID, branchID)
	if err != nil {
		return Reply{}, err
	}
	out := make([]api.APIUser, 0, len(users))
	for _, u := range users {
		out = append(out, newAPIUserAnswer(u))
	}
	return Reply{JSON: out}, nil
}

// updateAPIUser switches a user on or off: {"activo": "S" | "N"}.
func (s *Server) updateAPIUser(ctx context.Context, r *Request) (Reply, error) {
	companyID, branchID, userID, err := r.userPath(true)
	if err != nil {
		return Reply{}, err
	}
	in, err := api.DecodeAPIUserUpdate(r.Body)
	if err != nil {
		return Reply{}, err
	}
	if in.Activo == "" {
		return Reply{}, invalid("activo", msg.RequiredSN.With())
	}
	u, err := s.o.Tenants.SetBranchUserActive(ctx, r.Principal, companyID, branchID, userID, in.Activo == "S")
	if err != nil {
		return Reply{}, err
	}
	a := newAPIUserAnswer(u)
	return Reply{JSON: a}, nil
}

// rotateAPIToken gives a user a new token, shown once in the answer.
func (s *Server) rotateAPIToken(ctx context.Context, r *Request) (Reply, error) {
	companyID, branchID, userID, err := r.userPath(true)
	if err != nil {
		return Reply{}, err
	}
	cr, err := s.o.Tenants.RotateAPIToken(ctx, r.Principal, companyID, branchID, userID)
	if err != nil {
		return Reply{}, err
	}
	return Reply{JSON: newCredentialsAnswer(cr)}, nil
}
