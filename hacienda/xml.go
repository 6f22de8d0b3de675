package hacienda

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// xmlShape says which optional parts of the model exist in one document
// type's schema, and where the types disagree on cardinality. Element order
// is the same in every v4.4 schema wherever an element exists (checked
// against each xs:sequence); the types differ only in which elements they
// have, so one writer with these switches serves all seven.
type xmlShape struct {
	rep bool // REP: reduced header, parties, lines and summary

	actividadEmisor   bool // CodigoActividadEmisor exists
	actividadReceptor bool // CodigoActividadReceptor exists

	emisorOtrasSenasExtranjero   bool // FEC's Emisor (the foreign seller)
	receptorOtrasSenasExtranjero bool // every Receptor except FEC's
	receptorUbicacion            bool // every Receptor except FEE's

	partidaArancelaria bool // NC, ND, FEE
	cabysRequired      bool // CodigoCABYS is 1..1 (0..1 in NC, ND)
	tipoTransaccion    bool // absent TE
	surtido            bool // DetalleSurtido exists (absent FEC)
	surtidoReduced     bool // FEE's pack components: no factory IVA, base or specific data
	ivaCobradoFabrica  bool // absent FEC, FEE
	baseImponible      bool // absent FEE
	datosEspecificos   bool // DatosImpuestoEspecifico: absent FEC, FEE
	montoExportacion   bool // NC, ND, FEE
	exoneracion        bool // absent FEE
	impuestoAsumido    bool // ImpuestoAsumidoEmisorFabrica exists (FE, TE, NC, ND)
	impuestoAsumidoReq bool // … and is 1..1 (FE, TE)
	impuestoNeto       bool // absent FEE

	exoneradoTotals bool // Total*Exonerad*, Total*NoSujet*: absent FEE
	ivaDevuelto     bool // TotalIVADevuelto: absent FEC, FEE
}

var xmlShapes = map[DocumentType]*xmlShape{
	TypeFE: {
		actividadEmisor: true, actividadReceptor: true,
		receptorOtrasSenasExtranjero: true, receptorUbicacion: true,
		cabysRequired: true, tipoTransaccion: true, surtido: true, ivaCobradoFabrica: true,
		baseImponible: true, datosEspecificos: true, exoneracion: true,
		impuestoAsumido: true, impuestoAsumidoReq: true, impuestoNeto: true,
		exoneradoTotals: true, ivaDevuelto: true,
	},
	TypeND: {
		actividadEmisor: true, actividadReceptor: true,
		receptorOtrasSenasExtranjero: true, receptorUbicacion: true,
		partidaArancelaria: true, tipoTransaccion: true, surtido: true, ivaCobradoFabrica: true,
		baseImponible: true, datosEspecificos: true, montoExportacion: true, exoneracion: true,
		impuestoAsumido: true, impuestoNeto: true,
		exoneradoTotals: true, ivaDevuelto: true,
	},
	TypeNC: {
		actividadEmisor: true, actividadReceptor: true,
		receptorOtrasSenasExtranjero: true, receptorUbicacion: true,
		partidaArancelaria: true, tipoTransaccion: true, surtido: true, ivaCobradoFabrica: true,
		baseImponible: true, datosEspecificos: true, montoExportacion: true, exoneracion: true,
		impuestoAsumido: true, impuestoNeto: true,
		exoneradoTotals: true, ivaDevuelto: true,
	},
	TypeTE: {
		actividadEmisor:              true,
		receptorOtrasSenasExtranjero: true, receptorUbicacion: true,
		cabysRequired: true, surtido: true, ivaCobradoFabrica: true,
		baseImponible: true, datosEspecificos: true, exoneracion: true,
		impuestoAsumido: true, impuestoAsumidoReq: true, impuestoNeto: true,
		exoneradoTotals: true, ivaDevuelto: true,
	},
	TypeFEC: {
		actividadEmisor: true, actividadReceptor: true,
		emisorOtrasSenasExtranjero: true, receptorUbicacion: true,
		cabysRequired: true, tipoTransaccion: true,
		baseImponible: true, exoneracion: true, impuestoNeto: true,
		exoneradoTotals: true,
	},
	TypeFEE: {
		actividadEmisor:              true,
		receptorOtrasSenasExtranjero: true,
		partidaArancelaria:           true, cabysRequired: true, tipoTransaccion: true,
		surtido: true, surtidoReduced: true, montoExportacion: true,
	},
	TypeREP: {rep: true},
}

