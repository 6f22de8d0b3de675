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

var genIssued = time.Date(2026, 11, 21, 14, 3, 0, 0, crTime)

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
			if k%2 == 0 {
				ds.PorcentajeDescuento = AmountFromInt(10)
			} else {
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

// genFillRough fills every computed amount with a rough value so that the
// XML can be built and checked against the schema. It is NOT the v4.4
// calculation (that is Calculate's job); the XML tests only need present,
// well-formed amounts.
func genFillRough(d *Document) {
	r5 := func(x Amount) Amount { return NewAmount(x.Decimal().Round(MoneyPlaces)) }
	hundred := AmountFromInt(100).Decimal()
	var total, taxes Amount = AmountFromInt(0), AmountFromInt(0)
	for i := range d.DetalleServicio {
		l := &d.DetalleServicio[i]
		if d.Type != TypeREP {
			l.MontoTotal = r5(NewAmount(l.Cantidad.Decimal().Mul(l.PrecioUnitario.Decimal())))
		}
		sub := l.MontoTotal.Decimal()
		for j := range l.Descuento {
			ds := &l.Descuento[j]
			if ds.PorcentajeDescuento.IsSet() {
				ds.MontoDescuento = r5(NewAmount(sub.Mul(ds.PorcentajeDescuento.Decimal()).Div(hundred)))
			}
			sub = sub.Sub(ds.MontoDescuento.Decimal())
		}
		if d.Type != TypeREP {
			l.SubTotal = r5(NewAmount(sub))
			l.BaseImponible = l.SubTotal
		}
		net := AmountFromInt(0).Decimal()
		for j := range l.Impuesto {
			t := &l.Impuesto[j]
			if t.DatosImpuestoEspecifico != nil {
				t.Monto = r5(NewAmount(t.DatosImpuestoEspecifico.ImpuestoUnidad.Decimal().Mul(l.Cantidad.Decimal())))
			} else {
				t.Monto = r5(NewAmount(l.SubTotal.Decimal().Mul(t.Tarifa.Decimal()).Div(hundred)))
			}
			net = net.Add(t.Monto.Decimal())
			if x := t.Exoneracion; x != nil {
				x.MontoExoneracion = r5(NewAmount(l.SubTotal.Decimal().Mul(x.TarifaExonerada.Decimal()).Div(hundred)))
				net = net.Sub(x.MontoExoneracion.Decimal())
			}
		}
		l.ImpuestoAsumidoEmisorFabrica = AmountFromInt(0)
		l.ImpuestoNeto = r5(NewAmount(net))
		l.MontoTotalLinea = r5(NewAmount(l.SubTotal.Decimal().Add(net)))
		total = NewAmount(total.Decimal().Add(l.SubTotal.Decimal()))
		taxes = NewAmount(taxes.Decimal().Add(net))
	}
	zero := AmountFromInt(0)
	rs := &d.ResumenFactura
	for _, a := range []*Amount{&rs.TotalServGravados, &rs.TotalServExentos, &rs.TotalServExonerado, &rs.TotalServNoSujeto,
		&rs.TotalMercanciasGravadas, &rs.TotalMercanciasExentas, &rs.TotalMercExonerada, &rs.TotalMercNoSujeta,
		&rs.TotalExento, &rs.TotalExonerado, &rs.TotalNoSujeto, &rs.TotalDescuentos, &rs.TotalImpAsumEmisorFabrica,
		&rs.TotalIVADevuelto} {
		*a = zero
	}
	other := AmountFromInt(0).Decimal()
	for i := range d.OtrosCargos {
		o := &d.OtrosCargos[i]
		if o.PorcentajeOC.IsSet() {
			o.MontoCargo = r5(NewAmount(total.Decimal().Mul(o.PorcentajeOC.Decimal()).Div(hundred)))
		}
		other = other.Add(o.MontoCargo.Decimal())
	}
	rs.TotalGravado, rs.TotalVenta, rs.TotalVentaNeta = total, total, total
	rs.TotalImpuesto = taxes
	rs.TotalOtrosCargos = NewAmount(other)
	rs.TotalDesgloseImpuesto = []TotalDesgloseImpuesto{{Codigo: "01", CodigoTarifaIVA: TarifaGeneral, TotalMontoImpuesto: taxes}}
	rs.TotalComprobante = NewAmount(total.Decimal().Add(taxes.Decimal()).Add(other))
	if len(rs.MedioPago) == 1 {
		rs.MedioPago[0].TotalMedioPago = rs.TotalComprobante
	}
}
