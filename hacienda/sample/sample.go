// Package sample generates realistic, valid v4.4 send requests and
// documents: test data for the tests and benchmarks of every package and
// the requests of the load generator (cmd/loadgen). Output is
// deterministic for a seed. It lives apart from package hacienda so that no production
// path of the engine carries it.
package sample

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
)

// Issuer returns a realistic issuing company (a fictitious cédula
// jurídica in San José) as the tenant records would provide it.
func Issuer() hacienda.Issuer {
	return hacienda.Issuer{
		Party: hacienda.Party{
			Nombre:            "Comercializadora Ejemplo Sociedad Anónima",
			Identificacion:    hacienda.Identificacion{Tipo: hacienda.IDJuridica, Numero: "3101123456"},
			NombreComercial:   "Ejemplo",
			Ubicacion:         &hacienda.Ubicacion{Provincia: "1", Canton: "01", Distrito: "01", Barrio: "Barrio Amón", OtrasSenas: "Avenida 7, calles 3 y 5, edificio azul"},
			Telefono:          &hacienda.Telefono{CodigoPais: "506", NumTelefono: "22223333"},
			CorreoElectronico: []string{"facturacion@ejemplo.cr"},
		},
		CodigoActividad:   "522003",
		ProveedorSistemas: "3101123456",
	}
}

// Requests returns n valid send requests that together cover every
// document type (cycled in the order FE, ND, NC, TE, FEC, FEE, REP), goods
// and services, discounts by amount and by percentage, every IVA rate code,
// exempt, exonerated (fully and partially) and not-subject lines, the
// specific taxes, factory-level IVA, regalías, other charges by amount and
// by percentage, foreign currencies, references, credit sales and every
// means of payment (also several at once). Any 40 consecutive requests
// cover all of it.
func Requests(seed int64, n int) []*hacienda.SendDocumentRequest {
	out := make([]*hacienda.SendDocumentRequest, 0, n)
	for i := 0; i < n; i++ {
		g := &generator{r: rand.New(rand.NewPCG(uint64(seed), uint64(i))), i: i}
		out = append(out, g.request())
	}
	return out
}

// Documents returns n calculated documents built from
// Requests with Issuer, each with a clave, a consecutivo and
// an issue date (2026-11-21 in Costa Rica time, one minute apart) so that
// they are complete, unsigned v4.4 documents. It panics if a generated
// request does not validate, which would be a bug in this package.
func Documents(seed int64, n int) []*hacienda.Document {
	issuer := Issuer()
	reqs := Requests(seed, n)
	docs := make([]*hacienda.Document, 0, n)
	base := time.Date(2026, 11, 21, 9, 0, 0, 0, hacienda.CostaRica)
	for i, req := range reqs {
		doc, err := hacienda.NewDocument(req, issuer)
		if err != nil {
			panic(fmt.Sprintf("sample: generated request %d (type %s) does not validate: %v", i, req.TipoDocumento, err))
		}
		doc.FechaEmision = base.Add(time.Duration(i) * time.Minute)
		consecutivo := "001" + req.TerminalOrDefault() + string(doc.Type) + fmt.Sprintf("%010d", i+1)
		doc.NumeroConsecutivo = consecutivo
		if doc.Clave == "" {
			doc.Clave = "506" + doc.FechaEmision.Format("020106") + leftPad(doc.Issuer().Numero, 12) +
				consecutivo + req.SituacionOrDefault() + fmt.Sprintf("%08d", (i*7919+seedDigits(seed))%100000000)
		}
		docs = append(docs, doc)
	}
	return docs
}

func leftPad(s string, n int) string {
	if len(s) >= n {
		return s[len(s)-n:]
	}
	return strings.Repeat("0", n-len(s)) + s
}

func seedDigits(seed int64) int {
	if seed < 0 {
		seed = -seed
	}
	return int(seed % 100000000)
}

type generator struct {
	r *rand.Rand
	i int
}

func (g *generator) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// money returns a random amount with up to 2 decimals in [min, max).
func (g *generator) money(min, max int) hacienda.Amount {
	cents := int64(min*100) + g.r.Int64N(int64((max-min)*100))
	return hacienda.NewAmount(decimalFromCents(cents))
}

func decimalFromCents(c int64) decimal.Decimal { return decimal.New(c, -2) }