// ErrUnknownDocumentType is wrapped when a document's Type is not one of
// the seven issued types.
var ErrUnknownDocumentType = errors.New("unknown document type")

// MarshalXML builds the unsigned v4.4 XML of doc: the XML declaration
// <?xml version="1.0" encoding="utf-8"?>, then the root element of doc.Type
// with its schema's namespace as the only (default) namespace declaration,
// the elements in the order of the type's xs:sequence, and nothing else. No
// whitespace is added anywhere, so a signature computed over the result
// stays valid as long as the bytes are kept. The ds:Signature the schemas
// require is the signer's to append, as the last child of the root.
//
// Formats: dates are xs:dateTime in Costa Rica time with seconds and an
// explicit -06:00 offset (2026-11-21T14:03:00-06:00); amounts are plain
// decimals without exponent, rounded half away from zero to at most 5
// decimals, with trailing fraction zeros removed (1200, 438.9255, 0.5, 0);
// absent optional amounts and empty optional strings are omitted; elements
// that do not exist in the type's schema are not written even when the
// model carries them (for example TotalIVADevuelto in a FEC); the Emisor
// writes up to 4 CorreoElectronico, the Receptor only its first (its schema
// allows one).
//
// MarshalXML does not validate the document: it fails only when a required
// element is missing or a text cannot be written as XML (invalid UTF-8 or a
// control character). Calculate and validate the document first.
func MarshalXML(doc *Document) ([]byte, error) {
	if doc == nil {
		return nil, errors.New("marshal xml: nil document")
	}
	return AppendXML(make([]byte, 0, 4096+1024*len(doc.DetalleServicio)), doc)
}

// AppendXML is MarshalXML appending to dst, for callers that reuse buffers.
func AppendXML(dst []byte, doc *Document) ([]byte, error) {
	if doc == nil {
		return dst, errors.New("marshal xml: nil document")
	}
	shape := xmlShapes[doc.Type]
	if shape == nil {
		return dst, fmt.Errorf("marshal xml: %w %q", ErrUnknownDocumentType, doc.Type)
	}
	var w xmlWriter
	w.buf, w.stack = dst, w.stackBuf[:0]
	w.writeDocument(doc, shape)
	if w.err != nil {
		return dst, fmt.Errorf("marshal xml %s: %w", doc.Type.Abbrev(), w.err)
	}
	return w.buf, nil
}

