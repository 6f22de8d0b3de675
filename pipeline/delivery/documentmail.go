package delivery

import (
	"strconv"
	"strings"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
	"facturad/tenant"
)

// A document's e-mail says who issued it (docs/design/delivery.md, "Who
// the e-mail is from"): everything it names is read from the signed XML,
// the document as the buyer receives it and as its PDF prints it, so the
// three never disagree. The issuer is the company that issued the
// document: the XML Emisor, or the Receptor of a purchase invoice (08),
// where the company is the buyer. Its commercial name (NombreComercial:
// the branch's, else the company's razón comercial), or its legal name
// when it has none, is the From header's display name beside the
// platform's address; its addresses (CorreoElectronico: the branch's,
// else the company's) are the Reply-To, so that a buyer's reply reaches
// the company rather than the platform.

// mailDoc is what a document's e-mail says, read from its signed XML.
type mailDoc struct {
	x *hacienda.Document
	// test marks a document without tax value: numbered in the pruebas
	// environment, or accepted by the sandbox.
	test bool
	// pdf says the PDF is attached.
	pdf bool
}

// issuer is the party that issued the document: the XML Emisor, or the
// Receptor of a purchase invoice (the company, as buyer).
func (m mailDoc) issuer() hacienda.Party {
	if info, _ := m.x.Type.Info(); info.IssuedByBuyer && m.x.Receptor != nil {
		return *m.x.Receptor
	}
	return m.x.Emisor
}

// issuerName is the name the buyer knows the issuer by: its commercial
// name, else its legal name, fit for a header (headerText).
func (m mailDoc) issuerName() string {
	p := m.issuer()
	if n := headerText(p.NombreComercial); n != "" {
		return n
	}
	return headerText(p.Nombre)
}

// typeName is the document type's name as the document prints it
// (Factura Electrónica, Tiquete Electrónico, Nota de Crédito
// Electrónica...), with its article.
func (m mailDoc) typeName() (article, name string) {
	name = m.x.Type.Name()
	switch m.x.Type {
	case hacienda.TypeTE, hacienda.TypeREP:
		return "el", name
	}
	return "la", name
}

// total is the document's total with its currency (mailMoney).
func (m mailDoc) total() string {
	r := m.x.ResumenFactura
	return mailMoney(r.CodigoTipoMoneda.CodigoMoneda, r.TotalComprobante)
}

// colonEquivalent is the line that gives the total of a document in
// another currency in colones, with its exchange rate, as its PDF prints
// it under the total (pdf.ColonEquivalent: the same figure and rate):
// "Equivalente en colones (tipo de cambio 512,35): ₡932.015,89". It is ""
// for a document in colones or without a rate.
func (m mailDoc) colonEquivalent() string {
	label, crc, ok := pdf.ColonEquivalent(m.x.ResumenFactura)
	if !ok {
		return ""
	}
	return label + ": " + mailMoney("CRC", crc)
}

// subject is the e-mail's subject: the type, the consecutivo, the issuer
// and the total, "[PRUEBAS] " first for a document without tax value.
func (m mailDoc) subject() string {
	_, name := m.typeName()
	s := name + " " + m.x.NumeroConsecutivo + " de " + m.issuerName() + " por " + m.total()
	if m.test {
		s = "[PRUEBAS] " + s
	}
	return s
}

