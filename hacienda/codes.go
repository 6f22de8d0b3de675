package hacienda

import (
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// This file holds every v4.4 code list (the "notas" of Anexo 1) in one
// place, with the document types that may use each restricted code; the
// long official enumerations (units, currencies, pharmaceutical forms,
// locations) are at the end. Two lists live with their rules instead: the
// document types in doctype.go, the identification types in
// identification.go.

// codeSet is a set of codes.
type codeSet map[string]struct{}

func newCodeSet(codes ...string) codeSet {
	s := make(codeSet, len(codes))
	for _, c := range codes {
		s[c] = struct{}{}
	}
	return s
}

func (s codeSet) has(c string) bool { _, ok := s[c]; return ok }

// Situaciones (nota 3, digit 42 of the clave).
var situaciones = newCodeSet("1", "2", "3")

// condicionesVenta is nota 5 per document type, as the schemas enumerate it.
var condicionesVenta = map[DocumentType]codeSet{
	TypeFE:  newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "10", "12", "13", "14", "15", "99"),
	TypeTE:  newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "10", "13", "14", "15", "99"),
	TypeFEC: newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "10", "13", "14", "15", "99"),
	TypeFEE: newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "10", "13", "14", "15", "99"),
	TypeNC:  newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13", "14", "15", "99"),
	TypeND:  newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13", "14", "15", "99"),
	TypeREP: newCodeSet("09", "11"),
}

// Sale conditions the rules refer to.
const (
	CondicionContado         = "01"
	CondicionCredito         = "02"
	CondicionServiciosEstado = "08"
	CondicionCreditoIVA90    = "10"
	CondicionNoNacionalizada = "12"
	CondicionUsadosNoContrib = "13"
	CondicionOtros           = "99"
)

// mediosPago is nota 6.
var mediosPago = newCodeSet("01", "02", "03", "04", "05", "06", "07", "99")

// Means of payment the rules refer to.
const (
	MedioPagoEfectivo = "01"
	MedioPagoTarjeta  = "02"
	MedioPagoOtros    = "99"
)

// Tax codes (nota 8).
const (
	ImpuestoIVA              = "01"
	ImpuestoSelectivo        = "02"
	ImpuestoCombustibles     = "03"
	ImpuestoBebidasAlcohol   = "04"
	ImpuestoBebidasJabones   = "05"
	ImpuestoTabaco           = "06"
	ImpuestoIVAEspecial      = "07"
	ImpuestoIVABienesUsados  = "08"
	ImpuestoCemento          = "12"
	ImpuestoOtros            = "99"
	impuestoCementoTarifaPct = 5
)

var codigosImpuesto = newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "12", "99")

// isIVA reports whether a tax code is a value-added tax (01, 07, 08).
func isIVA(codigo string) bool {
	return codigo == ImpuestoIVA || codigo == ImpuestoIVAEspecial || codigo == ImpuestoIVABienesUsados
}

// tarifaIVA is one IVA rate code (nota 8.1).
type tarifaIVA struct {
	rate     decimal.Decimal
	noteOnly bool // transitional codes usable only in NC/ND
}

// Rate codes the rules refer to.
const (
	TarifaCero            = "01" // 0 % art. 32 RLIVA, no sujeto
	TarifaTransitoriaCero = "05"
	TarifaGeneral         = "08" // 13 %
	TarifaExenta          = "10"
	TarifaCeroSinCredito  = "11"
)

var tarifasIVA = map[string]tarifaIVA{
	"01": {rate: decimal.New(0, 0)},
	"02": {rate: decimal.New(1, 0)},
	"03": {rate: decimal.New(2, 0)},
	"04": {rate: decimal.New(4, 0)},
	"05": {rate: decimal.New(0, 0), noteOnly: true},
	"06": {rate: decimal.New(4, 0), noteOnly: true},
	"07": {rate: decimal.New(8, 0), noteOnly: true},
	"08": {rate: decimal.New(13, 0)},
	"09": {rate: decimal.New(5, -1)},
	"10": {rate: decimal.New(0, 0)},
	"11": {rate: decimal.New(0, 0)},
}

// TarifaIVA returns the rate (a percentage number: 13 for 13 %) of an IVA
// rate code, and whether the code exists.
func TarifaIVA(codigoTarifa string) (decimal.Decimal, bool) {
	t, ok := tarifasIVA[codigoTarifa]
	return t.rate, ok
}

