package hacienda

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"
)

// NamespaceXMLDSig is the namespace of the ds:Signature every v4.4
// document ends with.
const NamespaceXMLDSig = "http://www.w3.org/2000/09/xmldsig#"

// ErrNotV44Document is wrapped by ParseXML when the bytes are not a v4.4
// document of one of the issued types (not XML, an unknown root element, or
// the root in another namespace, such as an older version's).
var ErrNotV44Document = errors.New("not a v4.4 electronic document")

// ParseXML reads a v4.4 document of any of the seven issued types back into
// the model. The root element must be one of FacturaElectronica,
// NotaDebitoElectronica, NotaCreditoElectronica, TiqueteElectronico,
// FacturaElectronicaCompra, FacturaElectronicaExportacion or
// ReciboElectronicoPago, in its v4.4 namespace, and every element below it
// must be in that same namespace, except the ds:Signature children of the
// root, which are ignored.
//
// The parser is strict: an unknown element, an element given twice where
// only one is allowed, a text where a decimal, an integer or a date is
// expected are errors; and the elements read must be, in order, the
// elements MarshalXML writes for the model read (checkStructure), which
// refuses elements out of the type's schema order, elements the type's
// schema does not have, empty optional elements and missing required
// ones. It is not a full schema validation (lengths, patterns and code lists
// are validation's business). Values are taken as written; surrounding
// whitespace is dropped only where the schema's type collapses it
// (decimals, integers, dates), so build → parse → build gives the same
// bytes.
func ParseXML(b []byte) (*Document, error) {
	x := etree.NewDocument()
	if err := x.ReadFromBytes(b); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotV44Document, err)
	}
	root := x.Root()
	if root == nil {
		return nil, fmt.Errorf("%w: no root element", ErrNotV44Document)
	}
	var typ DocumentType
	for _, t := range DocumentTypes {
		if t.RootElement() == root.Tag {
			typ = t
			break
		}
	}
	if typ == "" {
		return nil, fmt.Errorf("%w: unknown root element %s", ErrNotV44Document, root.Tag)
	}
	if ns := root.NamespaceURI(); ns != typ.Namespace() {
		return nil, fmt.Errorf("%w: root element %s is in namespace %q, want %q", ErrNotV44Document, root.Tag, ns, typ.Namespace())
	}
	p := &xmlParser{ns: typ.Namespace()}
	d := &Document{Type: typ}
	p.document(root, d)
	if p.err != nil {
		return nil, fmt.Errorf("parse %s: %w", typ.Abbrev(), p.err)
	}
	if err := checkStructure(root, d); err != nil {
		return nil, fmt.Errorf("parse %s: %w", typ.Abbrev(), err)
	}
	return d, nil
}

