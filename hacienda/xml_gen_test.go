package hacienda

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// This file generates varied documents of every type for the XML tests:
// goods and services, every discount code, every IVA rate code the type
// allows, exempt, exonerated and non-subject lines, specific taxes, other
// charges, foreign currencies, references and every means of payment. The
// amounts are left to the calculation.

var genIssued = time.Date(2026, 11, 21, 14, 3, 0, 0, CostaRica)

// genRateCodes are the IVA rate codes a type may use (05–07 only in notes).
func genRateCodes(t DocumentType) []string {
	if t.IsNote() {
		return []string{"01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11"}
	}
	return []string{"01", "02", "03", "04", "08", "09", "10", "11"}
}

var genMedios = []string{"01", "02", "03", "04", "05", "06", "07", "99"}

var genDiscounts = []string{"01", "02", "03", "04", "05", "06", "07", "08", "09", "99"}

func genClave(t DocumentType, n int, issued time.Time, issuerID string) (string, string) {
	c, err := NewConsecutivo("001", "00001", string(t), int64(n))
	if err != nil {
		panic(err)
	}
	// A security code derived from n keeps the generated documents
	// reproducible (real claves draw it from crypto/rand).
	k, err := NewClave(issued, issuerID, c, SituacionNormal, strings.NewReader(fmt.Sprintf("%04d", n%10000)))
	if err != nil {
		panic(err)
	}
	return k.String(), c.String()
}

func genCompany() Party {
	return Party{
		Nombre:          "Comercializadora del Valle Central S.A.",
		Identificacion:  Identificacion{Tipo: IDJuridica, Numero: "3101123456"},
		NombreComercial: "Valle & Cía <Central>",
		Ubicacion: &Ubicacion{Provincia: "1", Canton: "01", Distrito: "08", Barrio: "Sabana Norte",
			OtrasSenas: "De la Contraloría 200 m oeste, edificio \"Las Palmas\""},
		Telefono:          &Telefono{CodigoPais: "506", NumTelefono: "22223333"},
		CorreoElectronico: []string{"facturas@valle.example", "conta@valle.example"},
	}
}

func genCustomer(r *rand.Rand, t DocumentType) *Party {
	switch {
	case t == TypeFEE:
		return &Party{
			Nombre:               "Importadora Norteña LLC",
			Identificacion:       Identificacion{Tipo: IDExtranjeroNoDom, Numero: "US-EIN-991234567"},
			OtrasSenasExtranjero: "1200 Harbor Blvd, Miami FL 33101, USA",
			CorreoElectronico:    []string{"ap@nortena.example"},
		}
	case t == TypeTE && r.IntN(3) == 0:
		return nil
	}
	p := &Party{
		Nombre:            "María José Rodríguez Solís",
		Identificacion:    Identificacion{Tipo: IDFisica, Numero: "109990999"},
		CorreoElectronico: []string{"mjrodriguez@correo.example;otra@correo.example"},
	}
	if r.IntN(2) == 0 {
		p.Nombre = "Servicios Médicos Integrales Ltda."
		p.Identificacion = Identificacion{Tipo: IDJuridica, Numero: "3102987654"}
		p.NombreComercial = "Clínica Integral"
		p.Ubicacion = &Ubicacion{Provincia: "4", Canton: "01", Distrito: "01", OtrasSenas: "Frente al parque de Heredia"}
		p.Telefono = &Telefono{CodigoPais: "506", NumTelefono: "88887777"}
	}
	return p
}