// Exoneration document types (nota 10.1); some only in NC/ND.
var (
	tiposExoneracion         = newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "99")
	tiposExoneracionNoteOnly = newCodeSet("01", "05", "06", "07")
	// tiposExoneracionArticulo need the article of the law.
	tiposExoneracionArticulo = newCodeSet("02", "03", "06", "07", "08")
	// tiposExoneracionRegistro are the authorisations the tax authority
	// holds in its exoneration registry and checks a document against:
	// 04 (autorización local genérica) and 11 (autorización de impuesto
	// local concreta). The others (DGT purchases, diplomats, special laws,
	// free-trade zones...) are documents it does not hold. Decision 73.
	tiposExoneracionRegistro = newCodeSet("04", "11")
)

// ExoneracionAutorizacionConcreta is nota-10.1 code 11, which needs an
// InformacionReferencia in an FE.
const ExoneracionAutorizacionConcreta = "11"

// Institutions that issue exonerations (nota 23).
var instituciones = newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "99")

// Other-charge types (nota 16).
var tiposOtrosCargos = newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "99")

// Other-charge types the rules refer to.
const (
	OtroCargoTercero = "04"
	OtroCargoOtros   = "99"
)

// otrosCargosSinLineas are the other-charge types that may form a document
// without detail lines (FE, TE, NC, ND).
var otrosCargosSinLineas = newCodeSet("04", "08", "09", "10")

// Reference document types (nota 10) and their restrictions.
var (
	tiposDocReferencia         = newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13", "14", "15", "16", "17", "18", "99")
	tiposDocReferenciaREP      = newCodeSet("01", "02", "03", "04", "07", "08", "10")
	tiposDocReferenciaConClave = newCodeSet("01", "02", "03", "04", "09", "11", "12", "15")
)

// Reference document types the rules refer to.
const (
	DocRefDevolucion    = "09" // NC/ND only
	DocRefMesVencido    = "13"
	DocRefNoDomiciliado = "16" // FEC only
	DocRefOtros         = "99"
)

// Reference codes (nota 9).
var codigosReferencia = newCodeSet("01", "02", "04", "05", "06", "07", "08", "09", "10", "11", "12", "99")

// Reference codes the rules refer to.
const (
	RefCreditoExoneracion = "12" // NC only
	RefOtros              = "99"
)

// Discount codes (nota 20).
var codigosDescuento = newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "09", "99")

// Discount codes the rules refer to.
const (
	DescuentoRegalia           = "01" // the issuer bears the IVA
	DescuentoRegaliaIVACliente = "02" // the client pays the IVA
	DescuentoBonificacion      = "03" // the issuer bears the IVA
	DescuentoOtros             = "99"
)

// Commercial code types (nota 12).
var tiposCodigoComercial = newCodeSet("01", "02", "03", "04", "99")

// IVA charged at factory level (nota 21).
var ivaCobradoFabrica = newCodeSet("01", "02")

// Factory-level IVA codes.
const (
	IVAFabricaSeparado = "01"
	IVAFabricaExento   = "02"
)

// Transaction types (nota 22).
var tiposTransaccion = newCodeSet("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13")

// Provinces (nota 14): 1 San José … 7 Limón, from the location catalogue
// (location.go).
var provincias = catalogue.provincias

// Code lists taken unchanged from the tax authority's published v4.4 data:
// the UnidadMedidaType and CodigoMoneda enumerations of the official v4.4
// schemas and the pharmaceutical-form codes of nota 19
// (Nota_9_Codigo_Forma_Farmaceutica.xlsx), all published by the Ministerio
// de Hacienda. Regenerate from those files when they change. The
// province/canton/district codes of nota 14 are read from the location
// catalogue (location.go).