// Sample codes: plausible 13-digit CAByS codes by kind (the first digit
// decides goods 0–4 or services 5–9; 931 is a human health service).
const (
	cabysGoods    = "2111100000100"
	cabysGoods2   = "4321000000200"
	cabysService  = "8311100000100"
	cabysService2 = "6411000000300"
	cabysHealth   = "9312100000100"
	cabysSoap     = "3532100000100"
	cabysBeverage = "2441000000100"
	cabysAlcohol  = "2411000000100"
	cabysFuel     = "3330000000100"
	cabysTobacco  = "2501000000100"
	cabysCement   = "3744000000100"
)

// ReferencedClave is the clave the samples' credit and debit notes (and
// receipts of payment) refer to. The tax authority accepts a note only when
// it refers to a document it received: a caller sending samples to a
// strict sandbox sends an FE first and puts that FE's clave in place of
// this one.
const ReferencedClave = "50621112600310112345600100001010000000001100000001"

func (g *generator) request() *hacienda.SendDocumentRequest {
	types := hacienda.DocumentTypes
	t := types[g.i%len(types)]
	variant := g.i / len(types) // 0..5 within 40 requests
	req := &hacienda.SendDocumentRequest{
		IDExterno:      "gen-" + strconv.Itoa(g.i) + "-" + strconv.FormatUint(g.r.Uint64()%1000000, 10),
		TipoDocumento:  hacienda.FlexString(t),
		Terminal:       "00001",
		Situacion:      "1",
		CondicionVenta: hacienda.CondicionContado,
	}
	moneda := "CRC"
	switch (g.i / 3) % 4 {
	case 1:
		moneda = "USD"
	case 3:
		moneda = "EUR"
	}
	req.ResumenFactura.CodigoTipoMoneda = hacienda.CodigoTipoMoneda{CodigoMoneda: moneda, TipoCambio: hacienda.AmountFromInt(1)}
	switch moneda {
	case "USD":
		req.ResumenFactura.CodigoTipoMoneda.TipoCambio = hacienda.MustAmount("506.25")
	case "EUR":
		req.ResumenFactura.CodigoTipoMoneda.TipoCambio = hacienda.MustAmount("587.1")
	}

	// Receptor.
	req.Receptor = g.receptor(t, variant)

	// Lines.
	if t == hacienda.TypeREP {
		req.CondicionVenta = hacienda.FlexString(g.pick("09", "11"))
		for k := 0; k < 1+g.r.IntN(3); k++ {
			mt := g.money(1000, 200000)
			req.DetalleServicio = append(req.DetalleServicio, hacienda.LineaDetalle{
				NumeroLinea: k + 1, Detalle: "Pago de la cuota " + strconv.Itoa(k+1) + " de la factura 0000000001",
				MontoTotal: mt, SubTotal: mt,
				Impuesto: []hacienda.Impuesto{{Codigo: hacienda.ImpuestoIVA, CodigoTarifaIVA: g.pick("08", "04", "02")}},
			})
		}
		req.InformacionReferencia = []hacienda.InformacionReferencia{{TipoDocIR: "01", Numero: ReferencedClave,
			FechaEmisionIR: time.Date(2026, 10, 15, 10, 0, 0, 0, hacienda.CostaRica), Codigo: "04", Razon: "Pago de factura a crédito"}}
		req.ResumenFactura.MedioPago = []hacienda.MedioPago{{TipoMedioPago: g.pick("01", "04", "06")}}
		return req
	}
	nLines := 1 + g.r.IntN(6)
	for k := 0; k < nLines; k++ {
		req.DetalleServicio = append(req.DetalleServicio, g.line(t, variant, k))
	}
	// Guaranteed features by position so that 40 requests cover them all.
	g.addFeature(req, t)

	if t == hacienda.TypeFEE {
		for k := range req.DetalleServicio {
			if l := &req.DetalleServicio[k]; l.CodigoCABYS[0] < '5' {
				l.PartidaArancelaria = "847130000000"
			}
		}
	}

	// Header by type.
	switch t {
	case hacienda.TypeNC, hacienda.TypeND:
		code := g.pick("01", "02", "04")
		if t == hacienda.TypeNC && g.i%2 == 0 {
			code = "06"
		}
		req.InformacionReferencia = []hacienda.InformacionReferencia{{TipoDocIR: "01", Numero: ReferencedClave,
			FechaEmisionIR: time.Date(2026, 11, 1, 8, 30, 0, 0, hacienda.CostaRica), Codigo: code, Razon: "Ajuste de la factura original"}}
	case hacienda.TypeFEC:
		req.CodigoActividadReceptor = "522003"
		switch req.Receptor.Identificacion.Tipo {
		case hacienda.IDExtranjeroNoDom:
			req.InformacionReferencia = []hacienda.InformacionReferencia{{TipoDocIR: "16", Numero: "INV-2026-0042",
				FechaEmisionIR: time.Date(2026, 11, 20, 12, 0, 0, 0, hacienda.CostaRica), Codigo: "11", Razon: "Servicio de proveedor no domiciliado"}}
		default:
			if req.Receptor.Identificacion.Tipo == hacienda.IDNoContribuyente {
				req.CondicionVenta = hacienda.CondicionUsadosNoContrib
			}
			req.InformacionReferencia = []hacienda.InformacionReferencia{{TipoDocIR: "06", Numero: "CT-2026-0107",
				FechaEmisionIR: time.Date(2026, 11, 2, 9, 0, 0, 0, hacienda.CostaRica), Codigo: "04", Razon: "Compra a proveedor no obligado a facturar"}}
		}
	case hacienda.TypeFE:
		if variant%3 == 1 {
			req.InformacionReferencia = []hacienda.InformacionReferencia{{TipoDocIR: "06", Numero: "CT-88",
				FechaEmisionIR: time.Date(2026, 9, 30, 0, 0, 0, 0, hacienda.CostaRica), Codigo: "04", Razon: "Contrato marco de servicios"}}
		}
		req.CodigoActividadReceptor = hacienda.FlexString(g.pick("", "620100"))
	}

	// Sale condition and payments (unless a feature already chose them).
	if req.CondicionVenta == hacienda.CondicionContado && len(req.ResumenFactura.MedioPago) == 0 {
		switch {
		case variant%4 == 2 && t != hacienda.TypeTE:
			req.CondicionVenta = hacienda.CondicionCredito
			req.PlazoCredito = hacienda.FlexString(strconv.Itoa(15 + g.r.IntN(75)))
		case variant%5 == 4:
			req.CondicionVenta = hacienda.CondicionOtros
			req.CondicionVentaOtros = "Canje de servicios"
			req.ResumenFactura.MedioPago = []hacienda.MedioPago{{TipoMedioPago: "99", MedioPagoOtros: "Compensación de saldo"}}
		}
	}
	if len(req.ResumenFactura.MedioPago) == 0 && req.CondicionVenta != hacienda.CondicionCredito {
		means := []string{"01", "02", "03", "04", "05", "06", "07"}
		nm := 1
		if g.i%4 == 3 {
			nm = 2 + g.r.IntN(3)
		}
		for k := 0; k < nm; k++ {
			req.ResumenFactura.MedioPago = append(req.ResumenFactura.MedioPago, hacienda.MedioPago{TipoMedioPago: means[(g.i+k)%len(means)]})
		}
	}
	if len(req.ResumenFactura.MedioPago) > 1 {
		g.splitPayments(req)
	}
	if g.i%6 == 5 {
		req.Otros = &hacienda.Otros{OtroTexto: []hacienda.OtroTexto{{Codigo: "OC", Valor: "Orden de compra 4512"}}}
	}
	return req
}