// checkStructure compares the elements of the document read, in order,
// with the elements the builder writes for the model read from it. The
// builder follows the type's schema, so a difference is an element out of
// its schema's order, an element the type's schema does not have, an
// element left empty or a required element missing, and the document is
// refused. As a consequence ParseXML accepts exactly the documents whose
// structure MarshalXML reproduces.
func checkStructure(root *etree.Element, d *Document) error {
	w := xmlWriter{tracing: true}
	w.stack = w.stackBuf[:0]
	w.writeDocument(d, xmlShapes[d.Type])
	if w.err != nil {
		return fmt.Errorf("missing element: %w", w.err)
	}
	want := w.trace
	i := 0
	var last *etree.Element
	var walk func(el *etree.Element, depth int) error
	walk = func(el *etree.Element, depth int) error {
		for _, c := range el.ChildElements() {
			if depth == 0 && c.Tag == "Signature" && c.NamespaceURI() == NamespaceXMLDSig {
				continue
			}
			if i >= len(want) {
				return fmt.Errorf("%s: element not expected here", c.GetPath())
			}
			if want[i].depth != depth || want[i].name != c.Tag {
				return fmt.Errorf("%s: element not expected here, %s expected", c.GetPath(), want[i].name)
			}
			i++
			last = c
			if err := walk(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return err
	}
	if i < len(want) {
		where := root.GetPath()
		if last != nil {
			where = last.GetPath()
		}
		return fmt.Errorf("%s: %s expected after it", where, want[i].name)
	}
	return nil
}

// xmlParser walks an etree document into the model. The first error sticks.
type xmlParser struct {
	ns  string
	err error
}

func (p *xmlParser) failf(el *etree.Element, format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%s: %s", el.GetPath(), fmt.Sprintf(format, args...))
	}
}

// children returns the child elements of el after checking that each one
// is in the document's namespace.
func (p *xmlParser) children(el *etree.Element) []*etree.Element {
	kids := el.ChildElements()
	for _, c := range kids {
		if ns := c.NamespaceURI(); ns != p.ns {
			p.failf(c, "element in namespace %q, want %q", ns, p.ns)
			return nil
		}
	}
	if p.err != nil {
		return nil
	}
	return kids
}

func (p *xmlParser) unexpected(el *etree.Element) {
	p.failf(el, "unexpected element")
}

// leaf returns the text of an element that must have no child elements.
func (p *xmlParser) leaf(el *etree.Element) string {
	if len(el.ChildElements()) > 0 {
		p.failf(el, "element has child elements, want only text")
		return ""
	}
	return el.Text()
}

// str stores the text of el into *dst; a second occurrence is an error.
func (p *xmlParser) str(el *etree.Element, dst *string) {
	if *dst != "" {
		p.failf(el, "element given twice")
		return
	}
	*dst = p.leaf(el)
}

// number is str for a string the schema types as an integer (Provincia,
// Canton, Distrito, CodigoPais, NumTelefono): xs:integer collapses
// whitespace, so surrounding whitespace is dropped. Codes typed xs:string
// keep their whitespace, as the schema does, and fail validation if they
// have any.
func (p *xmlParser) number(el *etree.Element, dst *string) {
	if *dst != "" {
		p.failf(el, "element given twice")
		return
	}
	*dst = strings.TrimSpace(p.leaf(el))
}

func (p *xmlParser) amount(el *etree.Element, dst *Amount) {
	if dst.IsSet() {
		p.failf(el, "element given twice")
		return
	}
	a, err := ParseAmount(strings.TrimSpace(p.leaf(el)))
	if err != nil {
		p.failf(el, "%v", err)
		return
	}
	*dst = a
}

func (p *xmlParser) integer(el *etree.Element, dst *int) {
	if *dst != 0 {
		p.failf(el, "element given twice")
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(p.leaf(el)))
	if err != nil {
		p.failf(el, "not an integer")
		return
	}
	*dst = n
}

func (p *xmlParser) dateTime(el *etree.Element, dst *time.Time) {
	if !dst.IsZero() {
		p.failf(el, "element given twice")
		return
	}
	t, err := parseXMLDateTime(strings.TrimSpace(p.leaf(el)))
	if err != nil {
		p.failf(el, "%v", err)
		return
	}
	*dst = t
}

// parseXMLDateTime reads an xs:dateTime. A value without offset is taken
// as Costa Rica time.
func parseXMLDateTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, CostaRica); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not an xs:dateTime", s)
}

