package client

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
)

// Credentials are an API user's: shown in clear only in the answer of the
// call that created them (or rotated the token), stored by the service
// only as hashes. It is the answer of the create-user call (A.4).
type Credentials struct {
	Usuario    string `json:"usuario"`
	Contrasena string `json:"contrasena"`
	APIToken   string `json:"apiToken"`
	// MensajeAPI is empty on success.
	MensajeAPI string `json:"mensaje_api"`
}

// Company is a company as searched (A.2, search form). Dates are the
// contract's local date-times ("0001-01-01T00:00:00" is not set).
type Company struct {
	ID                     int64  `json:"id"`
	TipoIdentificacion     string `json:"tipoIdentificacion"`
	NumeroIdentificacion   string `json:"numeroIdentificacion"`
	RazonSocial            string `json:"razonSocial"`
	TipoCliente            string `json:"tipoCliente"`
	Activo                 string `json:"activo"`
	FacturacionElectronica bool   `json:"facturacionElectronica"`
	CreatedAt              string `json:"createdAt"`
	UpdatedAt              string `json:"updatedAt"`
	CertificadoVencido     bool   `json:"certificadoVencido"`
	ExpiracionCertificado  string `json:"expiracionCertificado"`
}

// CompanyDetail is a company as read by id (A.2, get form): the search
// form, the tax-authority credentials and certificate PIN, and the other
// details a full-replace update needs.
type CompanyDetail struct {
	Company
	UsuarioHacienda    string `json:"usuarioHacienda"`
	ContrasenaHacienda string `json:"contrasenaHacienda"`
	// Clave is the certificate's PIN.
	Clave              string `json:"clave"`
	ActividadComercial string `json:"actividadComercial"`
	RazonComercial     string `json:"razonComercial"`
	Provincia          string `json:"provincia"`
	Canton             string `json:"canton"`
	Distrito           string `json:"distrito"`
	Barrio             string `json:"barrio"`
	OtrasSenas         string `json:"otrasSenas"`
	CodPais            string `json:"codPais"`
	Telefono           string `json:"telefono"`
	Fax                string `json:"fax"`
	CorreoElectronico  string `json:"correoElectronico"`
	MonedaLocal        string `json:"monedaLocal"`
	MonedaExtranjera   string `json:"monedaExtranjera"`
}

// UpdatedCompany is the answer of a company update (UpdateCompanyResponse).
type UpdatedCompany struct {
	CompanyDetail
	MensajeAPI string `json:"mensajeApi"`
}

// CreatedCompany is the answer of a company create
// (CreateCompanyResponse): the company, its first branch and that
// branch's first API user, whose credentials are shown only here.
type CreatedCompany struct {
	CompaniaID             int64  `json:"companiaId"`
	SucursalID             int64  `json:"sucursalId"`
	TipoIdentificacion     string `json:"tipoIdentificacion"`
	NumeroIdentificacion   string `json:"numeroIdentificacion"`
	TipoCliente            string `json:"tipoCliente"`
	UsuarioHacienda        string `json:"usuarioHacienda"`
	ContrasenaHacienda     string `json:"contrasenaHacienda"`
	Activo                 string `json:"activo"`
	Clave                  string `json:"clave"`
	RazonSocial            string `json:"razonSocial"`
	RazonComercial         string `json:"razonComercial"`
	Provincia              string `json:"provincia"`
	Canton                 string `json:"canton"`
	Distrito               string `json:"distrito"`
	Barrio                 string `json:"barrio"`
	OtrasSenas             string `json:"otrasSenas"`
	CodPais                string `json:"codPais"`
	Telefono               string `json:"telefono"`
	Fax                    string `json:"fax"`
	CorreoElectronico      string `json:"correoElectronico"`
	Sucursal               string `json:"sucursal"`
	MonedaExtranjera       string `json:"monedaExtranjera"`
	FacturacionElectronica bool   `json:"facturacionElectronica"`
	Usuario                string `json:"usuario"`
	Contrasena             string `json:"contrasena"`
	APIToken               string `json:"apiToken"`
	MensajeAPI             string `json:"mensajeApi"`
}

