package sandbox

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"facturad/hacienda"
)

// This file is the simulated registries' data set: the taxpayers, the
// CAByS catalog, the exoneration authorisations and the dollar's exchange
// rate. It is deterministic, permissive by rule and refusing by name, so
// that any test may issue to made-up data and an integrator can try every
// refusal. docs/sandbox-registry.md lists every rule and every named entry;
// keep the two together.

// regTaxpayer is a taxpayer as /fe/ae answers it.
type regTaxpayer struct {
	Nombre             string        `json:"nombre"`
	TipoIdentificacion string        `json:"tipoIdentificacion"`
	Regimen            regRegimen    `json:"regimen"`
	Situacion          regSituacion  `json:"situacion"`
	Actividades        []regActivity `json:"actividades"`
}

type regRegimen struct {
	Codigo      int    `json:"codigo"`
	Descripcion string `json:"descripcion"`
}

type regSituacion struct {
	Moroso                   string `json:"moroso"`
	Omiso                    string `json:"omiso"`
	Estado                   string `json:"estado"`
	AdministracionTributaria string `json:"administracionTributaria"`
	Mensaje                  string `json:"mensaje,omitempty"`
}

type regActivity struct {
	Estado      string `json:"estado"`
	Tipo        string `json:"tipo"`
	Codigo      string `json:"codigo"`
	Descripcion string `json:"descripcion"`
}

// registered reports whether the taxpayer is registered ("Inscrito...").
func (t regTaxpayer) registered() bool { return strings.HasPrefix(t.Situacion.Estado, "Inscrito") }

var (
	regimenGeneral      = regRegimen{Codigo: 1, Descripcion: "Régimen general"}
	regimenSimplificado = regRegimen{Codigo: 2, Descripcion: "Régimen simplificado"}
)

// standardActivities are the activities of every taxpayer registered by
// rule: the CIIU 4 codes, the six-digit codes of before TRIBU-CR that
// callers still send, all active, and one inactive activity.
var standardActivities = []regActivity{
	{"A", "P", "6201.0", "Actividades de programación informática"},
	{"A", "S", "4741.0", "Venta al por menor de computadoras, equipo periférico, programas informáticos y equipo de telecomunicaciones en comercios especializados"},
	{"A", "S", "5610.0", "Actividades de restaurantes y de servicio móvil de comidas"},
	{"A", "S", "4711.0", "Venta al por menor en comercios no especializados con predominio de la venta de alimentos, bebidas o tabaco"},
	{"A", "S", "7020.0", "Actividades de consultoría de gestión"},
	{"A", "S", "6920.0", "Actividades de contabilidad, teneduría de libros y auditoría; consultoría fiscal"},
	{"A", "S", "8299.0", "Otras actividades de servicios de apoyo a las empresas n.c.p."},
	{"A", "S", "620100", "ACTIVIDADES DE PROGRAMACION INFORMATICA"},
	{"A", "S", "522003", "VENTA AL POR MENOR DE ARTICULOS DE FERRETERIA"},
	{"A", "S", "722003", "SERVICIOS DE PROGRAMACION DE SISTEMAS"},
	{"A", "S", "721001", "CONSULTORES INFORMATICOS"},
	{"A", "S", "011301", "CULTIVO DE HORTALIZAS Y LEGUMBRES"},
	{"I", "S", "9609.0", "Otras actividades de servicios personales n.c.p."},
}

// namedTaxpayers are the taxpayers with data of their own.
var namedTaxpayers = map[string]regTaxpayer{
	// Registered with one active activity: any other activity is not its.
	"3101471100": {
		Nombre: "SUPERMERCADO DE PRUEBA SOCIEDAD ANONIMA", TipoIdentificacion: hacienda.IDJuridica, Regimen: regimenGeneral,
		Situacion: regSituacion{Moroso: "NO", Omiso: "NO", Estado: "Inscrito", AdministracionTributaria: "San Jose"},
		Actividades: []regActivity{
			{"A", "P", "4711.0", "Venta al por menor en comercios no especializados con predominio de la venta de alimentos, bebidas o tabaco"},
			{"I", "S", "6201.0", "Actividades de programación informática"},
		},
	},
	// Struck off by the tax authority.
	"3101777777": {
		Nombre: "EMPRESA DESINSCRITA DE PRUEBA SOCIEDAD ANONIMA", TipoIdentificacion: hacienda.IDJuridica, Regimen: regimenGeneral,
		Situacion: regSituacion{Moroso: "NO", Omiso: "SI", Estado: "Desinscrito oficio", AdministracionTributaria: "San Jose",
			Mensaje: "Contribuyente desinscrito de oficio por la Administración Tributaria (dato del ambiente de pruebas)."},
		Actividades: []regActivity{},
	},
	// Registered in the simplified regime, in arrears.
	"205550777": {
		Nombre: "CONTRIBUYENTE SIMPLIFICADO DE PRUEBA", TipoIdentificacion: hacienda.IDFisica, Regimen: regimenSimplificado,
		Situacion: regSituacion{Moroso: "SI", Omiso: "NO", Estado: "Inscrito", AdministracionTributaria: "Heredia"},
		Actividades: []regActivity{
			{"A", "P", "5610.0", "Actividades de restaurantes y de servicio móvil de comidas"},
		},
	},
}