func (p *xmlParser) document(root *etree.Element, d *Document) {
	seen := map[string]bool{}
	once := func(el *etree.Element) bool {
		if seen[el.Tag] {
			p.failf(el, "element given twice")
			return false
		}
		seen[el.Tag] = true
		return true
	}
	for _, el := range root.ChildElements() {
		if p.err != nil {
			return
		}
		if el.Tag == "Signature" && el.NamespaceURI() == NamespaceXMLDSig {
			continue
		}
		if ns := el.NamespaceURI(); ns != p.ns {
			p.failf(el, "element in namespace %q, want %q", ns, p.ns)
			return
		}
		switch el.Tag {
		case "Clave":
			p.str(el, &d.Clave)
		case "ProveedorSistemas":
			p.str(el, &d.ProveedorSistemas)
		case "CodigoActividadEmisor":
			p.str(el, &d.CodigoActividadEmisor)
		case "CodigoActividadReceptor":
			p.str(el, &d.CodigoActividadReceptor)
		case "NumeroConsecutivo":
			p.str(el, &d.NumeroConsecutivo)
		case "FechaEmision":
			p.dateTime(el, &d.FechaEmision)
		case "Emisor":
			if once(el) {
				p.party(el, &d.Emisor)
			}
		case "Receptor":
			if once(el) {
				d.Receptor = &Party{}
				p.party(el, d.Receptor)
			}
		case "CondicionVenta":
			p.str(el, &d.CondicionVenta)
		case "CondicionVentaOtros":
			p.str(el, &d.CondicionVentaOtros)
		case "PlazoCredito":
			p.integer(el, &d.PlazoCredito)
		case "DetalleServicio":
			if once(el) {
				for _, l := range p.children(el) {
					if l.Tag != "LineaDetalle" {
						p.unexpected(l)
						break
					}
					d.DetalleServicio = append(d.DetalleServicio, LineaDetalle{})
					p.linea(l, &d.DetalleServicio[len(d.DetalleServicio)-1])
				}
			}
		case "OtrosCargos":
			d.OtrosCargos = append(d.OtrosCargos, OtroCargo{})
			p.otroCargo(el, &d.OtrosCargos[len(d.OtrosCargos)-1])
		case "ResumenFactura":
			if once(el) {
				p.resumen(el, &d.ResumenFactura)
			}
		case "InformacionReferencia":
			d.InformacionReferencia = append(d.InformacionReferencia, InformacionReferencia{})
			p.referencia(el, &d.InformacionReferencia[len(d.InformacionReferencia)-1])
		case "Otros":
			if once(el) {
				d.Otros = &Otros{}
				p.otros(el, d.Otros)
			}
		default:
			p.unexpected(el)
		}
	}
}

func (p *xmlParser) party(el *etree.Element, pt *Party) {
	for _, c := range p.children(el) {
		switch c.Tag {
		case "Nombre":
			p.str(c, &pt.Nombre)
		case "Identificacion":
			if !pt.Identificacion.IsZero() {
				p.failf(c, "element given twice")
				return
			}
			p.identificacion(c, &pt.Identificacion)
		case "Registrofiscal8707":
			p.str(c, &pt.Registrofiscal8707)
		case "NombreComercial":
			p.str(c, &pt.NombreComercial)
		case "Ubicacion":
			if pt.Ubicacion != nil {
				p.failf(c, "element given twice")
				return
			}
			pt.Ubicacion = &Ubicacion{}
			p.ubicacion(c, pt.Ubicacion)
		case "OtrasSenasExtranjero":
			p.str(c, &pt.OtrasSenasExtranjero)
		case "Telefono":
			if pt.Telefono != nil {
				p.failf(c, "element given twice")
				return
			}
			pt.Telefono = &Telefono{}
			for _, t := range p.children(c) {
				switch t.Tag {
				case "CodigoPais":
					p.number(t, &pt.Telefono.CodigoPais)
				case "NumTelefono":
					p.number(t, &pt.Telefono.NumTelefono)
				default:
					p.unexpected(t)
				}
			}
		case "CorreoElectronico":
			pt.CorreoElectronico = append(pt.CorreoElectronico, p.leaf(c))
		default:
			p.unexpected(c)
		}
	}
}

func (p *xmlParser) identificacion(el *etree.Element, id *Identificacion) {
	for _, c := range p.children(el) {
		switch c.Tag {
		case "Tipo":
			p.str(c, &id.Tipo)
		case "Numero":
			p.str(c, &id.Numero)
		default:
			p.unexpected(c)
		}
	}
}

func (p *xmlParser) ubicacion(el *etree.Element, u *Ubicacion) {
	for _, c := range p.children(el) {
		switch c.Tag {
		case "Provincia":
			p.number(c, &u.Provincia)
		case "Canton":
			p.number(c, &u.Canton)
		case "Distrito":
			p.number(c, &u.Distrito)
		case "Barrio":
			p.str(c, &u.Barrio)
		case "OtrasSenas":
			p.str(c, &u.OtrasSenas)
		default:
			p.unexpected(c)
		}
	}
}