// genDocument returns document number n of type t; variant picks the
// features, so that a run over n covers every code.
func genDocument(r *rand.Rand, t DocumentType, n int) *Document {
	company := genCompany()
	issued := genIssued.Add(time.Duration(n) * time.Minute)
	d := &Document{
		Type:              t,
		ProveedorSistemas: "3101123456",
		FechaEmision:      issued,
		CondicionVenta:    "01",
		ResumenFactura: ResumenFactura{
			CodigoTipoMoneda: CodigoTipoMoneda{CodigoMoneda: "CRC", TipoCambio: AmountFromInt(1)},
		},
	}
	switch n % 4 {
	case 1:
		d.ResumenFactura.CodigoTipoMoneda = CodigoTipoMoneda{CodigoMoneda: "USD", TipoCambio: MustAmount("507.25")}
	case 3:
		d.ResumenFactura.CodigoTipoMoneda = CodigoTipoMoneda{CodigoMoneda: "EUR", TipoCambio: MustAmount("548.91234")}
	}
	issuerID := company.Identificacion.Numero
	switch t {
	case TypeFEC:
		// The seller is the Emisor; the company buying is the Receptor.
		seller := Party{
			Nombre:         "Juan Carlos Mora Vargas",
			Identificacion: Identificacion{Tipo: IDFisica, Numero: "203450678"},
			Ubicacion:      &Ubicacion{Provincia: "2", Canton: "10", Distrito: "01", OtrasSenas: "Finca La Esperanza, Zarcero"},
		}
		if n%3 == 1 {
			seller = Party{
				Nombre:               "Cloud Services International Inc.",
				Identificacion:       Identificacion{Tipo: IDExtranjeroNoDom, Numero: "IE9825613N"},
				OtrasSenasExtranjero: "70 Sir John Rogerson's Quay, Dublin 2, Ireland",
				CorreoElectronico:    []string{"billing@cloud.example"},
			}
		}
		d.Emisor = seller
		c := company
		c.CorreoElectronico = c.CorreoElectronico[:1]
		d.Receptor = &c
		d.CodigoActividadReceptor = "523101"
		if n%2 == 0 {
			d.CodigoActividadEmisor = "012301"
		}
	case TypeREP:
		d.Emisor = Party{Nombre: company.Nombre, Identificacion: company.Identificacion, CorreoElectronico: company.CorreoElectronico}
		d.Receptor = &Party{Nombre: "Ministerio de Obras Públicas", Identificacion: Identificacion{Tipo: IDJuridica, Numero: "2100042011"}}
	default:
		d.Emisor = company
		d.CodigoActividadEmisor = "523101"
		d.Receptor = genCustomer(r, t)
		if (t == TypeFE || t.IsNote()) && n%2 == 0 {
			d.CodigoActividadReceptor = "851001"
		}
	}
	if t.IsNote() && n%3 == 2 {
		d.Receptor = nil
	}
	d.Clave, d.NumeroConsecutivo = genClave(t, n+1, issued, issuerID)

	if t == TypeREP {
		genREP(r, d, n)
		return d
	}
	switch n % 5 {
	case 1:
		d.CondicionVenta, d.PlazoCredito = CondicionCredito, 30
	case 2:
		if t != TypeFEE && t != TypeFEC && t != TypeTE {
			d.CondicionVenta, d.PlazoCredito = CondicionCreditoIVA90, 90
		}
	case 3:
		d.CondicionVenta, d.CondicionVentaOtros = CondicionOtros, "Permuta de bienes"
	}

	lines := 1 + (n % 10)
	rates := genRateCodes(t)
	for i := range lines {
		k := n*7 + i
		goods := (k % 2) == 0
		l := LineaDetalle{
			NumeroLinea:    i + 1,
			Cantidad:       MustAmount([]string{"1", "3", "2.5", "0.125", "12"}[k%5]),
			UnidadMedida:   "Unid",
			Detalle:        fmt.Sprintf("Artículo de prueba %d & co", i+1),
			PrecioUnitario: MustAmount([]string{"1250.5", "15000", "99.99999", "0.5", "742"}[(k/2)%5]),
		}
		if goods {
			l.CodigoCABYS = "2392000000000"
			if t == TypeFEE {
				l.PartidaArancelaria = "090111000000"
			}
		} else {
			l.CodigoCABYS = "8399000000000"
			l.UnidadMedida = "Sp"
		}
		if k%6 == 0 {
			l.CodigoComercial = []CodigoComercial{{Tipo: "01", Codigo: fmt.Sprintf("SKU-%05d", k)}, {Tipo: "04", Codigo: "7441234567890"}}
		}
		if t != TypeTE && k%4 == 1 {
			l.TipoTransaccion = "01"
		}
		if k%9 == 4 {
			l.UnidadMedidaComercial = "Tarima"
			l.NumeroVINoSerie = []string{"JH4KA8260MC000001", "SN-77"}
		}
		if k%3 == 0 {
			code := genDiscounts[(k/3)%len(genDiscounts)]
			ds := Descuento{CodigoDescuento: code}
			switch {
			case code == DescuentoRegalia || code == DescuentoBonificacion:
				// A free item: the whole line is discounted and the issuer
				// bears its IVA. Never on the first line, so that the
				// document keeps a positive net sale.
				if i == 0 {
					ds.CodigoDescuento = "07"
					ds.PorcentajeDescuento = AmountFromInt(10)
				} else {
					ds.PorcentajeDescuento = AmountFromInt(100)
					if !issuerBornTaxExpressible(t) {
						// FEC and FEE cannot carry a tax the issuer bears.
						ds.CodigoDescuento = DescuentoRegaliaIVACliente
					}
				}
			case k%2 == 0:
				ds.PorcentajeDescuento = AmountFromInt(10)
			default:
				ds.MontoDescuento = MustAmount("0.1")
			}
			if code == DescuentoOtros {
				ds.CodigoDescuentoOTRO = "Descuento por apertura"
				ds.NaturalezaDescuento = "Apertura de local"
			}
			l.Descuento = append(l.Descuento, ds)
		}
		rate := rates[k%len(rates)]
		tax := Impuesto{Codigo: "01", CodigoTarifaIVA: rate}
		rv, _ := TarifaIVA(rate)
		tax.Tarifa = NewAmount(rv)
		if t != TypeFEE && rate == TarifaGeneral && k%4 == 0 {
			tax.Exoneracion = &Exoneracion{
				TipoDocumentoEX1:  "04",
				NumeroDocumento:   "AL-00012345-24",
				NombreInstitucion: "01",
				FechaEmisionEX:    genIssued.AddDate(0, -3, 0),
				TarifaExonerada:   AmountFromInt(int64([]int{13, 10}[(k/4)%2])),
			}
			if k%8 == 0 {
				tax.Exoneracion.TipoDocumentoEX1 = "02"
				tax.Exoneracion.Articulo = 8
				tax.Exoneracion.Inciso = 2
				tax.Exoneracion.NumeroDocumento = "Ley 9635"
				tax.Exoneracion.NombreInstitucion = "99"
				tax.Exoneracion.NombreInstitucionOtros = "Asamblea Legislativa"
			}
		}
		l.Impuesto = []Impuesto{tax}
		if t != TypeFEC && t != TypeFEE && k%11 == 5 {
			// A selective consumption tax before the IVA.
			l.Impuesto = append([]Impuesto{{Codigo: "02", Tarifa: AmountFromInt(10)}}, l.Impuesto...)
		}
		if t != TypeFEC && t != TypeFEE && goods && k%13 == 6 {
			l.Impuesto = append(l.Impuesto, Impuesto{
				Codigo: "05",
				DatosImpuestoEspecifico: &DatosImpuestoEspecifico{
					CantidadUnidadMedida: AmountFromInt(350),
					VolumenUnidadConsumo: AmountFromInt(250),
					ImpuestoUnidad:       MustAmount("22.5"),
				},
			})
		}
		d.DetalleServicio = append(d.DetalleServicio, l)
	}
	if n%3 == 0 {
		d.OtrosCargos = append(d.OtrosCargos, OtroCargo{TipoDocumentoOC: "06", Detalle: "Servicio 10 %", PorcentajeOC: AmountFromInt(10)})
	}
	if n%5 == 4 {
		d.OtrosCargos = append(d.OtrosCargos, OtroCargo{
			TipoDocumentoOC:       OtroCargoTercero,
			IdentificacionTercero: Identificacion{Tipo: IDJuridica, Numero: "3101555666"},
			NombreTercero:         "Transportes Rápidos S.A.",
			Detalle:               "Flete por cuenta de tercero",
			MontoCargo:            MustAmount("3500"),
		})
	}
	// Payment: one or two means, every code over the run; credit sales
	// may omit it.
	if d.CondicionVenta != CondicionCredito || n%2 == 0 {
		m := genMedios[n%len(genMedios)]
		mp := MedioPago{TipoMedioPago: m}
		if m == "99" {
			mp.MedioPagoOtros = "Canje de puntos"
		}
		d.ResumenFactura.MedioPago = []MedioPago{mp}
	}
	switch {
	case t.IsNote():
		d.InformacionReferencia = []InformacionReferencia{{
			TipoDocIR: "01", Numero: strings.Repeat("5", 3) + d.Clave[3:], FechaEmisionIR: genIssued.AddDate(0, 0, -10),
			Codigo: []string{"01", "02", "04", "99"}[n%4], Razon: "Ajuste de precio acordado",
		}}
		if d.InformacionReferencia[0].Codigo == "99" {
			d.InformacionReferencia[0].CodigoReferenciaOTRO = "Corrección comercial"
		}
	case t == TypeFEC:
		ref := InformacionReferencia{TipoDocIR: "14", Numero: "FAC-2026-0001", FechaEmisionIR: genIssued.AddDate(0, 0, -1), Codigo: "04", Razon: "Compra a proveedor no inscrito"}
		if d.Emisor.Identificacion.Tipo == IDExtranjeroNoDom {
			ref.TipoDocIR = DocRefNoDomiciliado
		}
		d.InformacionReferencia = []InformacionReferencia{ref}
	case n%7 == 3:
		d.InformacionReferencia = []InformacionReferencia{{
			TipoDocIR: "99", TipoDocRefOTRO: "Orden de compra", Numero: "OC-4451", FechaEmisionIR: genIssued.AddDate(0, 0, -2),
			Codigo: "04", Razon: "Referencia a orden de compra",
		}}
	}
	if n%4 == 2 {
		d.Otros = &Otros{
			OtroTexto:     []OtroTexto{{Codigo: "obs", Valor: "Entregar en bodega \"B\"\tturno 2"}, {Valor: "Gracias por su compra"}},
			OtroContenido: []OtroTexto{{Valor: "Pedido #4451"}},
		}
	}
	return d
}