// idType is the identification type a well-formed identification has, ""
// for a malformed one (the registry's 400): 9 digits without a leading
// zero a cédula física (01); 10 digits a cédula jurídica (02) when it
// starts with 3, a NITE (04) otherwise; 11 or 12 digits without a leading
// zero a DIMEX (03).
func idType(id string) string {
	if !allDigits(id) || id[0] == '0' {
		return ""
	}
	switch len(id) {
	case 9:
		return hacienda.IDFisica
	case 10:
		if id[0] == '3' {
			return hacienda.IDJuridica
		}
		return hacienda.IDNITE
	case 11, 12:
		return hacienda.IDDIMEX
	}
	return ""
}

func allDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// taxpayerLookup is what the taxpayer registry says of an identification.
type taxpayerLookup int

const (
	taxpayerFound taxpayerLookup = iota
	taxpayerUnknown
	taxpayerMalformed
)

// lookupTaxpayer finds a taxpayer: a named one, else by rule.
func lookupTaxpayer(id string) (regTaxpayer, taxpayerLookup) {
	tipo := idType(id)
	if tipo == "" {
		return regTaxpayer{}, taxpayerMalformed
	}
	if t, ok := namedTaxpayers[id]; ok {
		return t, taxpayerFound
	}
	switch {
	case strings.HasSuffix(id, "0000"):
		return regTaxpayer{}, taxpayerUnknown
	case strings.HasSuffix(id, "9999"):
		return regTaxpayer{
			Nombre: "CONTRIBUYENTE DE PRUEBA " + id, TipoIdentificacion: tipo, Regimen: regRegimen{Codigo: 0, Descripcion: "No aplica"},
			Situacion: regSituacion{Moroso: "NO", Omiso: "NO", Estado: "No inscrito", AdministracionTributaria: "San Jose",
				Mensaje: "El contribuyente no se encuentra inscrito ante la Administración Tributaria (dato del ambiente de pruebas)."},
			Actividades: []regActivity{},
		}, taxpayerFound
	}
	return regTaxpayer{
		Nombre: "CONTRIBUYENTE DE PRUEBA " + id, TipoIdentificacion: tipo, Regimen: regimenGeneral,
		Situacion:   regSituacion{Moroso: "NO", Omiso: "NO", Estado: "Inscrito", AdministracionTributaria: "San Jose"},
		Actividades: append([]regActivity(nil), standardActivities...),
	}, taxpayerFound
}

// regCabys is an entry of the CAByS catalog, as /fe/cabys?q= answers it
// (a question by code gets codigo, descripcion, categorias and impuesto).
type regCabys struct {
	Codigo      string   `json:"codigo"`
	Descripcion string   `json:"descripcion"`
	Categorias  []string `json:"categorias"`
	Impuesto    float64  `json:"impuesto"`
	URI         string   `json:"uri"`
	Estado      string   `json:"estado"`
}

// cabysSections are the catalog's sections, by a code's first digit.
var cabysSections = [10]string{
	"Productos de la agricultura, la silvicultura y la pesca",
	"Minerales; electricidad, gas y agua",
	"Productos alimenticios, bebidas y tabaco; textiles, prendas de vestir y productos de cuero",
	"Otros bienes transportables, excepto productos metálicos, maquinaria y equipo",
	"Productos metálicos, maquinaria y equipo",
	"Construcciones y servicios de construcción",
	"Servicios de distribución; alojamiento; suministro de comidas y bebidas; transporte",
	"Servicios financieros y conexos; servicios inmobiliarios; servicios de arrendamiento",
	"Servicios prestados a las empresas y servicios de producción",
	"Servicios para la comunidad, sociales y personales",
}