func (p *xmlParser) codigoComercial(el *etree.Element, tipo, codigo string) CodigoComercial {
	var cc CodigoComercial
	for _, c := range p.children(el) {
		switch c.Tag {
		case tipo:
			p.str(c, &cc.Tipo)
		case codigo:
			p.str(c, &cc.Codigo)
		default:
			p.unexpected(c)
		}
	}
	return cc
}

func (p *xmlParser) linea(el *etree.Element, l *LineaDetalle) {
	surtido := false
	for _, c := range p.children(el) {
		switch c.Tag {
		case "NumeroLinea":
			p.integer(c, &l.NumeroLinea)
		case "PartidaArancelaria":
			p.str(c, &l.PartidaArancelaria)
		case "CodigoCABYS":
			p.str(c, &l.CodigoCABYS)
		case "CodigoComercial":
			l.CodigoComercial = append(l.CodigoComercial, p.codigoComercial(c, "Tipo", "Codigo"))
		case "Cantidad":
			p.amount(c, &l.Cantidad)
		case "UnidadMedida":
			p.str(c, &l.UnidadMedida)
		case "TipoTransaccion":
			p.str(c, &l.TipoTransaccion)
		case "UnidadMedidaComercial":
			p.str(c, &l.UnidadMedidaComercial)
		case "Detalle":
			p.str(c, &l.Detalle)
		case "NumeroVINoSerie":
			l.NumeroVINoSerie = append(l.NumeroVINoSerie, p.leaf(c))
		case "RegistroMedicamento":
			p.str(c, &l.RegistroMedicamento)
		case "FormaFarmaceutica":
			p.str(c, &l.FormaFarmaceutica)
		case "DetalleSurtido":
			if surtido {
				p.failf(c, "element given twice")
				return
			}
			surtido = true
			for _, s := range p.children(c) {
				if s.Tag != "LineaDetalleSurtido" {
					p.unexpected(s)
					return
				}
				l.DetalleSurtido = append(l.DetalleSurtido, LineaDetalleSurtido{})
				p.surtido(s, &l.DetalleSurtido[len(l.DetalleSurtido)-1])
			}
		case "PrecioUnitario":
			p.amount(c, &l.PrecioUnitario)
		case "MontoTotal":
			p.amount(c, &l.MontoTotal)
		case "Descuento":
			var d Descuento
			for _, x := range p.children(c) {
				switch x.Tag {
				case "MontoDescuento":
					p.amount(x, &d.MontoDescuento)
				case "CodigoDescuento":
					p.str(x, &d.CodigoDescuento)
				case "CodigoDescuentoOTRO":
					p.str(x, &d.CodigoDescuentoOTRO)
				case "NaturalezaDescuento":
					p.str(x, &d.NaturalezaDescuento)
				default:
					p.unexpected(x)
				}
			}
			l.Descuento = append(l.Descuento, d)
		case "SubTotal":
			p.amount(c, &l.SubTotal)
		case "IVACobradoFabrica":
			p.str(c, &l.IVACobradoFabrica)
		case "BaseImponible":
			p.amount(c, &l.BaseImponible)
		case "Impuesto":
			l.Impuesto = append(l.Impuesto, Impuesto{})
			p.impuesto(c, &l.Impuesto[len(l.Impuesto)-1])
		case "ImpuestoAsumidoEmisorFabrica":
			p.amount(c, &l.ImpuestoAsumidoEmisorFabrica)
		case "ImpuestoNeto":
			p.amount(c, &l.ImpuestoNeto)
		case "MontoTotalLinea":
			p.amount(c, &l.MontoTotalLinea)
		default:
			p.unexpected(c)
		}
	}
}