func (g *generator) receptor(t hacienda.DocumentType, variant int) *hacienda.ReceptorRequest {
	ub := &hacienda.Ubicacion{Provincia: "2", Canton: "01", Distrito: "01", OtrasSenas: "Cien metros al norte de la iglesia"}
	switch t {
	case hacienda.TypeTE:
		if g.i%2 == 0 {
			return nil
		}
		return &hacienda.ReceptorRequest{Nombre: "Consumidor Final", CorreoElectronico: "cliente@correo.cr"}
	case hacienda.TypeFEE:
		return &hacienda.ReceptorRequest{Nombre: "Importadora del Norte LLC", Identificacion: &hacienda.IdentificacionRequest{Tipo: "05", Numero: "US99887766"},
			OtrasSenasExtranjero: "1200 Brickell Ave, Miami, Florida", CorreoElectronico: "compras@importadora.example"}
	case hacienda.TypeFEC:
		switch variant % 4 {
		case 1:
			return &hacienda.ReceptorRequest{Nombre: "Consultora Global Inc", Identificacion: &hacienda.IdentificacionRequest{Tipo: "05", Numero: "GB123456789"},
				OtrasSenasExtranjero: "221B Baker Street, London", CorreoElectronico: "billing@consultora.example"}
		case 2:
			return &hacienda.ReceptorRequest{Nombre: "Vendedor de Equipo Usado", Identificacion: &hacienda.IdentificacionRequest{Tipo: "06", Numero: "PAS554433"}}
		case 3:
			return &hacienda.ReceptorRequest{Nombre: "Agricultora Los Pinos", Identificacion: &hacienda.IdentificacionRequest{Tipo: "02", Numero: "3102765432"},
				Ubicacion: ub, Telefono: &hacienda.Telefono{CodigoPais: "506", NumTelefono: "24445555"}}
		}
		return &hacienda.ReceptorRequest{Nombre: "José Pérez Mora", Identificacion: &hacienda.IdentificacionRequest{Tipo: "01", Numero: "205550666"},
			Ubicacion: ub, CorreoElectronico: "jperez@correo.cr"}
	}
	ids := []hacienda.IdentificacionRequest{{Tipo: "01", Numero: "114440555"}, {Tipo: "02", Numero: "3101998877"},
		{Tipo: "03", Numero: "155812345678"}, {Tipo: "04", Numero: "1000123456"}}
	id := ids[g.i%len(ids)]
	emails := "contabilidad@cliente.cr"
	if g.i%5 == 0 {
		emails = "contabilidad@cliente.cr;gerencia@cliente.cr"
	}
	return &hacienda.ReceptorRequest{Nombre: "Cliente Ejemplo de Prueba", Identificacion: &id, NombreComercial: "Cliente",
		Ubicacion: ub, Telefono: &hacienda.Telefono{CodigoPais: "506", NumTelefono: "88887777"}, CorreoElectronico: emails}
}

