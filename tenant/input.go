package tenant

// CompanyInput is a company create or update request as the contract's
// multipart form carries it (A.2). An update is a full replace: every field
// is taken as sent. Certificate is the raw .p12/.pfx file and CertificatePIN
// its PIN; on update a nil Certificate keeps the stored one.
type CompanyInput struct {
	TipoIdentificacion     string
	Identificacion         string
	RazonSocial            string
	ActividadComercial     string
	UsuarioHacienda        string
	ContrasenaHacienda     Secret
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
	Sucursal               string // default "001"
	MonedaLocal            string // default "CRC"
	MonedaExtranjera       string // default "USD"
	FacturacionElectronica bool
	// Activo is "S" or "N"; empty means "S" on create and no change on update.
	Activo         string
	Certificate    Secret
	CertificatePIN Secret
	// ValidacionesRegistro is nil when the form does not have the field:
	// "" on create, the stored value kept on update. Sent, it is one of
	// a registry.Policy (refuse, warn, off) or ""
	// (the service's setting), case aside.
	ValidacionesRegistro *string

	// The fields of A.14, nil when the form does not have them. Ambiente
	// is pruebas or produccion (nil or empty: the service's default on
	// create, unchanged on update). CuotaMensual is a whole number of
	// documents a month, "" for no limit, and is taken only from the forms
	// of the users who sell the company's plan (an admin, its reseller):
	// Service.CreateCompany and UpdateCompany drop it from anyone else's.
	// CorreoNotificaciones is up to four addresses separated by ";", "" for
	// none.
	Ambiente             *string
	CuotaMensual         *string
	CorreoNotificaciones *string

	// What the company prints on its documents (ours). NotasImpresas is
	// nil when the form does not have the field ("" on create, the stored
	// notes kept on update); sent, up to MaxNotasImpresas characters, ""
	// for none. Logo is a new logo (a PNG or JPEG file), nil for none sent:
	// none on create, the stored one kept on update unless QuitarLogo
	// removes it.
	NotasImpresas *string
	Logo          []byte
	QuitarLogo    bool
}

// BranchInput is a branch create or update request (A.3), a full replace on
// update.
type BranchInput struct {
	Sucursal            string
	RazonComercial      string
	Provincia           string
	Canton              string
	Distrito            string
	Barrio              string
	OtrasSenas          string
	CodPais             string
	Telefono            string
	Fax                 string
	CorreoElectronico   string
	MonedaLocal         string
	MonedaExtranjera    string
	VerMonedaExtranjera string // "S" or "N"
	Licencia            string
	Activo              string // "S" or "N"; empty means "S" on create and no change on update
}

// Credentials are a new API user's secrets, shown once in the answer that
// created them and stored only as hashes.
type Credentials struct {
	Usuario    string
	Contrasena string
	APIToken   string
}

// CompanyDetail is a company as read by id (the get form of A.2). Its
// tax-authority password and certificate PIN are opened only for the
// principals who manage the company (SecretsShown); for anyone else they
// are empty.
type CompanyDetail struct {
	Company
	ContrasenaHacienda Secret
	CertificatePIN     Secret
	// SecretsShown says that the two above were opened for the caller
	// (empty then means not set); false, they were withheld.
	SecretsShown bool
}

// CreatedCompany is the result of a company create: the company, its first
// branch and that branch's API user. The secrets sent are never in it.
type CreatedCompany struct {
	Company
	Branch      Branch
	Credentials Credentials
}