func (p *xmlParser) impuesto(el *etree.Element, t *Impuesto) {
	for _, c := range p.children(el) {
		switch c.Tag {
		case "Codigo":
			p.str(c, &t.Codigo)
		case "CodigoImpuestoOTRO":
			p.str(c, &t.CodigoImpuestoOTRO)
		case "CodigoTarifaIVA":
			p.str(c, &t.CodigoTarifaIVA)
		case "Tarifa":
			p.amount(c, &t.Tarifa)
		case "FactorCalculoIVA":
			p.amount(c, &t.FactorCalculoIVA)
		case "DatosImpuestoEspecifico":
			if t.DatosImpuestoEspecifico != nil {
				p.failf(c, "element given twice")
				return
			}
			e := &DatosImpuestoEspecifico{}
			t.DatosImpuestoEspecifico = e
			for _, x := range p.children(c) {
				switch x.Tag {
				case "CantidadUnidadMedida":
					p.amount(x, &e.CantidadUnidadMedida)
				case "Porcentaje":
					p.amount(x, &e.Porcentaje)
				case "Proporcion":
					p.amount(x, &e.Proporcion)
				case "VolumenUnidadConsumo":
					p.amount(x, &e.VolumenUnidadConsumo)
				case "ImpuestoUnidad":
					p.amount(x, &e.ImpuestoUnidad)
				default:
					p.unexpected(x)
				}
			}
		case "Monto":
			p.amount(c, &t.Monto)
		case "MontoExportacion":
			p.amount(c, &t.MontoExportacion)
		case "Exoneracion":
			if t.Exoneracion != nil {
				p.failf(c, "element given twice")
				return
			}
			x := &Exoneracion{}
			t.Exoneracion = x
			p.exoneracion(c, x)
		default:
			p.unexpected(c)
		}
	}
}

func (p *xmlParser) exoneracion(el *etree.Element, x *Exoneracion) {
	for _, c := range p.children(el) {
		switch c.Tag {
		case "TipoDocumentoEX1":
			p.str(c, &x.TipoDocumentoEX1)
		case "TipoDocumentoOTRO":
			p.str(c, &x.TipoDocumentoOTRO)
		case "NumeroDocumento":
			p.str(c, &x.NumeroDocumento)
		case "Articulo":
			p.integer(c, &x.Articulo)
		case "Inciso":
			p.integer(c, &x.Inciso)
		case "NombreInstitucion":
			p.str(c, &x.NombreInstitucion)
		case "NombreInstitucionOtros":
			p.str(c, &x.NombreInstitucionOtros)
		case "FechaEmisionEX":
			p.dateTime(c, &x.FechaEmisionEX)
		case "TarifaExonerada":
			p.amount(c, &x.TarifaExonerada)
		case "MontoExoneracion":
			p.amount(c, &x.MontoExoneracion)
		default:
			p.unexpected(c)
		}
	}
}

