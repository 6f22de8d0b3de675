package hacienda

import "github.com/shopspring/decimal"

// This file holds every v4.4 code list (the "notas" of Anexo 1) in one
// place, with the document types that may use each restricted code. The
// long official enumerations (units, currencies, pharmaceutical forms,
// locations) are in codes_data.go.

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

// Identification types (nota 4).
const (
	IDFisica          = "01" // cédula física: 9 digits
	IDJuridica        = "02" // cédula jurídica: 10 digits
	IDDIMEX           = "03" // DIMEX: 11 or 12 digits
	IDNITE            = "04" // NITE: 10 digits
	IDExtranjeroNoDom = "05" // extranjero no domiciliado: up to 20 letters/digits
	IDNoContribuyente = "06" // no contribuyente: up to 20 letters/digits
)

var tiposIdentificacion = newCodeSet(IDFisica, IDJuridica, IDDIMEX, IDNITE, IDExtranjeroNoDom, IDNoContribuyente)

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

// Provinces (nota 14): 1 San José … 7 Limón.
var provincias = newCodeSet("1", "2", "3", "4", "5", "6", "7")