func (w *xmlWriter) writeDocument(d *Document, s *xmlShape) {
	root := d.Type.RootElement()
	w.buf = append(w.buf, xmlDeclaration...)
	w.buf = append(w.buf, '<')
	w.buf = append(w.buf, root...)
	w.buf = append(w.buf, ` xmlns="`...)
	w.buf = append(w.buf, d.Type.Namespace()...) // a constant: nothing to escape
	w.buf = append(w.buf, '"', '>')

	w.str("Clave", d.Clave)
	w.str("ProveedorSistemas", d.ProveedorSistemas)
	if s.actividadEmisor {
		w.optStr("CodigoActividadEmisor", d.CodigoActividadEmisor)
	}
	if s.actividadReceptor {
		w.optStr("CodigoActividadReceptor", d.CodigoActividadReceptor)
	}
	w.str("NumeroConsecutivo", d.NumeroConsecutivo)
	w.dateTime("FechaEmision", d.FechaEmision)
	w.writeEmisor(&d.Emisor, s)
	if d.Receptor != nil {
		w.writeReceptor(d.Receptor, s)
	}
	w.str("CondicionVenta", d.CondicionVenta)
	if !s.rep {
		w.optStr("CondicionVentaOtros", d.CondicionVentaOtros)
		w.optInt("PlazoCredito", int64(d.PlazoCredito))
	}
	if len(d.DetalleServicio) > 0 {
		w.start("DetalleServicio")
		for i := range d.DetalleServicio {
			if s.rep {
				w.writeLineaREP(&d.DetalleServicio[i])
			} else {
				w.writeLinea(&d.DetalleServicio[i], s)
			}
		}
		w.end("DetalleServicio")
	}
	if !s.rep {
		for i := range d.OtrosCargos {
			w.writeOtroCargo(&d.OtrosCargos[i])
		}
	}
	w.writeResumen(&d.ResumenFactura, s)
	for i := range d.InformacionReferencia {
		w.writeReferencia(&d.InformacionReferencia[i], s)
	}
	if !s.rep && d.Otros != nil && (len(d.Otros.OtroTexto) > 0 || len(d.Otros.OtroContenido) > 0) {
		w.start("Otros")
		for _, o := range d.Otros.OtroTexto {
			w.writeOtro("OtroTexto", o)
		}
		for _, o := range d.Otros.OtroContenido {
			w.writeOtro("OtroContenido", o)
		}
		w.end("Otros")
	}
	w.end(root)
}

func (w *xmlWriter) writeOtro(name string, o OtroTexto) {
	w.traced(name)
	w.buf = append(w.buf, '<')
	w.buf = append(w.buf, name...)
	if o.Codigo != "" {
		w.attr("codigo", o.Codigo)
	}
	w.buf = append(w.buf, '>')
	w.text(name, o.Valor)
	w.close(name)
}

func (w *xmlWriter) writeIdentificacion(name string, id *Identificacion) {
	w.start(name)
	w.str("Tipo", id.Tipo)
	w.str("Numero", id.Numero)
	w.end(name)
}

func (w *xmlWriter) writeUbicacion(u *Ubicacion) {
	w.start("Ubicacion")
	w.str("Provincia", u.Provincia)
	w.str("Canton", u.Canton)
	w.str("Distrito", u.Distrito)
	w.optStr("Barrio", u.Barrio)
	w.str("OtrasSenas", u.OtrasSenas)
	w.end("Ubicacion")
}

func (w *xmlWriter) writeTelefono(t *Telefono) {
	w.start("Telefono")
	w.str("CodigoPais", t.CodigoPais)
	w.str("NumTelefono", t.NumTelefono)
	w.end("Telefono")
}

// writeCorreos writes up to max CorreoElectronico elements (max < 0: no
// limit). An entry holding a ';'-separated list counts as several addresses.
func (w *xmlWriter) writeCorreos(list []string, max int) {
	n := 0
	for _, c := range list {
		for c != "" {
			if max >= 0 && n >= max {
				return
			}
			addr := c
			if i := strings.IndexByte(c, ';'); i >= 0 {
				addr, c = c[:i], c[i+1:]
			} else {
				c = ""
			}
			if addr == "" {
				continue
			}
			w.open("CorreoElectronico")
			w.text("CorreoElectronico", addr)
			w.close("CorreoElectronico")
			n++
		}
	}
}

func (w *xmlWriter) writeEmisor(e *Party, s *xmlShape) {
	w.start("Emisor")
	w.str("Nombre", e.Nombre)
	w.writeIdentificacion("Identificacion", &e.Identificacion)
	if !s.rep {
		w.optStr("Registrofiscal8707", e.Registrofiscal8707)
		w.optStr("NombreComercial", e.NombreComercial)
		if e.Ubicacion != nil {
			w.writeUbicacion(e.Ubicacion)
		}
		if s.emisorOtrasSenasExtranjero {
			w.optStr("OtrasSenasExtranjero", e.OtrasSenasExtranjero)
		}
		if e.Telefono != nil {
			w.writeTelefono(e.Telefono)
		}
	}
	w.writeCorreos(e.CorreoElectronico, 4)
	w.end("Emisor")
}