// rateCodes usable in every type, and in notes.
var (
	genRates     = []string{"01", "02", "03", "04", "08", "09", "10", "11"}
	genRatesNote = []string{"05", "06", "07"}
)

func (g *generator) line(t hacienda.DocumentType, variant, k int) hacienda.LineaDetalle {
	service := g.r.IntN(2) == 0
	l := hacienda.LineaDetalle{NumeroLinea: k + 1, Cantidad: hacienda.NewAmount(decimal.New(int64(1+g.r.IntN(20)), 0))}
	if g.r.IntN(4) == 0 {
		l.Cantidad = hacienda.NewAmount(decimal.New(int64(1000+g.r.IntN(19000)), -3))
	}
	if service {
		l.CodigoCABYS = g.pick(cabysService, cabysService2)
		l.UnidadMedida = g.pick("Sp", "Os", "h", "St")
		l.Detalle = "Servicio profesional de consultoría"
		l.PrecioUnitario = g.money(5000, 90000)
	} else {
		l.CodigoCABYS = g.pick(cabysGoods, cabysGoods2)
		l.UnidadMedida = g.pick("Unid", "Kg", "L", "m²")
		l.Detalle = "Artículo de ferretería"
		l.PrecioUnitario = g.money(100, 20000)
		if t == hacienda.TypeFEE {
			l.PartidaArancelaria = "847130000000"
		}
	}
	if t != hacienda.TypeTE && g.r.IntN(3) == 0 {
		l.TipoTransaccion = "01"
	}
	if g.r.IntN(4) == 0 {
		l.CodigoComercial = []hacienda.CodigoComercial{{Tipo: "01", Codigo: "SKU-" + strconv.Itoa(1000+g.r.IntN(9000))}}
	}
	rates := genRates
	if t.IsNote() {
		rates = append(append([]string{}, genRates...), genRatesNote...)
	}
	rc := rates[(g.i*3+k)%len(rates)]
	l.Impuesto = []hacienda.Impuesto{{Codigo: hacienda.ImpuestoIVA, CodigoTarifaIVA: rc}}
	switch g.r.IntN(4) {
	case 1:
		l.Descuento = []hacienda.Descuento{{PorcentajeDescuento: hacienda.NewAmount(decimal.New(int64(1+g.r.IntN(30)), 0)), CodigoDescuento: g.pick("04", "05", "06", "07", "08", "09")}}
	case 2:
		l.Descuento = []hacienda.Descuento{{MontoDescuento: g.money(1, 50), CodigoDescuento: "07"},
			{PorcentajeDescuento: hacienda.MustAmount("2.5"), CodigoDescuento: "99", CodigoDescuentoOTRO: "hacienda.Descuento por pronto pago", NaturalezaDescuento: "Pronto pago"}}
	}
	return l
}

