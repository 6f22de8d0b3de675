package api

import (
	"bytes"
	"fmt"
	"log/slog"
	"mime/multipart"
	"reflect"
	"strconv"
)

// The companies, branches and API users (A.2–A.4) and the reseller call.
// Dates are the contract's local date-times (LocalTime); flags named activo
// hold "S" or "N".

// Company is a company as searched (A.2, search form).
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
	// ValidacionesRegistro (ours, A.13) is refuse, warn, off, or empty
	// for the service's setting.
	ValidacionesRegistro string `json:"validacionesRegistro"`
	// Ambiente (ours, A.14) is pruebas or produccion: the tax
	// authority's environment the company issues in.
	Ambiente string `json:"ambiente"`
	// CuotaMensual (ours, A.14) is how many documents the company may
	// have numbered in a Costa Rica calendar month; null is no limit.
	CuotaMensual *int64 `json:"cuotaMensual"`
}

// CompanyDetail is a company as read by id (A.2, get form): the search
// form, the tax-authority credentials and the certificate's PIN (Clave),
// and (ours) the remaining details, so that a full-replace update can
// start from what a get returned.
type CompanyDetail struct {
	Company
	UsuarioHacienda string `json:"usuarioHacienda"`
	// ContrasenaHacienda and Clave (the certificate's PIN) hold their
	// values only for the callers who manage the company (the admin, its
	// reseller) and for nobody when the service hides them; anyone else,
	// and every update's answer, gets "". Sent back empty in an update,
	// they keep the stored password, certificate and PIN.
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
	// CorreoNotificaciones (ours, A.14) are the addresses the notices
	// about the company itself go to (separated by ";"; empty: none).
	CorreoNotificaciones string `json:"correoNotificaciones"`
	// NotasImpresas (ours) are the notes printed after the company's
	// documents; TieneLogo says whether a logo prints at their top.
	NotasImpresas string `json:"notasImpresas"`
	TieneLogo     bool   `json:"tieneLogo"`
}

// UpdatedCompany is the answer of a company update
// (UpdateCompanyResponse).
type UpdatedCompany struct {
	CompanyDetail
	// MensajeAPI is empty on success.
	MensajeAPI string `json:"mensajeApi"`
	// MensajeAPIKey (ours) is the code of a 500's MensajeAPI
	// (internal_error, outcome_unknown); absent on success.
	MensajeAPIKey string `json:"mensajeApiKey,omitempty"`
}

// CreatedCompany is the answer of a company create
// (CreateCompanyResponse): the company, its first branch and that
// branch's first API user, whose credentials are shown only here. Its
// ContrasenaHacienda and Clave are always "": a create never echoes the
// secrets it was sent.
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
	ValidacionesRegistro   string `json:"validacionesRegistro"`
	Ambiente               string `json:"ambiente"`
	CuotaMensual           *int64 `json:"cuotaMensual"`
	CorreoNotificaciones   string `json:"correoNotificaciones"`
	NotasImpresas          string `json:"notasImpresas"`
	TieneLogo              bool   `json:"tieneLogo"`
	Usuario                string `json:"usuario"`
	Contrasena             string `json:"contrasena"`
	APIToken               string `json:"apiToken"`
	MensajeAPI             string `json:"mensajeApi"`
	// MensajeAPIKey (ours) is the code of a 500's MensajeAPI; absent on
	// success.
	MensajeAPIKey string `json:"mensajeApiKey,omitempty"`
}

// Credentials returns the first API user's credentials.
func (c CreatedCompany) Credentials() Credentials {
	return Credentials{Usuario: c.Usuario, Contrasena: c.Contrasena, APIToken: c.APIToken}
}