// Credentials returns the first API user's credentials.
func (c CreatedCompany) Credentials() Credentials {
	return Credentials{Usuario: c.Usuario, Contrasena: c.Contrasena, APIToken: c.APIToken}
}

// CompanyForm is the multipart form of a company create or update (A.2).
// Empty fields are not sent (the service applies its defaults on create:
// Sucursal 001, MonedaLocal CRC, MonedaExtranjera USD). An update is a full
// replace: send every detail, starting from a GetCompany.
type CompanyForm struct {
	// TipoIdentificacion is 01 physical person, 02 legal entity, 03 DIMEX,
	// 04 NITE.
	TipoIdentificacion     string
	Identificacion         string
	RazonSocial            string
	ActividadComercial     string
	UsuarioHacienda        string
	ContrasenaHacienda     string
	TipoCliente            string
	RazonComercial         string
	Provincia              string
	Canton                 string
	Distrito               string
	Barrio                 string
	OtrasSenas             string
	CodPais                string
	Telefono               string
	Fax                    string
	CorreoElectronico      string
	Sucursal               string
	MonedaLocal            string
	MonedaExtranjera       string
	FacturacionElectronica bool
	// Activo is "S" or "N"; empty leaves the service's default.
	Activo string
	// Certificado is the company's .p12/.pfx; nil sends none (on update:
	// keeps the current one).
	Certificado []byte
	// CertificadoNombre is the uploaded file's name (default
	// "certificado.p12").
	CertificadoNombre string
	// Clave is the certificate's PIN.
	Clave string
}

// encode writes the form as multipart/form-data.
func (f CompanyForm) encode() (contentType string, body []byte, err error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fields := [][2]string{
		{"TipoIdentificacion", f.TipoIdentificacion}, {"Identificacion", f.Identificacion},
		{"RazonSocial", f.RazonSocial}, {"ActividadComercial", f.ActividadComercial},
		{"UsuarioHacienda", f.UsuarioHacienda}, {"ContrasenaHacienda", f.ContrasenaHacienda},
		{"TipoCliente", f.TipoCliente}, {"RazonComercial", f.RazonComercial},
		{"Provincia", f.Provincia}, {"Canton", f.Canton}, {"Distrito", f.Distrito}, {"Barrio", f.Barrio},
		{"OtrasSenas", f.OtrasSenas}, {"CodPais", f.CodPais}, {"Telefono", f.Telefono}, {"Fax", f.Fax},
		{"CorreoElectronico", f.CorreoElectronico}, {"Sucursal", f.Sucursal},
		{"MonedaLocal", f.MonedaLocal}, {"MonedaExtranjera", f.MonedaExtranjera},
		{"FacturacionElectronica", strconv.FormatBool(f.FacturacionElectronica)},
		{"Activo", f.Activo}, {"Clave", f.Clave},
	}
	for _, kv := range fields {
		if kv[1] == "" {
			continue
		}
		if err := w.WriteField(kv[0], kv[1]); err != nil {
			return "", nil, err
		}
	}
	if f.Certificado != nil {
		name := f.CertificadoNombre
		if name == "" {
			name = "certificado.p12"
		}
		fw, err := w.CreateFormFile("Certificado", name)
		if err != nil {
			return "", nil, err
		}
		if _, err := fw.Write(f.Certificado); err != nil {
			return "", nil, err
		}
	}
	if err := w.Close(); err != nil {
		return "", nil, err
	}
	return w.FormDataContentType(), buf.Bytes(), nil
}

func companyPath(id int64) string { return "/api/companies/" + strconv.FormatInt(id, 10) }

// SearchCompanies lists the companies whose name contains name (empty:
// all), at most 100, among those the caller may see.
func (c *Client) SearchCompanies(ctx context.Context, name string) ([]Company, error) {
	var out []Company
	err := c.callJSON(ctx, request{method: http.MethodGet, path: "/api/companies/v4?Name=" + url.QueryEscape(name), safe: true}, &out)
	return out, err
}