// unidadesMedida is the UnidadMedidaType enumeration (nota 15); symbols are
// case-sensitive.
var unidadesMedida = newCodeSet(
	"1", "´", "´´", "°C", "1/m", "A", "A/m", "A/m²", "Acv", "Al", "Alc", "B",
	"Bq", "C", "C/kg", "C/m²", "C/m³", "Cc", "Cd", "cd/m²", "Cm", "cm", "Cu", "D",
	"eV", "F", "F/m", "Fa", "G", "Gal", "Gy", "Gy/s", "h", "H", "H/m", "Hz",
	"I", "J", "J/(kg·K)", "J/(mol·K)", "J/K", "J/kg", "J/m³", "J/mol", "K", "Kat", "kat/m³", "Kg",
	"kg/m³", "Km", "Kw", "kWh", "L", "Lm", "Ln", "Lx", "M", "m/s", "m/s²", "m²",
	"m³", "Min", "mL", "Mm", "Mol", "mol/m³", "N", "N/m", "N·m", "Np", "º", "Os",
	"Otros", "Oz", "Pa", "Pa·s", "Qq", "Rad", "rad/s", "rad/s²", "S", "s", "Sp", "Spe",
	"Sr", "St", "Sv", "t", "T", "U", "Ua", "Unid", "V", "V/m", "W", "W/(m·K)",
	"W/(m²·sr)", "W/m²", "W/sr", "Wb", "Ω",
)

// monedas is the CodigoMoneda enumeration (nota 13.1, ISO 4217).
var monedas = newCodeSet(
	"AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN", "BHD", "BIF",
	"BMD", "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYR", "BZD", "CAD", "CDF", "CHE", "CHF", "CHW", "CLF",
	"CLP", "CNY", "COP", "COU", "CRC", "CUC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB",
	"EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HRK", "HTG", "HUF",
	"IDR", "ILS", "INR", "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD",
	"KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRO",
	"MUR", "MVR", "MWK", "MXN", "MXV", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN",
	"PGK", "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD",
	"SHP", "SLL", "SOS", "SRD", "SSP", "STD", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY", "TTD",
	"TWD", "TZS", "UAH", "UGX", "USD", "USN", "UYI", "UYU", "UZS", "VEF", "VND", "VUV", "WST", "XAF", "XCD", "XDR",
	"XOF", "XPF", "XSU", "XUA", "YER", "ZAR", "ZMW", "ZWL",
)

// formasFarmaceuticas are the nota-19 pharmaceutical-form codes.
var formasFarmaceuticas = newCodeSet(
	"01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20",
	"21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31", "32", "33", "34", "35", "36", "37", "38", "39", "40",
	"41", "42", "43", "44", "45", "46", "47", "48", "49", "50", "51", "52", "53", "54", "55", "56", "57", "58", "59", "60",
	"61", "62", "63", "64", "65", "66", "67", "68", "69", "70", "71", "72", "73", "74", "75", "76", "77", "78", "79", "80",
	"81", "82", "83", "84", "85", "86", "87", "88", "89", "90", "91", "92", "93", "94", "95", "96", "97", "98", "99", "100",
	"101", "102", "103", "104", "105", "106", "107", "108", "109", "110", "111", "112", "113", "114", "115", "116", "117", "118", "119", "120",
	"121", "122", "123", "124", "125", "126", "127", "128", "129", "130", "131", "132", "133", "134", "135", "136", "137", "138", "139", "140",
	"141", "142", "143", "144", "145", "146", "147", "148", "149", "150", "151", "152", "153", "154", "155", "156", "157", "158", "159", "160",
	"161", "162", "163", "164", "165", "166", "167", "168", "169", "170", "171", "172", "173", "174", "175", "176", "177", "178", "179", "180",
	"181", "182", "183", "184", "185", "186", "187", "188", "189", "190", "191", "192", "193", "194", "195", "196", "197", "198", "199", "200",
	"201", "202", "203", "204", "205", "206", "207", "208", "209", "210", "211", "212", "213", "214", "215", "216", "217", "218", "219", "220",
	"221", "222", "223", "224", "225", "226", "227", "228", "229",
)

// distritos holds every valid province+canton+district as the 5 digits
// P CC DD of nota 14, from the location catalogue (location.go).
var distritos = catalogue.distritos

// KnownLocation reports whether provincia (one digit), canton and distrito
// (two digits each) name a district of the nota-14 location catalogue.
func KnownLocation(provincia, canton, distrito string) bool {
	return distritos.has(provincia + canton + distrito)
}

// KnownCanton reports whether provincia and canton name a cantón of the
// nota-14 location catalogue.
func KnownCanton(provincia, canton string) bool {
	if len(provincia) != 1 || len(canton) != 2 {
		return false
	}
	_, ok := catalogue.names[provincia+canton]
	return ok
}

// KnownCurrency reports whether code is a CodigoMoneda of nota 13.1 (ISO
// 4217, as the v4.4 schemas enumerate it).
func KnownCurrency(code string) bool { return monedas.has(code) }