// addFeature adds to the request the feature its position selects, so that
// every feature appears within 40 consecutive requests.
func (g *generator) addFeature(req *hacienda.SendDocumentRequest, t hacienda.DocumentType) {
	lines := req.DetalleServicio
	first := &lines[0]
	exo := func(tipo, tarifa string) *hacienda.Exoneracion {
		// An authorisation of the exoneration registry (04) belongs to one
		// taxpayer, the document's receptor: the sandbox's registry
		// (docs/sandbox-registry.md) grants one to each receptor below.
		// A document with another receptor, or none (a tiquete, an FEC
		// whose receptor is the issuing company), is exonerated by a
		// special law (03), which the registry does not hold.
		numero := "AL-00012345-24"
		if tipo == "04" {
			owner := ""
			if req.Receptor != nil && req.Receptor.Identificacion != nil && t != hacienda.TypeFEC {
				owner = req.Receptor.Identificacion.Numero.String()
			}
			switch owner {
			case "114440555":
			case "155812345678":
				numero = "AL-00012346-24"
			default:
				tipo = "03"
			}
		}
		x := &hacienda.Exoneracion{TipoDocumentoEX1: tipo, NumeroDocumento: numero, NombreInstitucion: "01",
			FechaEmisionEX: time.Date(2026, 1, 10, 0, 0, 0, 0, hacienda.CostaRica), TarifaExonerada: hacienda.MustAmount(tarifa)}
		if hacienda.ExoneracionNeedsArticulo(tipo) {
			x.Articulo = 8
			x.Inciso = 2
		}
		return x
	}
	perUnitOK := t != hacienda.TypeFEC && t != hacienda.TypeFEE
	switch g.i % 10 {
	case 0: // full exoneration
		if t != hacienda.TypeFEE {
			first.Impuesto = []hacienda.Impuesto{{Codigo: "01", CodigoTarifaIVA: "08", Exoneracion: exo("04", "13")}}
		}
	case 1: // partial exoneration
		if t != hacienda.TypeFEE {
			tipo := "03"
			if t.IsNote() {
				tipo = "05"
			}
			first.Impuesto = []hacienda.Impuesto{{Codigo: "01", CodigoTarifaIVA: "08", Exoneracion: exo(tipo, "10")}}
		}
	case 2: // other charges by amount and by percentage
		if t != hacienda.TypeREP {
			req.OtrosCargos = []hacienda.OtroCargo{{TipoDocumentoOC: "06", Detalle: "hacienda.Impuesto de servicio", PorcentajeOC: hacienda.AmountFromInt(10)},
				{TipoDocumentoOC: "04", Detalle: "Cobro por cuenta de tercero", NombreTercero: "Transportes Unidos SA",
					IdentificacionTercero: hacienda.Identificacion{Tipo: "02", Numero: "3101222333"}, MontoCargo: hacienda.MustAmount("1500")}}
		}
	case 3: // selective consumption tax entering the IVA base + cement
		first.CodigoCABYS = cabysCement
		first.Impuesto = []hacienda.Impuesto{{Codigo: "12"}, {Codigo: "02", Tarifa: hacienda.AmountFromInt(10)}, {Codigo: "01", CodigoTarifaIVA: "08"}}
	case 4: // health service paid by card: IVA devuelto
		first.CodigoCABYS = cabysHealth
		first.UnidadMedida = "Sp"
		first.Detalle = "Consulta médica general"
		first.Impuesto = []hacienda.Impuesto{{Codigo: "01", CodigoTarifaIVA: "04"}}
		first.Descuento = nil
		req.ResumenFactura.MedioPago = []hacienda.MedioPago{{TipoMedioPago: hacienda.MedioPagoTarjeta}}
	case 5: // regalía, and bonificación
		if t != hacienda.TypeFEE && t != hacienda.TypeFEC {
			free := goodsLine(len(lines)+1, "1", "2500", "08")
			free.Descuento = []hacienda.Descuento{{PorcentajeDescuento: hacienda.AmountFromInt(100), CodigoDescuento: g.pick("01", "03")}}
			req.DetalleServicio = append(req.DetalleServicio, free)
		}
	case 6: // per-unit specific taxes
		if perUnitOK {
			fuel := goodsLine(len(lines)+1, "40", "650", "10")
			fuel.CodigoCABYS, fuel.UnidadMedida = cabysFuel, "L"
			fuel.Impuesto = append(fuel.Impuesto, hacienda.Impuesto{Codigo: "03", DatosImpuestoEspecifico: &hacienda.DatosImpuestoEspecifico{CantidadUnidadMedida: hacienda.AmountFromInt(40), ImpuestoUnidad: hacienda.MustAmount("268.75")}})
			beer := goodsLine(len(lines)+2, "6", "1200", "08")
			beer.CodigoCABYS = cabysAlcohol
			beer.Impuesto = append([]hacienda.Impuesto{{Codigo: "04", DatosImpuestoEspecifico: &hacienda.DatosImpuestoEspecifico{CantidadUnidadMedida: hacienda.AmountFromInt(350), Porcentaje: hacienda.MustAmount("4.5"), ImpuestoUnidad: hacienda.MustAmount("0.52")}}}, beer.Impuesto...)
			soda := goodsLine(len(lines)+3, "12", "800", "08")
			soda.CodigoCABYS = cabysBeverage
			soda.Impuesto = append([]hacienda.Impuesto{{Codigo: "05", DatosImpuestoEspecifico: &hacienda.DatosImpuestoEspecifico{CantidadUnidadMedida: hacienda.AmountFromInt(600), VolumenUnidadConsumo: hacienda.AmountFromInt(250), ImpuestoUnidad: hacienda.MustAmount("21.36")}}}, soda.Impuesto...)
			soap := goodsLine(len(lines)+4, "3", "950", "08")
			soap.CodigoCABYS = cabysSoap
			soap.Impuesto = append([]hacienda.Impuesto{{Codigo: "05", DatosImpuestoEspecifico: &hacienda.DatosImpuestoEspecifico{CantidadUnidadMedida: hacienda.AmountFromInt(1), VolumenUnidadConsumo: hacienda.AmountFromInt(100), ImpuestoUnidad: hacienda.MustAmount("0.35")}}}, soap.Impuesto...)
			cig := goodsLine(len(lines)+5, "2", "2800", "08")
			cig.CodigoCABYS = cabysTobacco
			cig.Impuesto = append(cig.Impuesto, hacienda.Impuesto{Codigo: "06", DatosImpuestoEspecifico: &hacienda.DatosImpuestoEspecifico{CantidadUnidadMedida: hacienda.AmountFromInt(20), ImpuestoUnidad: hacienda.MustAmount("2.1")}})
			req.DetalleServicio = append(req.DetalleServicio, fuel, beer, soda, soap, cig)
		}
	case 7: // used goods (factor), special IVA, other tax
		used := goodsLine(len(lines)+1, "1", "150000", "")
		used.Impuesto = []hacienda.Impuesto{{Codigo: "08", FactorCalculoIVA: hacienda.MustAmount("0.0345")}}
		other := goodsLine(len(lines)+2, "2", "3000", "08")
		other.Impuesto = append([]hacienda.Impuesto{{Codigo: "99", CodigoImpuestoOTRO: "hacienda.Impuesto municipal", Tarifa: hacienda.MustAmount("1.5")}}, other.Impuesto...)
		req.DetalleServicio = append(req.DetalleServicio, used, other)
		if t != hacienda.TypeFEE && t != hacienda.TypeFEC {
			special := goodsLine(len(lines)+3, "5", "1000", "")
			special.Impuesto = []hacienda.Impuesto{{Codigo: "07", CodigoTarifaIVA: "08"}}
			special.BaseImponible = hacienda.MustAmount("4200")
			req.DetalleServicio = append(req.DetalleServicio, special)
		}
	case 8: // IVA charged at factory level
		if t != hacienda.TypeFEE && t != hacienda.TypeFEC {
			f1 := goodsLine(len(lines)+1, "10", "450", "08")
			f1.IVACobradoFabrica = "01"
			f1.BaseImponible = hacienda.MustAmount("5200")
			f2 := goodsLine(len(lines)+2, "4", "300", "10")
			f2.IVACobradoFabrica = "02"
			req.DetalleServicio = append(req.DetalleServicio, f1, f2)
		}
	case 9: // medicine line and serial numbers
		med := goodsLine(len(lines)+1, "2", "3400", "02")
		med.RegistroMedicamento = "MS-4-25-1234"
		med.FormaFarmaceutica = "04"
		med.NumeroVINoSerie = []string{"LOT2026A"}
		req.DetalleServicio = append(req.DetalleServicio, med)
	}
}