// GetCompany reads a company with its secrets (A.2, get form).
func (c *Client) GetCompany(ctx context.Context, id int64) (*CompanyDetail, error) {
	var out CompanyDetail
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: companyPath(id) + "/v4", safe: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateCompany creates a company with its first branch and API user (an
// admin or a reseller only). A connection failure is not retried: a
// second create would be refused as a duplicate Identificacion and the
// first one's credentials would be lost; search for the company instead.
func (c *Client) CreateCompany(ctx context.Context, f CompanyForm) (*CreatedCompany, error) {
	ct, body, err := f.encode()
	if err != nil {
		return nil, fmt.Errorf("facturad: create company: encode the form: %w", err)
	}
	var out CreatedCompany
	if err := c.callJSON(ctx, request{method: http.MethodPost, path: "/api/companies/v4", contentType: ct, body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateCompany replaces a company's details (a full replace: send them
// all); a form with a Certificado replaces the certificate.
func (c *Client) UpdateCompany(ctx context.Context, id int64, f CompanyForm) (*UpdatedCompany, error) {
	ct, body, err := f.encode()
	if err != nil {
		return nil, fmt.Errorf("facturad: update company: encode the form: %w", err)
	}
	var out UpdatedCompany
	if err := c.callJSON(ctx, request{method: http.MethodPut, path: companyPath(id) + "/v4", contentType: ct, body: body, safe: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Branch is a company's branch (A.3).
type Branch struct {
	ID                  int64  `json:"id"`
	CompaniaID          int64  `json:"companiaId"`
	RazonComercial      string `json:"razonComercial"`
	Provincia           string `json:"provincia"`
	Canton              string `json:"canton"`
	Distrito            string `json:"distrito"`
	Barrio              string `json:"barrio"`
	OtrasSenas          string `json:"otrasSenas"`
	CodPais             string `json:"codPais"`
	Telefono            string `json:"telefono"`
	Fax                 string `json:"fax"`
	CorreoElectronico   string `json:"correoElectronico"`
	Activo              string `json:"activo"`
	CreatedAt           string `json:"createdAt"`
	UpdatedAt           string `json:"updatedAt"`
	Sucursal            string `json:"sucursal"`
	MonedaLocal         string `json:"monedaLocal"`
	MonedaExtranjera    string `json:"monedaExtranjera"`
	VerMonedaExtranjera string `json:"verMonedaExtranjera"`
	Licencia            string `json:"licencia"`
}

// BranchInput is the JSON body of a branch create or update (A.3). An
// update is a full replace.
type BranchInput struct {
	// Sucursal is the 3-digit branch code of the consecutivo.
	Sucursal            string `json:"sucursal,omitempty"`
	RazonComercial      string `json:"razonComercial,omitempty"`
	Provincia           string `json:"provincia,omitempty"`
	Canton              string `json:"canton,omitempty"`
	Distrito            string `json:"distrito,omitempty"`
	Barrio              string `json:"barrio,omitempty"`
	OtrasSenas          string `json:"otrasSenas,omitempty"`
	CodPais             string `json:"codPais,omitempty"`
	Telefono            string `json:"telefono,omitempty"`
	Fax                 string `json:"fax,omitempty"`
	CorreoElectronico   string `json:"correoElectronico,omitempty"`
	MonedaLocal         string `json:"monedaLocal,omitempty"`
	MonedaExtranjera    string `json:"monedaExtranjera,omitempty"`
	VerMonedaExtranjera string `json:"verMonedaExtranjera,omitempty"`
	Licencia            string `json:"licencia,omitempty"`
	Activo              string `json:"activo,omitempty"`
}

// CreatedBranch is the answer of a branch create: the branch and its first
// API user, whose credentials are shown only here.
type CreatedBranch struct {
	Branch
	Usuario    string `json:"usuario"`
	Contrasena string `json:"contrasena"`
	APIToken   string `json:"apiToken"`
	MensajeAPI string `json:"mensajeApi"`
}

// Credentials returns the branch's first API user's credentials.
func (b CreatedBranch) Credentials() Credentials {
	return Credentials{Usuario: b.Usuario, Contrasena: b.Contrasena, APIToken: b.APIToken}
}

// UpdatedBranch is the answer of a branch update.
type UpdatedBranch struct {
	Branch
	MensajeAPI string `json:"mensaje_api"`
}

func branchesPath(companyID int64) string { return companyPath(companyID) + "/branches" }

// ListBranches lists a company's branches.
func (c *Client) ListBranches(ctx context.Context, companyID int64) ([]Branch, error) {
	var out []Branch
	err := c.callJSON(ctx, request{method: http.MethodGet, path: branchesPath(companyID) + "/v4", safe: true}, &out)
	return out, err
}

// CreateBranch creates a branch with its first API user. A connection
// failure is not retried (a repeat would be refused on sucursal).
func (c *Client) CreateBranch(ctx context.Context, companyID int64, in BranchInput) (*CreatedBranch, error) {
	r, err := jsonRequest(http.MethodPost, branchesPath(companyID)+"/v4", in, false)
	if err != nil {
		return nil, err
	}
	var out CreatedBranch
	if err := c.callJSON(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateBranch replaces a branch's details (a full replace).
func (c *Client) UpdateBranch(ctx context.Context, companyID, branchID int64, in BranchInput) (*UpdatedBranch, error) {
	r, err := jsonRequest(http.MethodPut, branchesPath(companyID)+"/"+strconv.FormatInt(branchID, 10)+"/v4", in, true)
	if err != nil {
		return nil, err
	}
	var out UpdatedBranch
	if err := c.callJSON(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// APIUser is a branch's API user as listed (never its password or token).
type APIUser struct {
	ID         int64  `json:"id"`
	Usuario    string `json:"usuario"`
	Activo     string `json:"activo"`
	CreatedAt  string `json:"createdAt"`
	MensajeAPI string `json:"mensaje_api,omitempty"`
}

func usersPath(companyID, branchID int64) string {
	return branchesPath(companyID) + "/" + strconv.FormatInt(branchID, 10) + "/users"
}

// CreateAPIUser creates an API user of a branch (A.4) and returns its
// credentials, shown only here. A connection failure is not retried (a
// repeat would be refused on usuario).
func (c *Client) CreateAPIUser(ctx context.Context, companyID, branchID int64, usuario string) (*Credentials, error) {
	r, err := jsonRequest(http.MethodPost, usersPath(companyID, branchID)+"/v4", map[string]string{"usuario": usuario}, false)
	if err != nil {
		return nil, err
	}
	var out Credentials
	if err := c.callJSON(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListAPIUsers lists a branch's API users.
func (c *Client) ListAPIUsers(ctx context.Context, companyID, branchID int64) ([]APIUser, error) {
	var out []APIUser
	err := c.callJSON(ctx, request{method: http.MethodGet, path: usersPath(companyID, branchID) + "/v4", safe: true}, &out)
	return out, err
}

// SetAPIUserActive switches an API user on or off.
func (c *Client) SetAPIUserActive(ctx context.Context, companyID, branchID, userID int64, active bool) (*APIUser, error) {
	activo := "N"
	if active {
		activo = "S"
	}
	r, err := jsonRequest(http.MethodPut, usersPath(companyID, branchID)+"/"+strconv.FormatInt(userID, 10)+"/v4", map[string]string{"activo": activo}, true)
	if err != nil {
		return nil, err
	}
	var out APIUser
	if err := c.callJSON(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RotateAPIToken gives an API user a new token, shown only in the answer;
// the old one stops working. A connection failure is not retried (the
// new token would be lost with the answer).
func (c *Client) RotateAPIToken(ctx context.Context, companyID, branchID, userID int64) (*Credentials, error) {
	path := usersPath(companyID, branchID) + "/" + strconv.FormatInt(userID, 10) + "/token/v4"
	var out Credentials
	if err := c.callJSON(ctx, request{method: http.MethodPost, path: path, contentType: "application/json", body: []byte("{}")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateReseller creates a reseller API user (an admin only) and returns
// its credentials, shown only here.
func (c *Client) CreateReseller(ctx context.Context, usuario string) (*Credentials, error) {
	r, err := jsonRequest(http.MethodPost, "/api/resellers/v4", map[string]string{"usuario": usuario}, false)
	if err != nil {
		return nil, err
	}
	var out Credentials
	if err := c.callJSON(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