func (w *xmlWriter) writeReceptor(r *Party, s *xmlShape) {
	w.start("Receptor")
	w.str("Nombre", r.Nombre)
	if !r.Identificacion.IsZero() {
		w.writeIdentificacion("Identificacion", &r.Identificacion)
	}
	if !s.rep {
		w.optStr("NombreComercial", r.NombreComercial)
		if s.receptorUbicacion && r.Ubicacion != nil {
			w.writeUbicacion(r.Ubicacion)
		}
		if s.receptorOtrasSenasExtranjero {
			w.optStr("OtrasSenasExtranjero", r.OtrasSenasExtranjero)
		}
		if r.Telefono != nil {
			w.writeTelefono(r.Telefono)
		}
	}
	w.writeCorreos(r.CorreoElectronico, 1)
	w.end("Receptor")
}

func (w *xmlWriter) writeLinea(l *LineaDetalle, s *xmlShape) {
	if w.err != nil {
		return
	}
	w.line = l.NumeroLinea
	defer func() { w.line = 0 }()
	w.start("LineaDetalle")
	w.lineNumber(l.NumeroLinea)
	if s.partidaArancelaria {
		w.optStr("PartidaArancelaria", l.PartidaArancelaria)
	}
	if s.cabysRequired {
		w.str("CodigoCABYS", l.CodigoCABYS)
	} else {
		w.optStr("CodigoCABYS", l.CodigoCABYS)
	}
	for _, c := range l.CodigoComercial {
		w.start("CodigoComercial")
		w.str("Tipo", c.Tipo)
		w.str("Codigo", c.Codigo)
		w.end("CodigoComercial")
	}
	w.amount("Cantidad", l.Cantidad)
	w.str("UnidadMedida", l.UnidadMedida)
	if s.tipoTransaccion {
		w.optStr("TipoTransaccion", l.TipoTransaccion)
	}
	w.optStr("UnidadMedidaComercial", l.UnidadMedidaComercial)
	w.str("Detalle", l.Detalle)
	for _, v := range l.NumeroVINoSerie {
		w.optStr("NumeroVINoSerie", v)
	}
	w.optStr("RegistroMedicamento", l.RegistroMedicamento)
	w.optStr("FormaFarmaceutica", l.FormaFarmaceutica)
	if s.surtido && len(l.DetalleSurtido) > 0 {
		w.start("DetalleSurtido")
		for j := range l.DetalleSurtido {
			w.writeSurtido(&l.DetalleSurtido[j], s)
		}
		w.end("DetalleSurtido")
	}
	w.amount("PrecioUnitario", l.PrecioUnitario)
	w.amount("MontoTotal", l.MontoTotal)
	for j := range l.Descuento {
		dd := &l.Descuento[j]
		w.start("Descuento")
		w.amount("MontoDescuento", dd.MontoDescuento)
		w.str("CodigoDescuento", dd.CodigoDescuento)
		w.optStr("CodigoDescuentoOTRO", dd.CodigoDescuentoOTRO)
		w.optStr("NaturalezaDescuento", dd.NaturalezaDescuento)
		w.end("Descuento")
	}
	w.amount("SubTotal", l.SubTotal)
	if s.ivaCobradoFabrica {
		w.optStr("IVACobradoFabrica", l.IVACobradoFabrica)
	}
	if s.baseImponible {
		w.amount("BaseImponible", l.BaseImponible)
	}
	for j := range l.Impuesto {
		w.writeImpuesto(&l.Impuesto[j], s)
	}
	if s.impuestoAsumidoReq {
		w.amount("ImpuestoAsumidoEmisorFabrica", l.ImpuestoAsumidoEmisorFabrica)
	} else if s.impuestoAsumido {
		w.optAmount("ImpuestoAsumidoEmisorFabrica", l.ImpuestoAsumidoEmisorFabrica)
	}
	if s.impuestoNeto {
		w.amount("ImpuestoNeto", l.ImpuestoNeto)
	}
	w.amount("MontoTotalLinea", l.MontoTotalLinea)
	w.end("LineaDetalle")
}