func goodsLine(n int, cant, precio, tarifa string) hacienda.LineaDetalle {
	l := hacienda.LineaDetalle{NumeroLinea: n, CodigoCABYS: cabysGoods2, Cantidad: hacienda.MustAmount(cant), UnidadMedida: "Unid",
		Detalle: "Producto adicional", PrecioUnitario: hacienda.MustAmount(precio)}
	if tarifa != "" {
		l.Impuesto = []hacienda.Impuesto{{Codigo: hacienda.ImpuestoIVA, CodigoTarifaIVA: tarifa}}
	}
	return l
}

// splitPayments gives every means of payment an amount, splitting the
// total (computed on a copy of the request).
func (g *generator) splitPayments(req *hacienda.SendDocumentRequest) {
	cp := cloneRequest(req)
	cp.ResumenFactura.MedioPago = cp.ResumenFactura.MedioPago[:1]
	cp.ResumenFactura.MedioPago[0].TotalMedioPago = hacienda.Amount{}
	doc, err := hacienda.NewDocument(cp, Issuer())
	if err != nil {
		panic(fmt.Sprintf("sample: generated request %d does not validate: %v", g.i, err))
	}
	total := doc.ResumenFactura.TotalComprobante.Decimal()
	mp := req.ResumenFactura.MedioPago
	part := total.Div(decimal.New(int64(len(mp)), 0)).Round(2)
	rest := total.Sub(part.Mul(decimal.New(int64(len(mp)-1), 0)))
	if part.Sign() <= 0 || rest.Sign() <= 0 {
		// Too little to split: the tax authority refuses a payment of
		// 0, so one means of payment takes it all (or none is given).
		req.ResumenFactura.MedioPago = mp[:1]
		return
	}
	for k := 1; k < len(mp); k++ {
		mp[k].TotalMedioPago = hacienda.NewAmount(part)
	}
	mp[0].TotalMedioPago = hacienda.NewAmount(rest)
}

