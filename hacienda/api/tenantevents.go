package api

// Tenant events and the operators' lists (A.14): what the service tells a
// company about itself, and what an operator lists to see which companies
// need attention.

// The tenant events' names, as a webhook's eventos and a delivery's
// evento spell them.
const (
	EventCertificadoPorVencer   = "certificado.por_vencer"
	EventCertificadoVencido     = "certificado.vencido"
	EventCredencialesRechazadas = "credenciales.rechazadas"
	EventDocumentosDetenidos    = "documentos.detenidos"
)

// TenantEventData is the data of a company's event (certificado.por_vencer,
// certificado.vencido, credenciales.rechazadas, documentos.detenidos), the
// data of its webhook body (WebhookEvent) and what its e-mail says: the
// company and what the event is about. ExpiracionCertificado is set for the
// certificate events; Claves and Cantidad for documentos.detenidos (Claves
// lists at most MaxTenantEventClaves of the Cantidad documents the event
// announces).
type TenantEventData struct {
	CompaniaID            int64    `json:"companiaId"`
	NumeroIdentificacion  string   `json:"numeroIdentificacion"`
	RazonSocial           string   `json:"razonSocial"`
	Ambiente              string   `json:"ambiente"`
	ExpiracionCertificado string   `json:"expiracionCertificado,omitempty"`
	Claves                []string `json:"claves,omitempty"`
	Cantidad              int      `json:"cantidad,omitempty"`
}

// MaxTenantEventClaves bounds the claves one documentos.detenidos lists.
const MaxTenantEventClaves = 100

// ExpiringCertificate is an item of GET /api/admin/certificados/v4: an
// active company whose certificate expires before the date asked.
type ExpiringCertificate struct {
	CompaniaID            int64  `json:"companiaId"`
	NumeroIdentificacion  string `json:"numeroIdentificacion"`
	RazonSocial           string `json:"razonSocial"`
	Ambiente              string `json:"ambiente"`
	ExpiracionCertificado string `json:"expiracionCertificado"`
}

// StuckDocument is an item of GET /api/admin/documentos-detenidos/v4: a
// document still unsettled (00, 04, 05) an hour after it was numbered,
// with its company. Espera says who it waits for: "servicio" (the service
// still works on it) or "compania" (the service stopped on it; only its
// company can move it on).
type StuckDocument struct {
	CompaniaID           int64  `json:"companiaId"`
	NumeroIdentificacion string `json:"numeroIdentificacion"`
	RazonSocial          string `json:"razonSocial"`
	Ambiente             string `json:"ambiente"`
	Clave                string `json:"clave"`
	Estado               string `json:"estado"`
	Numerado             string `json:"numerado"`
	Espera               string `json:"espera"`
}

// The values of StuckDocument.Espera.
const (
	EsperaServicio = "servicio"
	EsperaCompania = "compania"
)

// ParamVencenAntesDe is the certificates list's date (YYYY-MM-DD): the
// certificates expiring strictly before Costa Rica midnight of it.
const ParamVencenAntesDe = "vencenAntesDe"
