package api

// Usage and quotas (A.14): what a company numbered in a Costa Rica
// calendar month, and the answer header of a send when it has a monthly
// quota.

// HeaderDocumentosDisponibles is the send answer's header that says how
// many more documents the company may have numbered this month, after
// this one, when it has a monthly quota (cuotaMensual).
const HeaderDocumentosDisponibles = "Facturad-Documentos-Disponibles"

// FieldCuotaMensual is the field a 402 (monthly quota reached) names.
const FieldCuotaMensual = "cuotaMensual"

// ParamPeriodo is the usage calls' month, YYYY-MM.
const ParamPeriodo = "periodo"

// Uso is a company's usage in one month: GET
// /api/companies/{CompaniaId}/uso/v4 and each item of GET /api/uso/v4.
type Uso struct {
	CompaniaID int64  `json:"companiaId"`
	Periodo    string `json:"periodo"`
	// Documentos are the documents it numbered in the month, every
	// type and both environments.
	Documentos UsoDocumentos `json:"documentos"`
	// MensajesReceptor are its receiver's messages numbered in the
	// month.
	MensajesReceptor UsoMensajes `json:"mensajesReceptor"`
}

// UsoDocumentos counts documents: in all, per type (01, 04...) and per
// estado. A type or estado with none is absent.
type UsoDocumentos struct {
	Total     int64            `json:"total"`
	PorTipo   map[string]int64 `json:"porTipo"`
	PorEstado map[string]int64 `json:"porEstado"`
}

// UsoMensajes counts receiver's messages: in all and per estado.
type UsoMensajes struct {
	Total     int64            `json:"total"`
	PorEstado map[string]int64 `json:"porEstado"`
}

// UsoLista is the answer of GET /api/uso/v4: the month and the usage of
// every company the caller manages, by company id.
type UsoLista struct {
	Periodo string `json:"periodo"`
	Items   []Uso  `json:"items"`
}
