package api

// ResumenIVA is a company's IVA summary of one month (A.15): GET
// /api/companies/{CompaniaId}/reportes/iva/v4?periodo=YYYY-MM. Amounts
// are decimal strings with 2 decimals, each summed from the documents'
// 5-decimal figures and rounded once, half away from zero.
type ResumenIVA struct {
	Periodo string     `json:"periodo"`
	Ventas  []FilaIVA  `json:"ventas"`
	Compras []FilaIVA  `json:"compras"`
	Totales TotalesIVA `json:"totales"`
}

// FilaIVA is one tax code and rate's figures in the month. A purchase
// row carries ImpuestoAcreditable; a sales row does not.
type FilaIVA struct {
	Codigo              string  `json:"codigo"`
	CodigoTarifaIVA     string  `json:"codigoTarifaIVA"`
	Tarifa              string  `json:"tarifa"`
	BaseImponible       string  `json:"baseImponible"`
	Impuesto            string  `json:"impuesto"`
	Exento              string  `json:"exento"`
	Exonerado           string  `json:"exonerado"`
	NoSujeto            string  `json:"noSujeto"`
	Documentos          int64   `json:"documentos"`
	ImpuestoAcreditable *string `json:"impuestoAcreditable,omitempty"`
}

// TotalesIVA are the columns' totals of each side.
type TotalesIVA struct {
	Ventas  FilaIVA `json:"ventas"`
	Compras FilaIVA `json:"compras"`
}

// ParamFormato asks for the summary as CSV (formato=csv).
const ParamFormato = "formato"