// CompanyForm is the form of a company create or update (A.2), sent as
// multipart/form-data (or URL-encoded, without a certificate). Each
// field's form name is its Go name; the service matches them without
// regard to case. Empty text fields are not sent (but a non-nil pointer
// is, even to ""), and the service applies
// its defaults on create (Sucursal 001, MonedaLocal CRC, MonedaExtranjera
// USD). An update is a full replace: send every detail, starting from a
// read of the company.
type CompanyForm struct {
	// TipoIdentificacion is 01 physical person, 02 legal entity, 03 DIMEX,
	// 04 NITE.
	TipoIdentificacion     string
	Identificacion         string `also:"NumeroIdentificacion"`
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
	MonedaLocal            string `also:"MonedaIdLocal"`
	MonedaExtranjera       string `also:"MonedaIdExtranjera"`
	FacturacionElectronica bool
	// Activo is "S" or "N"; empty leaves the service's default on create
	// and the company's state on update.
	Activo string `read:"flag"`
	// Certificado is the company's .p12/.pfx, sent as a file; nil sends
	// none (on update: keeps the current one).
	Certificado []byte
	// CertificadoNombre is the uploaded file's name (default
	// "certificado.p12"); it is not a field of the form.
	CertificadoNombre string `form:"-"`
	// Clave is the certificate's PIN.
	Clave string
	// ValidacionesRegistro (ours, A.13) is refuse, warn, off, or empty for
	// the service's setting. nil does not send the field: empty on create,
	// kept on update; a pointer to "" sends it empty, which clears it.
	ValidacionesRegistro *string `form:"validacionesRegistro"`
	// The fields of A.14 (ours); nil does not send the field (the
	// service's default on create, kept on update). Ambiente is pruebas
	// or produccion; a move takes the new environment's credentials and
	// certificate in the same update. CuotaMensual is a whole number of
	// documents a month, or "" for no limit, taken only from an admin's
	// or the company's reseller's form. CorreoNotificaciones is up to four
	// addresses separated by ";", or "" for none.
	Ambiente             *string `form:"ambiente"`
	CuotaMensual         *string `form:"cuotaMensual"`
	CorreoNotificaciones *string `form:"correoNotificaciones"`
	// What the company prints on its documents (ours). NotasImpresas are
	// free notes printed after every document (bank accounts, a return
	// policy), up to 1,000 characters, lines apart; nil does not send the
	// field (none on create, kept on update), a pointer to "" clears them.
	// Logo is a PNG or JPEG file of at most 256 KiB and 1,200 pixels a
	// side, printed at the top of every document; nil sends none (kept on
	// update). QuitarLogo "S" removes the stored logo.
	NotasImpresas *string `form:"notasImpresas"`
	Logo          []byte  `form:"logo"`
	QuitarLogo    string  `form:"quitarLogo" read:"flag"`
}

// redacted stands for a secret in a printed or logged CompanyForm.
const redacted = "[redacted]"

// withoutSecrets is f with its password, PIN and certificate replaced by
// redacted (those that are set), as a type without methods.
func (f CompanyForm) withoutSecrets() companyFormText {
	if f.ContrasenaHacienda != "" {
		f.ContrasenaHacienda = redacted
	}
	if f.Clave != "" {
		f.Clave = redacted
	}
	if f.Certificado != nil {
		f.Certificado = []byte(redacted)
	}
	return companyFormText(f)
}

// companyFormText is CompanyForm without its methods, for printing.
type companyFormText CompanyForm

// String prints the form with ContrasenaHacienda, Clave and Certificado
// redacted, so that printing a form (%v, %+v, %s) cannot leak them.
func (f CompanyForm) String() string { return fmt.Sprintf("%+v", f.withoutSecrets()) }

// GoString is String for %#v.
func (f CompanyForm) GoString() string { return fmt.Sprintf("%#v", f.withoutSecrets()) }

// LogValue logs the form as String prints it.
func (f CompanyForm) LogValue() slog.Value { return slog.StringValue(f.String()) }

// Encode writes the form as multipart/form-data and returns its content
// type (with the boundary) and body: the text fields in their order, the
// files (the certificate, the logo) last.
func (f CompanyForm) Encode() (contentType string, body []byte, err error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	type file struct {
		field string
		data  []byte
	}
	var files []file
	v := reflect.ValueOf(f)
	for i := range v.NumField() {
		name := formName(v.Type().Field(i))
		if name == "" {
			continue
		}
		var text string
		switch x := v.Field(i).Interface().(type) {
		case string:
			text = x
		case bool:
			text = strconv.FormatBool(x)
		case []byte:
			if x != nil {
				files = append(files, file{field: name, data: x})
			}
			continue
		case *string:
			if x == nil {
				continue
			}
			// Sent even when empty: an empty value is not an absent one.
			if err := w.WriteField(name, *x); err != nil {
				return "", nil, err
			}
			continue
		}
		if text == "" {
			continue
		}
		if err := w.WriteField(name, text); err != nil {
			return "", nil, err
		}
	}
	for _, fl := range files {
		name := fl.field
		switch {
		case fl.field == "Certificado" && f.CertificadoNombre != "":
			name = f.CertificadoNombre
		case fl.field == "Certificado":
			name = "certificado.p12"
		case bytes.HasPrefix(fl.data, []byte("\x89PNG")):
			name += ".png"
		case bytes.HasPrefix(fl.data, []byte{0xff, 0xd8}):
			name += ".jpg"
		}
		fw, err := w.CreateFormFile(fl.field, name)
		if err != nil {
			return "", nil, err
		}
		if _, err := fw.Write(fl.data); err != nil {
			return "", nil, err
		}
	}
	if err := w.Close(); err != nil {
		return "", nil, err
	}
	return w.FormDataContentType(), buf.Bytes(), nil
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

// BranchInput is the JSON body of a branch create or update (A.3); an
// update is a full replace. The service also reads the published
// spellings monedaIdLocal and monedaIdExtranjera, and flags given as
// booleans, si/no or 1/0.
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
	MonedaLocal         string `json:"monedaLocal,omitempty" also:"monedaIdLocal"`
	MonedaExtranjera    string `json:"monedaExtranjera,omitempty" also:"monedaIdExtranjera"`
	VerMonedaExtranjera string `json:"verMonedaExtranjera,omitempty" read:"flag"`
	Licencia            string `json:"licencia,omitempty"`
	Activo              string `json:"activo,omitempty" read:"flag"`
}