func (w *xmlWriter) lineNumber(n int) {
	if n <= 0 {
		w.failf("%s is required", w.where("NumeroLinea"))
		return
	}
	w.open("NumeroLinea")
	w.buf = strconv.AppendInt(w.buf, int64(n), 10)
	w.close("NumeroLinea")
}

func (w *xmlWriter) writeImpuesto(t *Impuesto, s *xmlShape) {
	w.start("Impuesto")
	w.str("Codigo", t.Codigo)
	w.optStr("CodigoImpuestoOTRO", t.CodigoImpuestoOTRO)
	w.optStr("CodigoTarifaIVA", t.CodigoTarifaIVA)
	w.optAmount("Tarifa", t.Tarifa)
	w.optAmount("FactorCalculoIVA", t.FactorCalculoIVA)
	if s.datosEspecificos && t.DatosImpuestoEspecifico != nil {
		e := t.DatosImpuestoEspecifico
		w.start("DatosImpuestoEspecifico")
		w.amount("CantidadUnidadMedida", e.CantidadUnidadMedida)
		w.optAmount("Porcentaje", e.Porcentaje)
		w.optAmount("Proporcion", e.Proporcion)
		w.optAmount("VolumenUnidadConsumo", e.VolumenUnidadConsumo)
		w.amount("ImpuestoUnidad", e.ImpuestoUnidad)
		w.end("DatosImpuestoEspecifico")
	}
	w.amount("Monto", t.Monto)
	if s.montoExportacion {
		w.optAmount("MontoExportacion", t.MontoExportacion)
	}
	if s.exoneracion && t.Exoneracion != nil {
		x := t.Exoneracion
		w.start("Exoneracion")
		w.str("TipoDocumentoEX1", x.TipoDocumentoEX1)
		w.optStr("TipoDocumentoOTRO", x.TipoDocumentoOTRO)
		w.str("NumeroDocumento", x.NumeroDocumento)
		w.optInt("Articulo", int64(x.Articulo))
		w.optInt("Inciso", int64(x.Inciso))
		w.str("NombreInstitucion", x.NombreInstitucion)
		w.optStr("NombreInstitucionOtros", x.NombreInstitucionOtros)
		w.dateTime("FechaEmisionEX", x.FechaEmisionEX)
		w.amount("TarifaExonerada", x.TarifaExonerada)
		w.amount("MontoExoneracion", x.MontoExoneracion)
		w.end("Exoneracion")
	}
	w.end("Impuesto")
}