func (p *xmlParser) surtido(el *etree.Element, s *LineaDetalleSurtido) {
	for _, c := range p.children(el) {
		switch c.Tag {
		case "CodigoCABYSSurtido":
			p.str(c, &s.CodigoCABYSSurtido)
		case "CodigoComercialSurtido":
			s.CodigoComercialSurtido = append(s.CodigoComercialSurtido, p.codigoComercial(c, "TipoSurtido", "CodigoSurtido"))
		case "CantidadSurtido":
			p.amount(c, &s.CantidadSurtido)
		case "UnidadMedidaSurtido":
			p.str(c, &s.UnidadMedidaSurtido)
		case "UnidadMedidaComercialSurtido":
			p.str(c, &s.UnidadMedidaComercialSurtido)
		case "DetalleSurtido":
			p.str(c, &s.DetalleSurtido)
		case "PrecioUnitarioSurtido":
			p.amount(c, &s.PrecioUnitarioSurtido)
		case "MontoTotalSurtido":
			p.amount(c, &s.MontoTotalSurtido)
		case "DescuentoSurtido":
			var d DescuentoSurtido
			for _, x := range p.children(c) {
				switch x.Tag {
				case "MontoDescuentoSurtido":
					p.amount(x, &d.MontoDescuentoSurtido)
				case "CodigoDescuentoSurtido":
					p.str(x, &d.CodigoDescuentoSurtido)
				case "DescuentoSurtidoOtros":
					p.str(x, &d.DescuentoSurtidoOtros)
				default:
					p.unexpected(x)
				}
			}
			s.DescuentoSurtido = append(s.DescuentoSurtido, d)
		case "SubTotalSurtido":
			p.amount(c, &s.SubTotalSurtido)
		case "IVACobradoFabricaSurtido":
			p.str(c, &s.IVACobradoFabricaSurtido)
		case "BaseImponibleSurtido":
			p.amount(c, &s.BaseImponibleSurtido)
		case "ImpuestoSurtido":
			var t ImpuestoSurtido
			for _, x := range p.children(c) {
				switch x.Tag {
				case "CodigoImpuestoSurtido":
					p.str(x, &t.CodigoImpuestoSurtido)
				case "CodigoImpuestoOTROSurtido":
					p.str(x, &t.CodigoImpuestoOTROSurtido)
				case "CodigoTarifaIVASurtido":
					p.str(x, &t.CodigoTarifaIVASurtido)
				case "TarifaSurtido":
					p.amount(x, &t.TarifaSurtido)
				case "DatosImpuestoEspecificoSurtido":
					if t.DatosImpuestoEspecificoSurtido != nil {
						p.failf(x, "element given twice")
						return
					}
					e := &DatosImpuestoEspecificoSurtido{}
					t.DatosImpuestoEspecificoSurtido = e
					for _, y := range p.children(x) {
						switch y.Tag {
						case "CantidadUnidadMedidaSurtido":
							p.amount(y, &e.CantidadUnidadMedidaSurtido)
						case "PorcentajeSurtido":
							p.amount(y, &e.PorcentajeSurtido)
						case "ProporcionSurtido":
							p.amount(y, &e.ProporcionSurtido)
						case "VolumenUnidadConsumoSurtido":
							p.amount(y, &e.VolumenUnidadConsumoSurtido)
						case "ImpuestoUnidadSurtido":
							p.amount(y, &e.ImpuestoUnidadSurtido)
						default:
							p.unexpected(y)
						}
					}
				case "MontoImpuestoSurtido":
					p.amount(x, &t.MontoImpuestoSurtido)
				default:
					p.unexpected(x)
				}
			}
			s.ImpuestoSurtido = append(s.ImpuestoSurtido, t)
		default:
			p.unexpected(c)
		}
	}
}

func (p *xmlParser) otroCargo(el *etree.Element, o *OtroCargo) {
	for _, c := range p.children(el) {
		switch c.Tag {
		case "TipoDocumentoOC":
			p.str(c, &o.TipoDocumentoOC)
		case "TipoDocumentoOTROS":
			p.str(c, &o.TipoDocumentoOTROS)
		case "IdentificacionTercero":
			if !o.IdentificacionTercero.IsZero() {
				p.failf(c, "element given twice")
				return
			}
			p.identificacion(c, &o.IdentificacionTercero)
		case "NombreTercero":
			p.str(c, &o.NombreTercero)
		case "Detalle":
			p.str(c, &o.Detalle)
		case "PorcentajeOC":
			p.amount(c, &o.PorcentajeOC)
		case "MontoCargo":
			p.amount(c, &o.MontoCargo)
		default:
			p.unexpected(c)
		}
	}
}

