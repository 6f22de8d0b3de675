package registry

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Taxpayer is an entry of the taxpayer registry (/fe/ae), with its values
// as the registry gives them.
type Taxpayer struct {
	Identificacion     string     `json:"identificacion"`
	Nombre             string     `json:"nombre"`
	TipoIdentificacion string     `json:"tipoIdentificacion"`
	Regimen            Regimen    `json:"regimen"`
	Situacion          Situacion  `json:"situacion"`
	Actividades        []Activity `json:"actividades"`
}

// Registered reports whether the taxpayer is registered: the registry
// also answers for identifications it knows but that are not, or no
// longer, registered (situacion.estado "No inscrito", "Desinscrito...").
func (t Taxpayer) Registered() bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(t.Situacion.Estado)), "inscrito") ||
		t.Situacion.Estado == "" && len(t.Actividades) > 0
}

// Regimen is a taxpayer's tax regime.
type Regimen struct {
	Codigo      int    `json:"codigo"`
	Descripcion string `json:"descripcion"`
}

// Situacion is a taxpayer's standing: its registration state ("Inscrito",
// "No inscrito", "Desinscrito oficio"...), the registry's note on it, and
// whether it is in arrears (moroso) or has not filed (omiso), each
// "SI" or "NO" as the registry writes them.
type Situacion struct {
	Estado string `json:"estado"`
	Moroso string `json:"moroso"`
	Omiso  string `json:"omiso"`
	// Mensaje is the registry's note, given for taxpayers not registered.
	Mensaje string `json:"mensaje,omitempty"`
}

// Activity is one of a taxpayer's economic activities: its code (CIIU 4,
// like "6201.0", since TRIBU-CR), whether it is active (Estado "A") or not
// ("I"), and whether it is the main one (Tipo "P") or secondary ("S").
type Activity struct {
	Codigo      string `json:"codigo"`
	Descripcion string `json:"descripcion"`
	Estado      string `json:"estado"`
	Tipo        string `json:"tipo"`
}

// Active reports whether the activity is active.
func (a Activity) Active() bool { return a.Estado == "A" }

// Activity returns the taxpayer's activity with the code, if it has one.
// A document carries the code as the registry writes it (six characters:
// "6201.0" since TRIBU-CR, "620100" before), so they compare exactly.
func (t Taxpayer) Activity(code string) (Activity, bool) {
	for _, a := range t.Actividades {
		if a.Codigo == code {
			return a, true
		}
	}
	return Activity{}, false
}

// Cabys is an entry of the CAByS catalog: its 13-digit code, description
// and the IVA rate the catalog gives it, in percent.
type Cabys struct {
	Codigo      string          `json:"codigo"`
	Descripcion string          `json:"descripcion"`
	Impuesto    decimal.Decimal `json:"impuesto"`
}

// Exoneration is an exoneration authorisation of the registry (/fe/ex).
type Exoneration struct {
	Autorizacion          string          `json:"autorizacion"`
	Identificacion        string          `json:"identificacion"`
	TipoDocumento         CodeName        `json:"tipoDocumento"`
	NombreInstitucion     string          `json:"nombreInstitucion"`
	CodigoInstitucion     string          `json:"codigoInstitucion,omitempty"`
	FechaEmision          time.Time       `json:"fechaEmision"`
	FechaVencimiento      time.Time       `json:"fechaVencimiento"`
	PorcentajeExoneracion decimal.Decimal `json:"porcentajeExoneracion"`
	PoseeCabys            bool            `json:"poseeCabys"`
	Cabys                 []string        `json:"cabys"`
}

// CodeName is a code of one of the registry's lists with its description.
type CodeName struct {
	Codigo      string `json:"codigo"`
	Descripcion string `json:"descripcion"`
}

// Expired reports whether the authorisation has expired at t: its
// FechaVencimiento is a calendar day in Costa Rica, valid through its end.
func (e Exoneration) Expired(t time.Time) bool {
	if e.FechaVencimiento.IsZero() {
		return false
	}
	y, m, d := e.FechaVencimiento.Date()
	end := time.Date(y, m, d+1, 0, 0, 0, 0, e.FechaVencimiento.Location())
	return !t.Before(end)
}

// Covers reports whether the authorisation allows the CAByS code: any code
// when it lists none.
func (e Exoneration) Covers(cabys string) bool {
	if !e.PoseeCabys && len(e.Cabys) == 0 {
		return true
	}
	for _, c := range e.Cabys {
		if c == cabys {
			return true
		}
	}
	return false
}

// Rate is the central bank's exchange rate of a currency against the colón
// on one day: what a bank buys it for (Compra) and sells it for (Venta).
type Rate struct {
	Moneda string          `json:"moneda"`
	Fecha  string          `json:"fecha"` // YYYY-MM-DD
	Compra decimal.Decimal `json:"compra"`
	Venta  decimal.Decimal `json:"venta"`
}