// ExoneracionNeedsArticulo reports whether an exemption of document type
// tipo (TipoDocumentoEX1) must name the article and inciso of the law.
func ExoneracionNeedsArticulo(tipo string) bool { return tiposExoneracionArticulo.has(tipo) }

// ExoneracionInRegistry reports whether an exemption of document type tipo
// (TipoDocumentoEX1) is an authorisation of the tax authority's exoneration
// registry, which it checks the document against.
func ExoneracionInRegistry(tipo string) bool { return tiposExoneracionRegistro.has(tipo) }

// CodeList names the code lists [CodeLists] returns.
type CodeList string

// The code lists a request's fields are checked against, by the name the
// API description uses for them.
const (
	ListTipoDocumento      CodeList = "tipoDocumento"       // 01 … 10, the document types
	ListSituacion          CodeList = "situacion"           // nota 3
	ListTipoIdentificacion CodeList = "tipoIdentificacion"  // nota 4
	ListCondicionVenta     CodeList = "condicionVenta"      // nota 5, every document type's codes
	ListMedioPago          CodeList = "medioPago"           // nota 6
	ListCodigoImpuesto     CodeList = "codigoImpuesto"      // nota 8
	ListCodigoTarifaIVA    CodeList = "codigoTarifaIVA"     // nota 8.1
	ListTipoDocumentoEX    CodeList = "tipoDocumentoEX"     // nota 10.1
	ListInstitucion        CodeList = "institucion"         // nota 23
	ListTipoOtroCargo      CodeList = "tipoOtroCargo"       // nota 16
	ListTipoDocReferencia  CodeList = "tipoDocReferencia"   // nota 10
	ListCodigoReferencia   CodeList = "codigoReferencia"    // nota 9
	ListCodigoDescuento    CodeList = "codigoDescuento"     // nota 20
	ListTipoCodigo         CodeList = "tipoCodigoComercial" // nota 12
	ListIVACobradoFabrica  CodeList = "ivaCobradoFabrica"   // nota 21
	ListTipoTransaccion    CodeList = "tipoTransaccion"     // nota 22
	ListProvincia          CodeList = "provincia"           // nota 14
	ListUnidadMedida       CodeList = "unidadMedida"        // nota 15
	ListMoneda             CodeList = "moneda"              // nota 13.1
	ListFormaFarmaceutica  CodeList = "formaFarmaceutica"   // nota 19
)

// CodeLists returns every code list a request field is checked against,
// each sorted, so that a description of the API (the OpenAPI document's
// enumerations) can be compared with what the service really accepts. The
// slices are the caller's.
func CodeLists() map[CodeList][]string {
	condiciones := make(codeSet)
	for _, s := range condicionesVenta {
		for c := range s {
			condiciones[c] = struct{}{}
		}
	}
	tarifas := make(codeSet, len(tarifasIVA))
	for c := range tarifasIVA {
		tarifas[c] = struct{}{}
	}
	tipos := make(codeSet, len(DocumentTypes))
	for _, t := range DocumentTypes {
		tipos[string(t)] = struct{}{}
	}
	m := map[CodeList]codeSet{
		ListTipoDocumento: tipos, ListSituacion: situaciones, ListTipoIdentificacion: tiposIdentificacion,
		ListCondicionVenta: condiciones, ListMedioPago: mediosPago, ListCodigoImpuesto: codigosImpuesto,
		ListCodigoTarifaIVA: tarifas, ListTipoDocumentoEX: tiposExoneracion, ListInstitucion: instituciones,
		ListTipoOtroCargo: tiposOtrosCargos, ListTipoDocReferencia: tiposDocReferencia,
		ListCodigoReferencia: codigosReferencia, ListCodigoDescuento: codigosDescuento,
		ListTipoCodigo: tiposCodigoComercial, ListIVACobradoFabrica: ivaCobradoFabrica,
		ListTipoTransaccion: tiposTransaccion, ListProvincia: provincias, ListUnidadMedida: unidadesMedida,
		ListMoneda: monedas, ListFormaFarmaceutica: formasFarmaceuticas,
	}
	out := make(map[CodeList][]string, len(m))
	for name, s := range m {
		out[name] = s.sorted()
	}
	return out
}

// sorted returns the codes in a stable order: by length, then bytewise
// (so "2" comes before "10").
func (s codeSet) sorted() []string {
	out := make([]string, 0, len(s))
	for c := range s {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	return out
}
