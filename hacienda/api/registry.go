package api

import "encoding/json"

// The answers of the registry lookups (A.13). Numbers are JSON numbers,
// as the registry writes them. Values are as the tax
// authority's registry gives them; Consultado is when it gave them and
// Desactualizado says the answer is served past its freshness because the
// registry could not be asked again.

// Contribuyente is a taxpayer of the registry.
type Contribuyente struct {
	Identificacion     string      `json:"identificacion"`
	Nombre             string      `json:"nombre"`
	TipoIdentificacion string      `json:"tipoIdentificacion"`
	Regimen            Regimen     `json:"regimen"`
	Situacion          Situacion   `json:"situacion"`
	Actividades        []Actividad `json:"actividades"`
	Consultado         string      `json:"consultado"`
	Desactualizado     bool        `json:"desactualizado"`
}

// Regimen is a taxpayer's tax regime.
type Regimen struct {
	Codigo      int    `json:"codigo"`
	Descripcion string `json:"descripcion"`
}

// Situacion is a taxpayer's standing: estado ("Inscrito", "No inscrito"...),
// moroso and omiso ("SI" or "NO").
type Situacion struct {
	Estado string `json:"estado"`
	Moroso string `json:"moroso"`
	Omiso  string `json:"omiso"`
}

// Actividad is an economic activity: estado A (active) or I, tipo P
// (main) or S.
type Actividad struct {
	Codigo      string `json:"codigo"`
	Descripcion string `json:"descripcion"`
	Estado      string `json:"estado"`
	Tipo        string `json:"tipo"`
}

// CabysList is the answer of a CAByS search or lookup by code (empty
// items for an unknown code).
type CabysList struct {
	Items          []Cabys `json:"items"`
	Consultado     string  `json:"consultado"`
	Desactualizado bool    `json:"desactualizado"`
}

// Cabys is an entry of the CAByS catalog: its IVA rate in percent.
type Cabys struct {
	Codigo      string      `json:"codigo"`
	Descripcion string      `json:"descripcion"`
	Impuesto    json.Number `json:"impuesto"`
}

// Exoneracion is an exoneration authorisation of the registry. Dates are
// local date-times; PorcentajeExoneracion is in percentage points of the
// tax (13 = all of a 13 % IVA); Cabys lists the codes it covers when
// PoseeCabys.
type Exoneracion struct {
	Autorizacion          string      `json:"autorizacion"`
	Identificacion        string      `json:"identificacion"`
	TipoDocumento         CodeNombre  `json:"tipoDocumento"`
	NombreInstitucion     string      `json:"nombreInstitucion"`
	FechaEmision          string      `json:"fechaEmision"`
	FechaVencimiento      string      `json:"fechaVencimiento"`
	PorcentajeExoneracion json.Number `json:"porcentajeExoneracion"`
	PoseeCabys            bool        `json:"poseeCabys"`
	Cabys                 []string    `json:"cabys"`
	Consultado            string      `json:"consultado"`
	Desactualizado        bool        `json:"desactualizado"`
}

// CodeNombre is a code of one of the registry's lists with its
// description.
type CodeNombre struct {
	Codigo      string `json:"codigo"`
	Descripcion string `json:"descripcion"`
}

// TipoCambio is the central bank's exchange rate of a currency on a day
// (YYYY-MM-DD): what banks buy it for and sell it for, in colones.
type TipoCambio struct {
	Moneda         string      `json:"moneda"`
	Fecha          string      `json:"fecha"`
	Compra         json.Number `json:"compra"`
	Venta          json.Number `json:"venta"`
	Consultado     string      `json:"consultado"`
	Desactualizado bool        `json:"desactualizado"`
}