func (p *xmlParser) resumen(el *etree.Element, r *ResumenFactura) {
	amounts := map[string]*Amount{
		"TotalServGravados":         &r.TotalServGravados,
		"TotalServExentos":          &r.TotalServExentos,
		"TotalServExonerado":        &r.TotalServExonerado,
		"TotalServNoSujeto":         &r.TotalServNoSujeto,
		"TotalMercanciasGravadas":   &r.TotalMercanciasGravadas,
		"TotalMercanciasExentas":    &r.TotalMercanciasExentas,
		"TotalMercExonerada":        &r.TotalMercExonerada,
		"TotalMercNoSujeta":         &r.TotalMercNoSujeta,
		"TotalGravado":              &r.TotalGravado,
		"TotalExento":               &r.TotalExento,
		"TotalExonerado":            &r.TotalExonerado,
		"TotalNoSujeto":             &r.TotalNoSujeto,
		"TotalVenta":                &r.TotalVenta,
		"TotalDescuentos":           &r.TotalDescuentos,
		"TotalVentaNeta":            &r.TotalVentaNeta,
		"TotalImpuesto":             &r.TotalImpuesto,
		"TotalImpAsumEmisorFabrica": &r.TotalImpAsumEmisorFabrica,
		"TotalIVADevuelto":          &r.TotalIVADevuelto,
		"TotalOtrosCargos":          &r.TotalOtrosCargos,
		"TotalComprobante":          &r.TotalComprobante,
	}
	moneda := false
	for _, c := range p.children(el) {
		if a, ok := amounts[c.Tag]; ok {
			p.amount(c, a)
			continue
		}
		switch c.Tag {
		case "CodigoTipoMoneda":
			if moneda {
				p.failf(c, "element given twice")
				return
			}
			moneda = true
			for _, x := range p.children(c) {
				switch x.Tag {
				case "CodigoMoneda":
					p.str(x, &r.CodigoTipoMoneda.CodigoMoneda)
				case "TipoCambio":
					p.amount(x, &r.CodigoTipoMoneda.TipoCambio)
				default:
					p.unexpected(x)
				}
			}
		case "TotalDesgloseImpuesto":
			var t TotalDesgloseImpuesto
			for _, x := range p.children(c) {
				switch x.Tag {
				case "Codigo":
					p.str(x, &t.Codigo)
				case "CodigoTarifaIVA":
					p.str(x, &t.CodigoTarifaIVA)
				case "TotalMontoImpuesto":
					p.amount(x, &t.TotalMontoImpuesto)
				default:
					p.unexpected(x)
				}
			}
			r.TotalDesgloseImpuesto = append(r.TotalDesgloseImpuesto, t)
		case "MedioPago":
			var m MedioPago
			for _, x := range p.children(c) {
				switch x.Tag {
				case "TipoMedioPago":
					p.str(x, &m.TipoMedioPago)
				case "MedioPagoOtros":
					p.str(x, &m.MedioPagoOtros)
				case "TotalMedioPago":
					p.amount(x, &m.TotalMedioPago)
				default:
					p.unexpected(x)
				}
			}
			r.MedioPago = append(r.MedioPago, m)
		default:
			p.unexpected(c)
		}
	}
}

func (p *xmlParser) referencia(el *etree.Element, r *InformacionReferencia) {
	for _, c := range p.children(el) {
		switch c.Tag {
		case "TipoDocIR":
			p.str(c, &r.TipoDocIR)
		case "TipoDocRefOTRO":
			p.str(c, &r.TipoDocRefOTRO)
		case "Numero":
			p.str(c, &r.Numero)
		case "FechaEmisionIR":
			p.dateTime(c, &r.FechaEmisionIR)
		case "Codigo":
			p.str(c, &r.Codigo)
		case "CodigoReferenciaOTRO":
			p.str(c, &r.CodigoReferenciaOTRO)
		case "Razon":
			p.str(c, &r.Razon)
		default:
			p.unexpected(c)
		}
	}
}

func (p *xmlParser) otros(el *etree.Element, o *Otros) {
	for _, c := range p.children(el) {
		var dst *[]OtroTexto
		switch c.Tag {
		case "OtroTexto":
			dst = &o.OtroTexto
		case "OtroContenido":
			dst = &o.OtroContenido
		default:
			p.unexpected(c)
			return
		}
		t := OtroTexto{Valor: p.leaf(c)}
		for _, a := range c.Attr {
			if a.Space == "" && a.Key == "codigo" {
				t.Codigo = a.Value
			} else if a.Space != "xmlns" && !(a.Space == "" && a.Key == "xmlns") {
				p.failf(c, "unexpected attribute %s", a.FullKey())
				return
			}
		}
		*dst = append(*dst, t)
	}
}