// namedCabys are the catalog's named entries: code, description, IVA rate.
// Their descriptions are the sandbox's own, chosen to match how the
// repository's examples use the codes; they are not the real catalog's.
var namedCabys = []struct {
	codigo, descripcion string
	impuesto            float64
}{
	{"0111100000100", "Trigo en grano", 1},
	{"0121000000100", "Café en grano sin tostar", 1},
	{"2111100000100", "Artículo de ferretería", 13},
	{"2132100000100", "Jugo de tomate concentrado", 13},
	{"2291000000100", "Leche fluida pasteurizada", 1},
	{"2311000000100", "Arroz pilado", 1},
	{"2392000000000", "Mercancía general de uso doméstico", 13},
	{"2411000000100", "Cerveza de malta", 13},
	{"2441000000100", "Bebidas gaseosas sin alcohol", 13},
	{"2501000000100", "Cigarrillos de tabaco", 13},
	{"3211000000100", "Papel para impresión", 13},
	{"3215000000100", "Cuadernos escolares", 13},
	{"3330000000100", "Gasolina súper", 0},
	{"3521000000100", "Medicamentos para uso humano", 2},
	{"3532100000100", "Jabón de tocador", 13},
	{"3744000000100", "Cemento portland", 13},
	{"4321000000200", "Herramientas de mano y artículos de ferretería", 13},
	{"4521000000100", "Computadoras portátiles", 13},
	{"6311000000100", "Servicios de hospedaje en hoteles", 13},
	{"6331000000100", "Servicios de restaurante", 13},
	{"6411000000300", "Servicios de mensajería y entrega local", 13},
	{"7211200000100", "Servicios de alquiler de bienes inmuebles residenciales", 13},
	{"8111100000000", "Servicios de investigación y desarrollo", 13},
	{"8211000000100", "Servicios de asesoría jurídica", 13},
	{"8221000000100", "Servicios de contabilidad y auditoría", 13},
	{"8311100000100", "Servicios profesionales de consultoría en gestión", 13},
	{"8314100000000", "Servicios de consultoría en tecnologías de la información", 13},
	{"8399000000000", "Otros servicios profesionales y técnicos", 13},
	{"8431000000100", "Servicios de acceso a internet", 13},
	{"9211000000100", "Servicios de educación preescolar", 2},
	{"9312100000100", "Servicios de consulta médica general", 4},
}

// cabysEntry builds the catalog's answer for an entry.
func cabysEntry(codigo, descripcion string, impuesto float64) regCabys {
	cats := []string{cabysSections[codigo[0]-'0']}
	for len(cats) < 8 {
		// The catalog's tree has eight levels; a shallower branch repeats
		// its description down to the last.
		cats = append(cats, descripcion)
	}
	return regCabys{Codigo: codigo, Descripcion: descripcion, Categorias: cats, Impuesto: impuesto,
		URI: "/fe/cabys?codigo=" + codigo, Estado: ""}
}

// lookupCabys finds a code in the catalog in force: a named entry, else by
// rule any 13-digit code at 13 %, except codes ending in 999, which are not
// in force.
func lookupCabys(code string) (regCabys, bool) {
	if !digits(code, 13) {
		return regCabys{}, false
	}
	for _, c := range namedCabys {
		if c.codigo == code {
			return cabysEntry(c.codigo, c.descripcion, c.impuesto), true
		}
	}
	if strings.HasSuffix(code, "999") {
		return regCabys{}, false
	}
	return cabysEntry(code, "Bien o servicio de prueba "+code, 13), true
}