func (w *xmlWriter) writeSurtido(c *LineaDetalleSurtido, s *xmlShape) {
	w.start("LineaDetalleSurtido")
	w.str("CodigoCABYSSurtido", c.CodigoCABYSSurtido)
	for _, cc := range c.CodigoComercialSurtido {
		w.start("CodigoComercialSurtido")
		w.str("TipoSurtido", cc.Tipo)
		w.str("CodigoSurtido", cc.Codigo)
		w.end("CodigoComercialSurtido")
	}
	w.amount("CantidadSurtido", c.CantidadSurtido)
	w.str("UnidadMedidaSurtido", c.UnidadMedidaSurtido)
	w.optStr("UnidadMedidaComercialSurtido", c.UnidadMedidaComercialSurtido)
	w.str("DetalleSurtido", c.DetalleSurtido)
	w.amount("PrecioUnitarioSurtido", c.PrecioUnitarioSurtido)
	w.amount("MontoTotalSurtido", c.MontoTotalSurtido)
	for _, d := range c.DescuentoSurtido {
		w.start("DescuentoSurtido")
		w.amount("MontoDescuentoSurtido", d.MontoDescuentoSurtido)
		w.str("CodigoDescuentoSurtido", d.CodigoDescuentoSurtido)
		w.optStr("DescuentoSurtidoOtros", d.DescuentoSurtidoOtros)
		w.end("DescuentoSurtido")
	}
	w.amount("SubTotalSurtido", c.SubTotalSurtido)
	if !s.surtidoReduced {
		w.optStr("IVACobradoFabricaSurtido", c.IVACobradoFabricaSurtido)
		w.amount("BaseImponibleSurtido", c.BaseImponibleSurtido)
	}
	for _, t := range c.ImpuestoSurtido {
		w.start("ImpuestoSurtido")
		w.str("CodigoImpuestoSurtido", t.CodigoImpuestoSurtido)
		w.optStr("CodigoImpuestoOTROSurtido", t.CodigoImpuestoOTROSurtido)
		w.optStr("CodigoTarifaIVASurtido", t.CodigoTarifaIVASurtido)
		w.optAmount("TarifaSurtido", t.TarifaSurtido)
		if !s.surtidoReduced && t.DatosImpuestoEspecificoSurtido != nil {
			e := t.DatosImpuestoEspecificoSurtido
			w.start("DatosImpuestoEspecificoSurtido")
			w.amount("CantidadUnidadMedidaSurtido", e.CantidadUnidadMedidaSurtido)
			w.optAmount("PorcentajeSurtido", e.PorcentajeSurtido)
			w.optAmount("ProporcionSurtido", e.ProporcionSurtido)
			w.optAmount("VolumenUnidadConsumoSurtido", e.VolumenUnidadConsumoSurtido)
			w.amount("ImpuestoUnidadSurtido", e.ImpuestoUnidadSurtido)
			w.end("DatosImpuestoEspecificoSurtido")
		}
		w.amount("MontoImpuestoSurtido", t.MontoImpuestoSurtido)
		w.end("ImpuestoSurtido")
	}
	w.end("LineaDetalleSurtido")
}

func (w *xmlWriter) writeLineaREP(l *LineaDetalle) {
	if w.err != nil {
		return
	}
	w.line = l.NumeroLinea
	defer func() { w.line = 0 }()
	w.start("LineaDetalle")
	w.lineNumber(l.NumeroLinea)
	w.str("Detalle", l.Detalle)
	w.amount("MontoTotal", l.MontoTotal)
	w.amount("SubTotal", l.SubTotal)
	for j := range l.Impuesto {
		t := &l.Impuesto[j]
		w.start("Impuesto")
		w.str("Codigo", t.Codigo)
		w.optStr("CodigoImpuestoOTRO", t.CodigoImpuestoOTRO)
		w.optStr("CodigoTarifaIVA", t.CodigoTarifaIVA)
		w.optAmount("Tarifa", t.Tarifa)
		w.optAmount("FactorCalculoIVA", t.FactorCalculoIVA)
		w.amount("Monto", t.Monto)
		w.end("Impuesto")
	}
	w.amount("ImpuestoNeto", l.ImpuestoNeto)
	w.amount("MontoTotalLinea", l.MontoTotalLinea)
	w.end("LineaDetalle")
}

func (w *xmlWriter) writeOtroCargo(o *OtroCargo) {
	w.start("OtrosCargos")
	w.str("TipoDocumentoOC", o.TipoDocumentoOC)
	w.optStr("TipoDocumentoOTROS", o.TipoDocumentoOTROS)
	if !o.IdentificacionTercero.IsZero() {
		w.writeIdentificacion("IdentificacionTercero", &o.IdentificacionTercero)
	}
	w.optStr("NombreTercero", o.NombreTercero)
	w.str("Detalle", o.Detalle)
	w.optAmount("PorcentajeOC", o.PorcentajeOC)
	w.amount("MontoCargo", o.MontoCargo)
	w.end("OtrosCargos")
}