// cloneRequest deep-copies a request through its JSON form.
func cloneRequest(req *hacienda.SendDocumentRequest) *hacienda.SendDocumentRequest {
	b, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	cp, err := hacienda.DecodeSendRequest(b)
	if err != nil {
		panic(err)
	}
	return cp
}

// LongFE is the send request of an FE with n lines (v4.4 allows up to
// 1,000): the first FE among Requests(seed, …), its other charges left
// out and paid in cash, each line a copy of its first one with its own
// number, description ("Artículo número 0001 de señalización vial"),
// quantity and price, taxed at 13 %. It is the long invoice the printed
// document's tests and load test draw.
func LongFE(seed int64, n int) (*hacienda.SendDocumentRequest, error) {
	var req *hacienda.SendDocumentRequest
	for _, r := range Requests(seed, 64) {
		if r.TipoDocumento == hacienda.FlexString(hacienda.TypeFE) {
			req = r
			break
		}
	}
	if req == nil {
		return nil, fmt.Errorf("sample: no FE among the requests of seed %d", seed)
	}
	proto := req.DetalleServicio[0]
	req.DetalleServicio, req.OtrosCargos = nil, nil
	req.ResumenFactura.MedioPago = []hacienda.MedioPago{{TipoMedioPago: "01"}}
	for i := range n {
		l := proto
		l.NumeroLinea = i + 1
		l.Detalle = fmt.Sprintf("Artículo número %04d de señalización vial", i+1)
		l.Descuento = nil
		l.Cantidad = hacienda.AmountFromInt(int64(1 + i%7))
		l.PrecioUnitario = hacienda.MustAmount(strconv.Itoa(1000+i*37) + ".25")
		l.Impuesto = []hacienda.Impuesto{{Codigo: "01", CodigoTarifaIVA: "08", Tarifa: hacienda.AmountFromInt(13)}}
		req.DetalleServicio = append(req.DetalleServicio, l)
	}
	return req, nil
}
