package gateway

import (
	"time"

	"facturad/tenant"
	"facturad/tenant/docview"
)

// The answer bodies of A.2–A.4, with exactly the contract's JSON names.

func sn(b bool) string {
	if b {
		return "S"
	}
	return "N"
}

// companyAnswer is the search form of a Company.
type companyAnswer struct {
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

func newCompanyAnswer(c tenant.Company, now time.Time) companyAnswer {
	return companyAnswer{
		ID:                     c.ID,
		TipoIdentificacion:     c.TipoIdentificacion,
		NumeroIdentificacion:   c.NumeroIdentificacion,
		RazonSocial:            c.RazonSocial,
		TipoCliente:            c.TipoCliente,
		Activo:                 sn(c.Activo),
		FacturacionElectronica: c.FacturacionElectronica,
		CreatedAt:              docview.LocalTime(c.CreatedAt),
		UpdatedAt:              docview.LocalTime(c.UpdatedAt),
		CertificadoVencido:     c.CertificateExpired(now),
		ExpiracionCertificado:  docview.LocalTime(c.CertificateExpiry),
	}
}

// companyDetailAnswer is the get form of a Company: the search form, the
// three secrets the contract returns, and (ours) the remaining details, so
// that a full-replace update can start from what a get returned.
type companyDetailAnswer struct {
	companyAnswer
	UsuarioHacienda    string `json:"usuarioHacienda"`
	ContrasenaHacienda string `json:"contrasenaHacienda"`
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

func newCompanyDetailAnswer(d tenant.CompanyDetail, now time.Time) companyDetailAnswer {
	c := d.Company
	return companyDetailAnswer{
		companyAnswer:      newCompanyAnswer(c, now),
		UsuarioHacienda:    c.UsuarioHacienda,
		ContrasenaHacienda: d.ContrasenaHacienda,
		Clave:              d.CertificatePIN,
		ActividadComercial: c.ActividadComercial,
		RazonComercial:     c.RazonComercial,
		Provincia:          c.Provincia,
		Canton:             c.Canton,
		Distrito:           c.Distrito,
		Barrio:             c.Barrio,
		OtrasSenas:         c.OtrasSenas,
		CodPais:            c.CodPais,
		Telefono:           c.Telefono,
		Fax:                c.Fax,
		CorreoElectronico:  c.CorreoElectronico,
		MonedaLocal:        c.MonedaLocal,
		MonedaExtranjera:   c.MonedaExtranjera,
	}
}

// updateCompanyAnswer is UpdateCompanyResponse.
type updateCompanyAnswer struct {
	companyDetailAnswer
	MensajeAPI string `json:"mensajeApi"`
}

// createCompanyAnswer is CreateCompanyResponse.
type createCompanyAnswer struct {
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

func newCreateCompanyAnswer(cc tenant.CreatedCompany) createCompanyAnswer {
	c := cc.Company
	return createCompanyAnswer{
		CompaniaID:             c.ID,
		SucursalID:             cc.Branch.ID,
		TipoIdentificacion:     c.TipoIdentificacion,
		NumeroIdentificacion:   c.NumeroIdentificacion,
		TipoCliente:            c.TipoCliente,
		UsuarioHacienda:        c.UsuarioHacienda,
		ContrasenaHacienda:     cc.ContrasenaHacienda,
		Activo:                 sn(c.Activo),
		Clave:                  cc.CertificatePIN,
		RazonSocial:            c.RazonSocial,
		RazonComercial:         c.RazonComercial,
		Provincia:              c.Provincia,
		Canton:                 c.Canton,
		Distrito:               c.Distrito,
		Barrio:                 c.Barrio,
		OtrasSenas:             c.OtrasSenas,
		CodPais:                c.CodPais,
		Telefono:               c.Telefono,
		Fax:                    c.Fax,
		CorreoElectronico:      c.CorreoElectronico,
		Sucursal:               cc.Branch.Sucursal,
		MonedaExtranjera:       c.MonedaExtranjera,
		FacturacionElectronica: c.FacturacionElectronica,
		Usuario:                cc.Credentials.Usuario,
		Contrasena:             cc.Credentials.Contrasena,
		APIToken:               cc.Credentials.APIToken,
	}
}

// branchAnswer is a Branch.
type branchAnswer struct {
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

func newBranchAnswer(b tenant.Branch) branchAnswer {
	return branchAnswer{
		ID:                  b.ID,
		CompaniaID:          b.CompanyID,
		RazonComercial:      b.RazonComercial,
		Provincia:           b.Provincia,
		Canton:              b.Canton,
		Distrito:            b.Distrito,
		Barrio:              b.Barrio,
		OtrasSenas:          b.OtrasSenas,
		CodPais:             b.CodPais,
		Telefono:            b.Telefono,
		Fax:                 b.Fax,
		CorreoElectronico:   b.CorreoElectronico,
		Activo:              sn(b.Activo),
		CreatedAt:           docview.LocalTime(b.CreatedAt),
		UpdatedAt:           docview.LocalTime(b.UpdatedAt),
		Sucursal:            b.Sucursal,
		MonedaLocal:         b.MonedaLocal,
		MonedaExtranjera:    b.MonedaExtranjera,
		VerMonedaExtranjera: sn(b.VerMonedaExtranjera),
		Licencia:            b.Licencia,
	}
}

// createBranchAnswer is a Branch with its first API user.
type createBranchAnswer struct {
	branchAnswer
	Usuario    string `json:"usuario"`
	Contrasena string `json:"contrasena"`
	APIToken   string `json:"apiToken"`
	MensajeAPI string `json:"mensajeApi"`
}

// updateBranchAnswer is a Branch with its message (snake_case, as
// published).
type updateBranchAnswer struct {
	branchAnswer
	MensajeAPI string `json:"mensaje_api"`
}

// credentialsAnswer answers the user and reseller create calls.
type credentialsAnswer struct {
	Usuario    string `json:"usuario"`
	Contrasena string `json:"contrasena"`
	APIToken   string `json:"apiToken"`
	MensajeAPI string `json:"mensaje_api"`
}

func newCredentialsAnswer(c tenant.Credentials) credentialsAnswer {
	return credentialsAnswer{Usuario: c.Usuario, Contrasena: c.Contrasena, APIToken: c.APIToken}
}