func (w *xmlWriter) writeResumen(r *ResumenFactura, s *xmlShape) {
	w.start("ResumenFactura")
	w.start("CodigoTipoMoneda")
	w.str("CodigoMoneda", r.CodigoTipoMoneda.CodigoMoneda)
	w.amount("TipoCambio", r.CodigoTipoMoneda.TipoCambio)
	w.end("CodigoTipoMoneda")
	if !s.rep {
		w.optAmount("TotalServGravados", r.TotalServGravados)
		w.optAmount("TotalServExentos", r.TotalServExentos)
		if s.exoneradoTotals {
			w.optAmount("TotalServExonerado", r.TotalServExonerado)
			w.optAmount("TotalServNoSujeto", r.TotalServNoSujeto)
		}
		w.optAmount("TotalMercanciasGravadas", r.TotalMercanciasGravadas)
		w.optAmount("TotalMercanciasExentas", r.TotalMercanciasExentas)
		if s.exoneradoTotals {
			w.optAmount("TotalMercExonerada", r.TotalMercExonerada)
			w.optAmount("TotalMercNoSujeta", r.TotalMercNoSujeta)
		}
		w.optAmount("TotalGravado", r.TotalGravado)
		w.optAmount("TotalExento", r.TotalExento)
		if s.exoneradoTotals {
			w.optAmount("TotalExonerado", r.TotalExonerado)
			w.optAmount("TotalNoSujeto", r.TotalNoSujeto)
		}
	}
	w.amount("TotalVenta", r.TotalVenta)
	if !s.rep {
		w.optAmount("TotalDescuentos", r.TotalDescuentos)
	}
	w.amount("TotalVentaNeta", r.TotalVentaNeta)
	for i := range r.TotalDesgloseImpuesto {
		t := &r.TotalDesgloseImpuesto[i]
		w.start("TotalDesgloseImpuesto")
		w.str("Codigo", t.Codigo)
		w.optStr("CodigoTarifaIVA", t.CodigoTarifaIVA)
		w.amount("TotalMontoImpuesto", t.TotalMontoImpuesto)
		w.end("TotalDesgloseImpuesto")
	}
	w.optAmount("TotalImpuesto", r.TotalImpuesto)
	if !s.rep {
		w.optAmount("TotalImpAsumEmisorFabrica", r.TotalImpAsumEmisorFabrica)
		if s.ivaDevuelto {
			w.optAmount("TotalIVADevuelto", r.TotalIVADevuelto)
		}
		w.optAmount("TotalOtrosCargos", r.TotalOtrosCargos)
	}
	for i := range r.MedioPago {
		m := &r.MedioPago[i]
		w.start("MedioPago")
		if s.rep {
			w.str("TipoMedioPago", m.TipoMedioPago)
		} else {
			w.optStr("TipoMedioPago", m.TipoMedioPago)
		}
		w.optStr("MedioPagoOtros", m.MedioPagoOtros)
		w.optAmount("TotalMedioPago", m.TotalMedioPago)
		w.end("MedioPago")
	}
	w.amount("TotalComprobante", r.TotalComprobante)
	w.end("ResumenFactura")
}

func (w *xmlWriter) writeReferencia(r *InformacionReferencia, s *xmlShape) {
	w.start("InformacionReferencia")
	w.str("TipoDocIR", r.TipoDocIR)
	w.optStr("TipoDocRefOTRO", r.TipoDocRefOTRO)
	if s.rep {
		w.str("Numero", r.Numero)
	} else {
		w.optStr("Numero", r.Numero)
	}
	w.dateTime("FechaEmisionIR", r.FechaEmisionIR)
	w.optStr("Codigo", r.Codigo)
	w.optStr("CodigoReferenciaOTRO", r.CodigoReferenciaOTRO)
	w.optStr("Razon", r.Razon)
	w.end("InformacionReferencia")
}