// fold is text for a search: lower case, without accents.
func fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(s)) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// searchCabys returns the named entries whose description holds every word
// of q, case and accents aside, in code order.
func searchCabys(q string) []regCabys {
	words := strings.FieldsFunc(fold(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return []regCabys{}
	}
	out := []regCabys{}
	for _, c := range namedCabys {
		d := fold(c.descripcion) + " " + c.codigo
		all := true
		for _, w := range words {
			if !strings.Contains(d, w) {
				all = false
				break
			}
		}
		if all {
			out = append(out, cabysEntry(c.codigo, c.descripcion, c.impuesto))
		}
	}
	return out
}

// regExoneration is an authorisation as /fe/ex answers it.
type regExoneration struct {
	NumeroDocumento       string      `json:"numeroDocumento"`
	Identificacion        string      `json:"identificacion"`
	CodigoProyectoCFIA    int         `json:"codigoProyectoCFIA"`
	PorcentajeExoneracion int         `json:"porcentajeExoneracion"`
	Autorizacion          int         `json:"autorizacion"`
	FechaEmision          string      `json:"fechaEmision"`
	FechaVencimiento      string      `json:"fechaVencimiento"`
	Ano                   int         `json:"ano"`
	Cabys                 []string    `json:"cabys,omitempty"`
	TipoAutorizacion      string      `json:"tipoAutorizacion"`
	TipoDocumento         regCodeName `json:"tipoDocumento"`
	CodigoInstitucion     string      `json:"CodigoInstitucion"`
	NombreInstitucion     string      `json:"nombreInstitucion"`
	PoseeCabys            bool        `json:"poseeCabys"`
}

type regCodeName struct {
	Codigo      string `json:"codigo"`
	Descripcion string `json:"descripcion"`
}

var (
	exTipo04 = regCodeName{Codigo: "04", Descripcion: "Exenciones Dirección General de Hacienda"}
	exTipo11 = regCodeName{Codigo: "11", Descripcion: "Exenciones Dirección General de Hacienda Autorización de Impuesto Local Concreta"}
)

// exoneration builds an authorisation; dates are YYYY-MM-DD.
func exoneration(numero, id string, tipo regCodeName, porcentaje int, emision, vence string, cabys ...string) regExoneration {
	n, _ := strconv.Atoi(numero[3:11])
	ano, _ := strconv.Atoi(emision[:4])
	return regExoneration{
		NumeroDocumento: numero, Identificacion: id, PorcentajeExoneracion: porcentaje, Autorizacion: n,
		FechaEmision: emision + "T00:00:00", FechaVencimiento: vence + "T00:00:00", Ano: ano,
		Cabys: cabys, TipoAutorizacion: "exoneracion", TipoDocumento: tipo,
		CodigoInstitucion: "01", NombreInstitucion: "Ministerio de Hacienda", PoseeCabys: len(cabys) > 0,
	}
}

// namedExonerations are the registry's authorisations, by number. The
// percentage is in points of the tax's rate, as TarifaExonerada is (13 is
// all of a 13 % IVA).
var namedExonerations = func() map[string]regExoneration {
	m := map[string]regExoneration{}
	for _, e := range []regExoneration{
		// The examples' authorisation: any CAByS code, all of the IVA.
		exoneration("AL-00012345-24", "114440555", exTipo04, 13, "2026-01-10", "2035-12-31"),
		exoneration("AL-00012346-24", "155812345678", exTipo04, 13, "2026-01-10", "2035-12-31"),
		// The tax authority's documented example, as it answers it
		// (expired since 2021-12-15).
		exoneration("AL-00460853-20", "401760738", exTipo04, 13, "2020-12-15", "2021-12-15", "7211200000100"),
		// All of the IVA, for a list of codes.
		exoneration("AL-00100001-26", "3102987654", exTipo04, 13, "2026-01-05", "2035-12-31",
			"8314100000000", "8311100000100", "4521000000100"),
		// Part of the IVA (10 points of 13), for a list of codes.
		exoneration("AL-00100002-26", "114440555", exTipo04, 10, "2026-01-05", "2035-12-31", "2111100000100", "4321000000200"),
		// Expired on 2024-12-31.
		exoneration("AL-00100003-23", "114440555", exTipo04, 13, "2023-03-01", "2024-12-31"),
		// Valid, but another taxpayer's: for any receptor but 3101471100.
		exoneration("AL-00100004-26", "3101471100", exTipo04, 13, "2026-01-05", "2035-12-31"),
		// A type 11 authorisation (impuesto local concreta).
		exoneration("AL-00100005-26", "114440555", exTipo11, 13, "2026-01-05", "2035-12-31"),
	} {
		m[e.NumeroDocumento] = e
	}
	return m
}()

// exonerationNumber is the registry's form of an authorisation number:
// two letters, eight digits, two digits.
var exonerationNumber = regexp.MustCompile(`^[A-Za-z]{2}-[0-9]{8}-[0-9]{2}$`)

// lookupExoneration finds an authorisation; malformed reports a number
// not of the registry's form (its 400).
func lookupExoneration(numero string) (e regExoneration, found, malformed bool) {
	if !exonerationNumber.MatchString(numero) {
		return regExoneration{}, false, true
	}
	e, found = namedExonerations[strings.ToUpper(numero)]
	return e, found, false
}

// expired reports whether the authorisation has expired on day (its
// FechaVencimiento is valid through its end).
func (e regExoneration) expired(day string) bool { return day > e.FechaVencimiento[:10] }

// covers reports whether the authorisation allows the CAByS code.
func (e regExoneration) covers(code string) bool {
	if !e.PoseeCabys {
		return true
	}
	for _, c := range e.Cabys {
		if c == code {
			return true
		}
	}
	return false
}

// firstRateDay is the first day the simulated central bank has a rate
// for; earlier days have none.
var firstRateDay = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// dollarRate is the dollar's rate on a day (YYYY-MM-DD): a smooth
// function of the date around ₡500, with two decimals, the sale above the
// purchase; ok is false before firstRateDay.
func dollarRate(day string) (compra, venta float64, ok bool) {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil || t.Before(firstRateDay) {
		return 0, 0, false
	}
	n := t.Sub(firstRateDay).Hours() / 24
	v := 500 + 20*math.Sin(2*math.Pi*n/365.25) + 4*math.Sin(2*math.Pi*n/29.5)
	venta = math.Round(v*100) / 100
	compra = math.Round((v-6.5)*100) / 100
	return compra, venta, true
}