// CreatedBranch is the answer of a branch create: the branch and its first
// API user, whose credentials are shown only here.
type CreatedBranch struct {
	Branch
	Usuario    string `json:"usuario"`
	Contrasena string `json:"contrasena"`
	APIToken   string `json:"apiToken"`
	MensajeAPI string `json:"mensajeApi"`
	// MensajeAPIKey (ours) is the code of a 500's MensajeAPI; absent on
	// success.
	MensajeAPIKey string `json:"mensajeApiKey,omitempty"`
}

// Credentials returns the branch's first API user's credentials.
func (b CreatedBranch) Credentials() Credentials {
	return Credentials{Usuario: b.Usuario, Contrasena: b.Contrasena, APIToken: b.APIToken}
}

// UpdatedBranch is the answer of a branch update: the branch with its
// message, spelt in snake_case as published.
type UpdatedBranch struct {
	Branch
	MensajeAPI string `json:"mensaje_api"`
	// MensajeAPIKey (ours) is the code of a 500's MensajeAPI; absent on
	// success.
	MensajeAPIKey string `json:"mensaje_api_key,omitempty"`
}

// Credentials are an API user's, the answer of the create-user call (A.4),
// the reseller call and a token rotation: shown in clear only there,
// stored by the service only as hashes.
type Credentials struct {
	Usuario    string `json:"usuario"`
	Contrasena string `json:"contrasena"`
	APIToken   string `json:"apiToken"`
	// MensajeAPI is empty on success.
	MensajeAPI string `json:"mensaje_api"`
	// MensajeAPIKey (ours) is the code of a 500's MensajeAPI; absent on
	// success.
	MensajeAPIKey string `json:"mensaje_api_key,omitempty"`
}

// UserRequest is the body of the create-user call (A.4) and the reseller
// call.
type UserRequest struct {
	Usuario string `json:"usuario"`
}

// APIUser is an API user as listed and updated (ours; A.4 has only the
// create call): never its password or token.
type APIUser struct {
	ID        int64  `json:"id"`
	Usuario   string `json:"usuario"`
	Activo    string `json:"activo"`
	CreatedAt string `json:"createdAt"`
	// MensajeAPI carries the message of a failed update; it is left out
	// otherwise.
	MensajeAPI string `json:"mensaje_api,omitempty"`
	// MensajeAPIKey (ours) is the code of that message; left out
	// otherwise.
	MensajeAPIKey string `json:"mensaje_api_key,omitempty"`
}

// APIUserUpdate is the body of an API user's update: it switches the user
// on ("S") or off ("N").
type APIUserUpdate struct {
	Activo string `json:"activo" read:"flag"`
}

// ConnectionOK is the token and certificado of a connection test that
// found nothing wrong.
const ConnectionOK = "ok"

// PruebaConexion is the answer of a company's connection test (ours,
// A.14): a fresh login at the company's environment and its certificate
// opened, nothing sent.
type PruebaConexion struct {
	// Ambiente is the company's environment (pruebas, produccion), where
	// it logged in.
	Ambiente string `json:"ambiente"`
	// Token is "ok" when the tax authority's token service gave a token
	// for the company's user and password; otherwise its own refusal text
	// ("Invalid user credentials"), or a reason starting with
	// "unreachable: " (or "not tried: ") when it could not be asked.
	Token string `json:"token"`
	// Certificado is "ok" when the company's certificate opens with its
	// PIN and is valid now; otherwise why not.
	Certificado string `json:"certificado"`
	// IdentificacionCoincide says the certificate opened and carries the
	// company's numeroIdentificacion.
	IdentificacionCoincide bool `json:"identificacionCoincide"`
	// VencimientoCertificado is when the certificate expires (LocalTime;
	// NotSet when the company has none).
	VencimientoCertificado string `json:"vencimientoCertificado"`
}