// text is the e-mail's text, lines ended by CRLF.
func (m mailDoc) text() string {
	p := m.issuer()
	article, name := m.typeName()
	issuer := m.issuerName()
	var l []string
	if m.test {
		l = append(l, "PRUEBAS: este comprobante se emitió en un ambiente de pruebas y no tiene validez tributaria.", "")
	}
	accepted := "que el Ministerio de Hacienda aceptó"
	if m.test {
		accepted = "que se aceptó en el ambiente de pruebas"
	}
	l = append(l,
		issuer+" le envía "+article+" "+name+" "+m.x.NumeroConsecutivo+", "+accepted+".",
		"",
		"Emisor: "+issuerLine(p),
		"Comprobante: "+name,
		"Número consecutivo: "+m.x.NumeroConsecutivo,
		"Clave: "+m.x.Clave,
	)
	if !m.x.FechaEmision.IsZero() {
		l = append(l, "Fecha de emisión: "+m.x.FechaEmision.In(hacienda.CostaRica).Format("02/01/2006 15:04"))
	}
	for _, r := range m.x.InformacionReferencia {
		if r.Numero != "" {
			l = append(l, "Documento de referencia: "+headerText(r.Numero))
		}
	}
	l = append(l, "Total: "+m.total())
	if eq := m.colonEquivalent(); eq != "" {
		l = append(l, eq)
	}
	l = append(l, "")
	if m.pdf {
		l = append(l, "Archivos adjuntos: el comprobante firmado (XML), la respuesta de Hacienda (XML) y su representación impresa (PDF).")
	} else {
		l = append(l, "Archivos adjuntos: el comprobante firmado (XML) y la respuesta de Hacienda (XML).")
	}
	if addrs := issuerAddresses(p); len(addrs) > 0 {
		l = append(l, "", "Consultas sobre este comprobante: responda a este correo o escriba a "+strings.Join(addrs, ", ")+".")
	}
	l = append(l, "", "—", "Enviado en nombre de "+issuer+" por su servicio de facturación electrónica.")
	return strings.Join(l, "\r\n")
}

// issuerLine names the issuer: its commercial name and, when it differs,
// its legal name, then its identification.
func issuerLine(p hacienda.Party) string {
	legal, commercial := headerText(p.Nombre), headerText(p.NombreComercial)
	s := legal
	if commercial != "" && !strings.EqualFold(commercial, legal) {
		s = commercial + " (" + legal + ")"
	}
	if p.Identificacion.Numero != "" {
		s += ", " + identificationName(p.Identificacion.Tipo) + " " + headerText(p.Identificacion.Numero)
	}
	return s
}

// identificationName is the name of an identification type (nota 4).
func identificationName(tipo string) string {
	switch tipo {
	case hacienda.IDFisica:
		return "cédula física"
	case hacienda.IDJuridica:
		return "cédula jurídica"
	case hacienda.IDDIMEX:
		return "DIMEX"
	case hacienda.IDNITE:
		return "NITE"
	}
	return "identificación"
}

// issuerAddresses are the issuer's e-mail addresses as the document
// carries them (the Reply-To).
func issuerAddresses(p hacienda.Party) []string {
	var out []string
	for _, a := range p.CorreoElectronico {
		if a = strings.TrimSpace(a); a != "" && headerText(a) == a {
			out = append(out, a)
		}
	}
	return out
}

// mailMoney writes an amount with its currency as the printed document
// writes figures (decision 176, pdf.Money): a point between thousands and
// a comma before the decimals, at least two decimals and every further
// one the amount carries (up to v4.4's five), so that the e-mail's total
// is the PDF's character for character. Colones take the colón sign
// before the figure (₡12.345,67); any other currency its ISO 4217 code
// and a space (USD 1.706,10), since "$" alone does not say which dollar.
// An absent currency is the colón, as in v4.4; an absent amount is 0.
func mailMoney(currency string, a hacienda.Amount) string {
	figure := pdf.Money(a.Or(hacienda.AmountFromInt(0)))
	switch currency = strings.ToUpper(strings.TrimSpace(currency)); currency {
	case "", "CRC":
		return "₡" + figure
	}
	return headerText(currency) + " " + figure
}

// documentMessage is the e-mail of an accepted document, from its signed
// XML x: from the issuer's name, Reply-To its addresses, a subject and a
// text naming it, the document and its total.
func documentMessage(e tenant.EmailDelivery, d tenant.Document, m mailDoc) Message {
	return Message{
		To:        e.Recipients,
		FromName:  m.issuerName(),
		ReplyTo:   issuerAddresses(m.issuer()),
		Subject:   m.subject(),
		Text:      m.text(),
		MessageID: d.Clave + "." + strconv.FormatInt(e.ID, 10) + "@facturad",
	}
}