func genREP(r *rand.Rand, d *Document, n int) {
	d.CondicionVenta = []string{"09", "11"}[n%2]
	lines := 1 + n%3
	for i := range lines {
		l := LineaDetalle{
			NumeroLinea: i + 1,
			Detalle:     fmt.Sprintf("Pago de la cuota %d de la factura a crédito", i+1),
			MontoTotal:  MustAmount([]string{"100000", "25000.5", "7333.33333"}[(n+i)%3]),
		}
		l.SubTotal = l.MontoTotal
		if (n+i)%4 != 3 {
			l.Impuesto = []Impuesto{{Codigo: "01", CodigoTarifaIVA: TarifaGeneral, Tarifa: AmountFromInt(13)}}
		}
		d.DetalleServicio = append(d.DetalleServicio, l)
	}
	m := genMedios[r.IntN(len(genMedios))]
	mp := MedioPago{TipoMedioPago: m}
	if m == "99" {
		mp.MedioPagoOtros = "Compensación"
	}
	d.ResumenFactura.MedioPago = []MedioPago{mp}
	d.InformacionReferencia = []InformacionReferencia{{
		TipoDocIR: "01", Numero: "506" + d.Clave[3:], FechaEmisionIR: genIssued.AddDate(0, -1, 0),
		Codigo: "04", Razon: "Pago de factura a crédito",
	}}
}
