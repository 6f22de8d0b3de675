package hacienda

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"facturad/hacienda/msg"
)

// Issuer is the data of the company (and branch) issuing through the
// service, which the caller takes from its tenant records. For most types it
// becomes the XML Emisor; for an FEC (08) it becomes the Receptor.
type Issuer struct {
	// Party holds Nombre, Identificacion, NombreComercial, Ubicacion,
	// Telefono and CorreoElectronico (1..4 addresses) of the company/branch.
	Party
	// CodigoActividad is the company's economic activity (6 characters),
	// used when the request gives none.
	CodigoActividad string
	// ProveedorSistemas is the identification of the software provider
	// written in every document (the operator's id, or the company's own).
	ProveedorSistemas string
}

// ValidateSend checks a whole send request against the structural rules of
// its document type and the calculation rules, and returns a
// *ValidationError listing every problem found, or nil.
func ValidateSend(req *SendDocumentRequest, issuer Issuer) error {
	_, err := NewDocument(req, issuer)
	return err
}

// NewDocument validates a send request, converts it with the issuer's data
// into a Document and calculates it. For an FEC (08) the request's receptor
// (the seller) becomes the XML Emisor and the issuer the Receptor.
//
// The Document's Clave is the request's (possibly empty: the pipeline
// numbers it), NumeroConsecutivo is empty, and FechaEmision is the
// request's fecha_emision or the zero time ("now", stamped by the
// pipeline). Every problem is reported at once as a *ValidationError.
func NewDocument(req *SendDocumentRequest, issuer Issuer) (*Document, error) {
	var e errs
	if req == nil {
		e.add(bodyPath, msg.BodyEmpty.With())
		return nil, e.err()
	}
	doc := buildDocument(req, &issuer, &e)
	if !e.ok() {
		return nil, e.err()
	}
	return doc, nil
}

// buildDocument converts, validates and calculates a send request, adding
// every problem found to e. A nil issuer stands for a company not known
// yet: its data is not checked, nor are the fields it could supply
// (the economic activity).
func buildDocument(req *SendDocumentRequest, issuer *Issuer, e *errs) *Document {
	doc := convertRequest(req, issuer, e)
	if doc != nil {
		validateBody(doc, e)
		// The calculation rules are checked even when structural errors
		// were found, so that the caller gets every error at once.
		calculate(doc, e)
	}
	return doc
}

// TerminalOrDefault returns the request's terminal padded to 5 digits
// (default 00001); validation has checked it.
func (r *SendDocumentRequest) TerminalOrDefault() string {
	t := r.Terminal.String()
	if t == "" {
		return "00001"
	}
	if isDigits(t, 1, 5) {
		return strings.Repeat("0", 5-len(t)) + t
	}
	return t
}

// SituacionOrDefault returns the request's situación (default "1").
func (r *SendDocumentRequest) SituacionOrDefault() string {
	if s := r.Situacion.String(); s != "" {
		return s
	}
	return "1"
}

// Field rules of the schema used below.
var (
	// The annex's rule for CorreoElectronico (Emisor and Receptor), as a
	// Go regular expression, without the surrounding blanks it tolerates
	// (the service stores and writes addresses trimmed). Its classes are
	// negated, so it takes letters outside ASCII (josé@ñandú.cr), as the
	// schema's documented \w does.
	emailRE = regexp.MustCompile(`^(([^<>()\[\]\.,;:\s@"]+(\.[^<>()\[\]\.,;:\s@"]+)*)|(".+"))@(([^<>()\[\]\.,;:\s@"]+\.)+[^<>()\[\]\.,;:\s@"]{0,})$`)
	alnumRE = regexp.MustCompile(`^[A-Za-z0-9]{1,20}$`)
)

// MaxEmailLength is the most characters of one CorreoElectronico.
const MaxEmailLength = 160

// ValidEmail reports whether s is one e-mail address as the tax authority
// takes it in CorreoElectronico: at most MaxEmailLength characters, of the
// annex's form (emailRE), and no blank anywhere (addresses travel
// separated by ';' without spaces, and a quoted part with one is no
// address a mail server is given). The one rule for every
// address the service takes: the documents' emisor and receptor, the
// company's and branches' CorreoElectronico and its correoNotificaciones.
func ValidEmail(s string) bool {
	return utf8.RuneCountInString(s) <= MaxEmailLength && !strings.ContainsFunc(s, unicode.IsSpace) && emailRE.MatchString(s)
}

// strLen checks a string's length in characters; required means non-empty.
func strLen(s string, min, max int, required bool, path string, e *errs) bool {
	n := utf8.RuneCountInString(s)
	if n == 0 {
		if required {
			e.add(path, msg.Required.With())
			return false
		}
		return true
	}
	if !utf8.ValidString(s) {
		e.add(path, msg.InvalidUTF8.With())
		return false
	}
	if n < min || n > max {
		if min == max {
			e.add(path, msg.LengthExact.With(min))
		} else {
			e.add(path, msg.LengthBetween.With(min, max))
		}
		return false
	}
	return true
}

// checkIdentificacion checks an identification's type and its number
// against the type (Identificacion.NumberProblem).
func checkIdentificacion(tipo, numero, tipoPath, numeroPath string, e *errs) bool {
	if tipo == "" {
		e.add(tipoPath, msg.Required.With())
		return false
	}
	if !IsIDType(tipo) {
		e.add(tipoPath, msg.IDType.With())
		return false
	}
	if numero == "" {
		e.add(numeroPath, msg.Required.With())
		return false
	}
	if p := (Identificacion{Tipo: tipo, Numero: numero}).NumberProblem(); !p.IsZero() {
		e.add(numeroPath, p)
		return false
	}
	return true
}

// splitEmails splits a ";"-separated list and checks every address.
func splitEmails(s string, max int, path string, e *errs) []string {
	if s == "" {
		return nil
	}
	if strings.ContainsAny(s, " \t\r\n") {
		e.add(path, msg.EmailSpaces.With())
		return nil
	}
	parts := strings.Split(s, ";")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p == "" {
			e.add(path, msg.EmailEmpty.With())
			return nil
		}
		if !ValidEmail(p) {
			e.add(path, msg.InvalidEmail.With(truncateForError(p)))
			return nil
		}
		out = append(out, p)
	}
	if len(out) > max {
		e.add(path, msg.EmailsMax.With(max))
		return nil
	}
	return out
}

// checkUbicacion checks a location (nota 14) under a path prefix.
func checkUbicacion(u *Ubicacion, base string, pascal bool, e *errs) {
	name := func(camel string) string {
		if pascal {
			return base + "." + strings.ToUpper(camel[:1]) + camel[1:]
		}
		return base + "." + camel
	}
	ok := true
	if !provincias.has(u.Provincia) {
		e.add(name("provincia"), msg.Provincia.With())
		ok = false
	}
	if !isDigits(u.Canton, 2, 2) {
		e.add(name("canton"), msg.Canton.With())
		ok = false
	}
	if !isDigits(u.Distrito, 2, 2) {
		e.add(name("distrito"), msg.Distrito.With())
		ok = false
	}
	if ok && !distritos.has(u.Provincia+u.Canton+u.Distrito) {
		e.add(name("distrito"), msg.LocationUnknown.With(u.Provincia, u.Canton, u.Distrito))
	}
	strLen(u.Barrio, 5, 50, false, name("barrio"), e)
	strLen(u.OtrasSenas, 5, 250, true, name("otrasSenas"), e)
}

// checkTelefono checks a phone under a path prefix.
func checkTelefono(t *Telefono, base string, pascal bool, e *errs) {
	cp, nt := base+".codigoPais", base+".numTelefono"
	if pascal {
		cp, nt = base+".CodigoPais", base+".NumTelefono"
	}
	if !isDigits(t.CodigoPais, 1, 3) {
		e.add(cp, msg.PhoneCountry.With())
	}
	if !isDigits(t.NumTelefono, 8, 20) || t.NumTelefono[0] == '0' {
		e.add(nt, msg.PhoneNumber.With())
	}
}

// convertRequest checks the request's metadata and receptor and builds the
// Document (nil when the document type is unusable). A nil issuer is a
// company not known yet (see buildDocument).
func convertRequest(req *SendDocumentRequest, issuer *Issuer, e *errs) *Document {
	known := issuer != nil
	if !known {
		issuer = &Issuer{}
	}
	id := strings.TrimSpace(req.IDExterno)
	strLen(id, 1, 100, true, "id_externo", e)

	t := DocumentType(req.TipoDocumento.Code())
	if t == "" {
		e.add("tipo_documento", msg.Required.With())
		return nil
	}
	if !t.Valid() {
		e.add("tipo_documento", msg.OneOf.With(issuedTypesList(true)))
		return nil
	}
	// The body's slices are shared with the request: the calculation
	// fills their computed fields in place.
	doc := &Document{Type: t, DetalleServicio: req.DetalleServicio, OtrosCargos: req.OtrosCargos,
		ResumenFactura: req.ResumenFactura, InformacionReferencia: req.InformacionReferencia, Otros: req.Otros}

	convertHeader(req, t, doc, e)
	convertActivities(req, t, issuer, known, doc, e)
	convertSaleCondition(req, t, doc, e)
	convertParties(req, t, issuer, known, doc, e)
	return doc
}

// convertHeader reads the clave a caller gave (its format, and its
// agreement with the type and situación; the issuer, branch and date are
// checked when the document is numbered), terminal, situación,
// registro fiscal and issue date.
func convertHeader(req *SendDocumentRequest, t DocumentType, doc *Document, e *errs) {
	if c := strings.TrimSpace(req.Clave); c != "" {
		if !isDigits(c, 50, 50) {
			e.add("clave", msg.ClaveDigits.With())
		} else {
			if DocumentType(c[29:31]) != t {
				e.add("clave", msg.ClaveTypeMismatch.With(c[29:31], string(t)))
			}
			if c[41:42] != req.SituacionOrDefault() {
				e.add("clave", msg.ClaveSituacionMismatch.With(c[41:42], req.SituacionOrDefault()))
			}
		}
		doc.Clave = c
	}
	if tm := req.Terminal.String(); tm != "" && !isDigits(tm, 1, 5) {
		e.add("terminal", msg.Terminal.With())
	}
	if s := req.Situacion.String(); s != "" && !situaciones.has(s) {
		e.add("situacion", msg.Situacion.With())
	}
	strLen(req.RegistroFiscal8707, 1, 12, false, "registro_fiscal8707", e)

	if f, err := ParseDateTime(req.FechaEmision); err != nil {
		e.add("fecha_emision", msg.DateTime.With())
	} else {
		doc.FechaEmision = f
	}
}

// convertActivities sets the economic activities: the issuer's (the
// company's, in an FEC its activity as receptor) defaulting to the
// company's, none in a REP, no receptor's in a TE or FEE.
func convertActivities(req *SendDocumentRequest, t DocumentType, issuer *Issuer, known bool, doc *Document, e *errs) {
	actEmisor := req.CodigoActividadEmisor.String()
	actReceptor := req.CodigoActividadReceptor.String()
	if actEmisor != "" && utf8.RuneCountInString(actEmisor) != 6 {
		e.add("codigo_actividad_emisor", msg.ActivityLength.With())
	}
	if actReceptor != "" && utf8.RuneCountInString(actReceptor) != 6 {
		e.add("codigo_actividad_receptor", msg.ActivityLength.With())
	}
	switch t {
	case TypeFEC:
		// The company is the XML Receptor; its activity is mandatory.
		if actReceptor == "" {
			actReceptor = issuer.CodigoActividad
		}
		if actReceptor == "" && known {
			e.add("codigo_actividad_receptor", msg.ActivityRequiredFEC.With())
		}
	case TypeREP:
		actEmisor, actReceptor = "", ""
	case TypeTE, TypeFEE:
		actReceptor = ""
		fallthrough
	default:
		if actEmisor == "" {
			actEmisor = issuer.CodigoActividad
		}
		if actEmisor == "" && known && (t == TypeFE || t == TypeTE || t == TypeFEE) {
			e.add("codigo_actividad_emisor", msg.Required.With())
		}
	}
	doc.CodigoActividadEmisor, doc.CodigoActividadReceptor = actEmisor, actReceptor
}

// convertSaleCondition checks the sale condition against the type, its
// "other" text, and the credit term.
func convertSaleCondition(req *SendDocumentRequest, t DocumentType, doc *Document, e *errs) {
	cv := req.CondicionVenta.Code()
	doc.CondicionVenta = cv
	switch {
	case cv == "":
		e.add("condicion_venta", msg.Required.With())
	case !condicionesVenta[t].has(cv):
		if t == TypeREP {
			e.add("condicion_venta", msg.CondicionREP.With())
		} else {
			e.add("condicion_venta", msg.CondicionType.With())
		}
	}
	if t != TypeREP {
		doc.CondicionVentaOtros = strings.TrimSpace(req.CondicionVentaOtros)
		if cv == CondicionOtros {
			strLen(doc.CondicionVentaOtros, 5, 100, true, "condicion_venta_otros", e)
		} else {
			strLen(doc.CondicionVentaOtros, 5, 100, false, "condicion_venta_otros", e)
		}
		if p := req.PlazoCredito.String(); p != "" {
			if !isDigits(p, 1, 5) || strings.Trim(p, "0") == "" {
				e.add("plazo_credito", msg.PlazoCredito.With())
			} else {
				doc.PlazoCredito, _ = strconv.Atoi(p)
			}
		} else if cv == CondicionCredito || cv == CondicionCreditoIVA90 {
			e.add("plazo_credito", msg.PlazoRequired.With(cv))
		}
	}
}

// convertParties places the company and the counterparty: the company is
// the Emisor, except in an FEC, where the seller is the Emisor and the
// company the Receptor.
func convertParties(req *SendDocumentRequest, t DocumentType, issuer *Issuer, known bool, doc *Document, e *errs) {
	if known {
		checkIssuer(issuer, t, e)
	}
	doc.ProveedorSistemas = issuer.ProveedorSistemas
	company := issuer.Party
	company.Registrofiscal8707 = strings.TrimSpace(req.RegistroFiscal8707)
	counterparty := convertReceptor(req.Receptor, t, e)
	if t.info().IssuedByBuyer {
		if counterparty == nil {
			e.add("ReceptorRequest", msg.SellerRequired.With())
		} else {
			counterparty.Registrofiscal8707 = company.Registrofiscal8707
			company.Registrofiscal8707 = ""
			doc.Emisor = *counterparty
			// The seller is the submission's JSON emisor, which the
			// reception API requires and caps at 12 characters (decision 49).
			if id := counterparty.Identificacion; !id.IsZero() && !id.FitsReceptionAPI() {
				e.add("ReceptorRequest.Identificacion.Numero", msg.SellerIDLength.With())
			}
		}
		c := company
		c.OtrasSenasExtranjero = ""
		if len(c.CorreoElectronico) > 1 {
			c.CorreoElectronico = c.CorreoElectronico[:1]
		}
		doc.Receptor = &c
	} else {
		doc.Emisor = company
		doc.Receptor = counterparty
		if counterparty == nil && t.info().ReceptorRequired {
			e.add("ReceptorRequest", msg.ReceptorRequired.With())
		}
	}
}

// checkIssuer checks the company's own data, which the schema constrains
// as much as the client's; problems are reported under "emisor.<Field>"
// (the company's records must be corrected, not the request). Canton and
// district codes are padded to two digits.
func checkIssuer(is *Issuer, t DocumentType, e *errs) {
	const b = "emisor."
	strLen(strings.TrimSpace(is.Nombre), 5, 100, true, b+"Nombre", e)
	if is.Identificacion.IsZero() {
		e.add(b+"Identificacion", msg.CompanyNoID.With())
	} else {
		checkIdentificacion(is.Identificacion.Tipo, is.Identificacion.Numero, b+"Identificacion.Tipo", b+"Identificacion.Numero", e)
	}
	strLen(is.NombreComercial, 3, 80, false, b+"NombreComercial", e)
	if is.Ubicacion != nil {
		u := *is.Ubicacion
		u.Canton, u.Distrito = pad2(u.Canton), pad2(u.Distrito)
		is.Ubicacion = &u
		if t != TypeREP {
			checkUbicacion(&u, b+"Ubicacion", true, e)
		}
	} else if t == TypeFE || t == TypeTE || t == TypeFEE {
		e.add(b+"Ubicacion", msg.CompanyAddressRequired.With())
	}
	if is.Telefono != nil && t != TypeREP {
		checkTelefono(is.Telefono, b+"Telefono", true, e)
	}
	if len(is.CorreoElectronico) == 0 && t != TypeFEC && !t.IsNote() {
		e.add(b+"CorreoElectronico", msg.CompanyEmailRequired.With())
	}
	if len(is.CorreoElectronico) > 4 {
		e.add(b+"CorreoElectronico", msg.CompanyEmailsMax.With())
	}
	for _, m := range is.CorreoElectronico {
		if !ValidEmail(m) {
			e.add(b+"CorreoElectronico", msg.InvalidEmail.With(truncateForError(m)))
		}
	}
	if is.ProveedorSistemas == "" {
		// In-house software: the annex has the issuer's own id.
		is.ProveedorSistemas = is.Identificacion.Numero
	}
	if len(is.ProveedorSistemas) > 20 {
		e.add(b+"ProveedorSistemas", msg.ProveedorLength.With())
	}
}

// convertReceptor checks the request's receptor and converts it (nil when
// absent).
func convertReceptor(r *ReceptorRequest, t DocumentType, e *errs) *Party {
	if r == nil {
		return nil
	}
	const b = "ReceptorRequest."
	p := &Party{
		Nombre:               strings.TrimSpace(r.Nombre),
		NombreComercial:      strings.TrimSpace(r.NombreComercial),
		OtrasSenasExtranjero: strings.TrimSpace(r.OtrasSenasExtranjero),
	}
	if t == TypeFEC {
		strLen(p.Nombre, 5, 100, true, b+"Nombre", e)
	} else {
		strLen(p.Nombre, 3, 100, true, b+"Nombre", e)
	}
	strLen(p.NombreComercial, 3, 80, false, b+"NombreComercial", e)

	// Identification.
	var tipo, numero string
	if r.Identificacion != nil {
		tipo, numero = r.Identificacion.Tipo.Code(), r.Identificacion.Numero.String()
	}
	if tipo == "" && numero == "" && strings.TrimSpace(r.IdentificacionExtranjero) != "" {
		tipo, numero = IDExtranjeroNoDom, strings.TrimSpace(r.IdentificacionExtranjero)
	}
	idRequired := t.info().ReceptorRequired
	if tipo == "" && numero == "" {
		if idRequired {
			e.add(b+"Identificacion", msg.RequiredInType.With())
		}
	} else if checkIdentificacion(tipo, numero, b+"Identificacion.Tipo", b+"Identificacion.Numero", e) {
		p.Identificacion = Identificacion{Tipo: tipo, Numero: numero}
		if tipo == IDExtranjeroNoDom && t == TypeREP {
			e.add(b+"Identificacion.Tipo", msg.ForeignReceptorREP.With())
		}
	}

	// Location.
	if r.Ubicacion != nil && t != TypeFEE {
		if tipo == IDExtranjeroNoDom {
			e.add(b+"Ubicacion", msg.UbicacionForeign.With())
		} else {
			checkUbicacion(r.Ubicacion, b+"Ubicacion", true, e)
			u := *r.Ubicacion
			p.Ubicacion = &u
		}
	}
	if t == TypeFEC && r.Ubicacion == nil && IsNationalID(tipo) {
		e.add(b+"Ubicacion", msg.UbicacionSeller.With())
	}
	if p.OtrasSenasExtranjero != "" {
		switch {
		case t == TypeFEE || t == TypeREP:
			p.OtrasSenasExtranjero = "" // the schema has no place for it
		case tipo != IDExtranjeroNoDom:
			e.add(b+"OtrasSenasExtranjero", msg.OtrasSenasExtranjero.With())
		default:
			strLen(p.OtrasSenasExtranjero, 5, 300, true, b+"OtrasSenasExtranjero", e)
		}
	}
	if t == TypeREP {
		p.Ubicacion = nil
	}

	// Phone.
	if r.Telefono != nil && t != TypeREP {
		checkTelefono(r.Telefono, b+"Telefono", true, e)
		tel := *r.Telefono
		p.Telefono = &tel
	}

	// E-mail.
	p.CorreoElectronico = splitEmails(strings.TrimSpace(r.CorreoElectronico), maxReceptorEmails, b+"CorreoElectronico", e)
	return p
}

// validateBody checks the structural rules of the document body that the
// calculation does not check.
func validateBody(doc *Document, e *errs) {
	t := doc.Type
	validateLinesPresent(doc, e)
	hasExo11 := false
	for i := range doc.DetalleServicio {
		if validateLine(&doc.DetalleServicio[i], i, t, e) {
			hasExo11 = true
		}
	}
	if hasExo11 && t == TypeFE && len(doc.InformacionReferencia) == 0 {
		e.add("informacionReferencia", msg.ReferenceExo11.With())
	}

	validateOtrosCargos(doc.OtrosCargos, e)
	validatePayments(doc, e)
	validateReferences(doc, e)
	validateOtros(doc, e)
}

// validateLinesPresent checks that the document has detail lines:
// mandatory in FEC, FEE, REP; the other types may do without only when
// they carry other charges of types 04, 08, 09, 10 alone.
func validateLinesPresent(doc *Document, e *errs) {
	t := doc.Type
	if len(doc.DetalleServicio) == 0 {
		switch t {
		case TypeFEC, TypeFEE, TypeREP:
			e.add("detalleServicio", msg.LinesRequired.With())
		default:
			onlyThirdParty := len(doc.OtrosCargos) > 0
			for i := range doc.OtrosCargos {
				if !otrosCargosSinLineas.has(doc.OtrosCargos[i].TipoDocumentoOC) {
					onlyThirdParty = false
				}
			}
			if !onlyThirdParty {
				e.add("detalleServicio", msg.LinesOrCharges.With())
			}
		}
	}
}

// validateLine checks one detail line's own fields (the calculation checks
// its amounts). It reports whether the line carries an exoneration of type
// 11, which asks for a reference in an FE.
func validateLine(l *LineaDetalle, i int, t DocumentType, e *errs) (exo11 bool) {
	p := linePath{i: i}
	if l.NumeroLinea == 0 {
		l.NumeroLinea = i + 1
	} else if l.NumeroLinea != i+1 {
		e.add(p.field("numeroLinea"), msg.NumeroLinea.With(i+1))
	}
	strLen(strings.TrimSpace(l.Detalle), 3, 200, true, p.field("detalle"), e)
	if t == TypeREP {
		return false
	}
	validateLineCodes(l, p, t, e)
	return validateLineDiscountsAndTaxes(l, &p, t, e)
}

// validateLineCodes checks a line's unit, transaction type, commercial
// codes, serial numbers, pharmaceutical data and tariff heading.
func validateLineCodes(l *LineaDetalle, p linePath, t DocumentType, e *errs) {
	if l.UnidadMedida == "" {
		e.add(p.field("unidadMedida"), msg.Required.With())
	} else if !unidadesMedida.has(l.UnidadMedida) {
		e.add(p.field("unidadMedida"), msg.UnidadMedida.With(truncateForError(l.UnidadMedida)))
	}
	if l.TipoTransaccion != "" {
		if t == TypeTE {
			e.add(p.field("tipoTransaccion"), msg.TipoTransaccionTE.With())
		} else if !tiposTransaccion.has(l.TipoTransaccion) {
			e.add(p.field("tipoTransaccion"), msg.TipoTransaccion.With())
		}
	}
	strLen(l.UnidadMedidaComercial, 1, 20, false, p.field("unidadMedidaComercial"), e)
	if len(l.CodigoComercial) > 5 {
		e.add(p.field("codigoComercial"), msg.CodigosComerciales.With())
	}
	for j := range l.CodigoComercial {
		c := &l.CodigoComercial[j]
		if !tiposCodigoComercial.has(c.Tipo) {
			e.add(p.sub("codigoComercial", j, "tipo"), msg.CodigoComercial.With())
		}
		strLen(c.Codigo, 1, 20, true, p.sub("codigoComercial", j, "codigo"), e)
	}
	if len(l.NumeroVINoSerie) > 1000 {
		e.add(p.field("numeroVINoSerie"), msg.NumerosVIN.With())
	}
	for j, v := range l.NumeroVINoSerie {
		strLen(v, 1, 17, true, idx(p.field("numeroVINoSerie"), j), e)
	}
	strLen(l.RegistroMedicamento, 1, 100, false, p.field("registroMedicamento"), e)
	if l.FormaFarmaceutica != "" && !formasFarmaceuticas.has(l.FormaFarmaceutica) {
		e.add(p.field("formaFarmaceutica"), msg.FormaFarmaceutica.With())
	}
	if l.PartidaArancelaria != "" {
		if t != TypeFEE && !t.IsNote() {
			e.add(p.field("partidaArancelaria"), msg.ExportOnly.With())
		} else {
			strLen(l.PartidaArancelaria, 12, 12, true, p.field("partidaArancelaria"), e)
		}
	} else if t == TypeFEE && l.CodigoCABYS != "" && l.CodigoCABYS[0] < '5' {
		e.add(p.field("partidaArancelaria"), msg.PartidaRequired.With())
	}
}

// validateLineDiscountsAndTaxes checks the texts of a line's discounts and
// taxes and where their optional parts may appear; it reports an
// exoneration of type 11.
func validateLineDiscountsAndTaxes(l *LineaDetalle, p *linePath, t DocumentType, e *errs) (exo11 bool) {
	for j := range l.Descuento {
		d := &l.Descuento[j]
		if d.CodigoDescuento == DescuentoOtros {
			strLen(d.CodigoDescuentoOTRO, 5, 100, true, p.sub("descuento", j, "codigoDescuentoOTRO"), e)
			strLen(d.NaturalezaDescuento, 3, 80, true, p.sub("descuento", j, "naturalezaDescuento"), e)
		} else {
			strLen(d.CodigoDescuentoOTRO, 5, 100, false, p.sub("descuento", j, "codigoDescuentoOTRO"), e)
			strLen(d.NaturalezaDescuento, 3, 80, false, p.sub("descuento", j, "naturalezaDescuento"), e)
		}
	}
	for j := range l.Impuesto {
		tx := &l.Impuesto[j]
		if tx.Codigo == ImpuestoOtros {
			strLen(tx.CodigoImpuestoOTRO, 5, 100, true, p.sub("impuesto", j, "codigoImpuestoOTRO"), e)
		}
		if tx.MontoExportacion.IsSet() && t != TypeFEE && !t.IsNote() {
			e.add(p.sub("impuesto", j, "montoExportacion"), msg.ExportOnly.With())
		}
		if tx.DatosImpuestoEspecifico != nil && (t == TypeFEC || t == TypeFEE) {
			e.add(p.sub("impuesto", j, "datosImpuestoEspecifico"), msg.NotAllowedInType.With())
		}
		if x := tx.Exoneracion; x != nil {
			validateExoneracion(x, t, p, j, e)
			if x.TipoDocumentoEX1 == ExoneracionAutorizacionConcreta {
				exo11 = true
			}
		}
	}
	return exo11
}

// validateOtrosCargos checks the other charges: their texts, and the third
// party's identification where the charge is collected for one.
func validateOtrosCargos(ocs []OtroCargo, e *errs) {
	for i := range ocs {
		oc := &ocs[i]
		base := idx("otrosCargos", i)
		if oc.TipoDocumentoOC == OtroCargoOtros {
			strLen(oc.TipoDocumentoOTROS, 5, 100, true, base+".tipoDocumentoOTROS", e)
		}
		if oc.TipoDocumentoOC == OtroCargoTercero {
			if oc.IdentificacionTercero.IsZero() {
				e.add(base+".identificacionTercero", msg.TerceroRequired.With())
			}
			strLen(oc.NombreTercero, 5, 100, true, base+".nombreTercero", e)
		} else {
			strLen(oc.NombreTercero, 5, 100, false, base+".nombreTercero", e)
		}
		if !oc.IdentificacionTercero.IsZero() {
			checkIdentificacion(oc.IdentificacionTercero.Tipo, oc.IdentificacionTercero.Numero,
				base+".identificacionTercero.tipo", base+".identificacionTercero.numero", e)
		}
		strLen(strings.TrimSpace(oc.Detalle), 1, 160, true, base+".detalle", e)
	}
}

// validatePayments checks the means of payment: required except for credit
// sales, at least one in a REP, and the text of "other".
func validatePayments(doc *Document, e *errs) {
	t := doc.Type
	mp := doc.ResumenFactura.MedioPago
	switch {
	case len(mp) == 0 && t == TypeREP:
		e.add("resumenFactura.medioPago", msg.MedioPagoREP.With())
	case len(mp) == 0:
		switch doc.CondicionVenta {
		case CondicionCredito, CondicionServiciosEstado, CondicionCreditoIVA90, "":
		default:
			e.add("resumenFactura.medioPago", msg.MedioPagoRequired.With())
		}
	}
	for i := range mp {
		if mp[i].TipoMedioPago == MedioPagoOtros {
			strLen(mp[i].MedioPagoOtros, 3, 100, true, idx("resumenFactura.medioPago", i)+".medioPagoOtros", e)
		}
	}
}

// validateOtros checks the free commercial content, absent in a REP.
func validateOtros(doc *Document, e *errs) {
	t := doc.Type
	if doc.Otros != nil {
		if t == TypeREP {
			e.add("otros", msg.NotAllowedREP.With())
		}
		for i, o := range doc.Otros.OtroTexto {
			strLen(o.Valor, 1, 500, true, idx("otros.otroTexto", i), e)
		}
		for i, o := range doc.Otros.OtroContenido {
			strLen(o.Valor, 1, 500, true, idx("otros.otroContenido", i), e)
		}
	}
}

func validateExoneracion(x *Exoneracion, t DocumentType, p *linePath, j int, e *errs) {
	switch {
	case x.TipoDocumentoEX1 == "":
		e.add(p.exo(j, "tipoDocumentoEX1"), msg.Required.With())
	case !tiposExoneracion.has(x.TipoDocumentoEX1):
		e.add(p.exo(j, "tipoDocumentoEX1"), msg.ExoneracionTipo.With())
	case tiposExoneracionNoteOnly.has(x.TipoDocumentoEX1) && !t.IsNote():
		e.add(p.exo(j, "tipoDocumentoEX1"), msg.CodeNotesOnly.With(x.TipoDocumentoEX1))
	}
	if x.TipoDocumentoEX1 == "99" {
		strLen(x.TipoDocumentoOTRO, 5, 100, true, p.exo(j, "tipoDocumentoOTRO"), e)
	}
	strLen(x.NumeroDocumento, 3, 40, true, p.exo(j, "numeroDocumento"), e)
	if x.badArticulo || x.Articulo > 999999 {
		e.add(p.exo(j, "articulo"), msg.WholeNumber6.With())
	} else if x.Articulo == 0 && tiposExoneracionArticulo.has(x.TipoDocumentoEX1) {
		e.add(p.exo(j, "articulo"), msg.ArticuloRequired.With(x.TipoDocumentoEX1))
	}
	if x.badInciso || x.Inciso > 999999 {
		e.add(p.exo(j, "inciso"), msg.WholeNumber6.With())
	}
	switch {
	case x.NombreInstitucion == "":
		e.add(p.exo(j, "nombreInstitucion"), msg.InstitucionRequired.With())
	case !instituciones.has(x.NombreInstitucion):
		e.add(p.exo(j, "nombreInstitucion"), msg.Institucion.With())
	case x.NombreInstitucion == "99":
		strLen(x.NombreInstitucionOtros, 5, 160, true, p.exo(j, "nombreInstitucionOtros"), e)
	}
	if x.badFecha {
		e.add(p.exo(j, "fechaEmisionEX"), msg.DateTime.With())
	} else if x.FechaEmisionEX.IsZero() {
		e.add(p.exo(j, "fechaEmisionEX"), msg.Required.With())
	}
}

func validateReferences(doc *Document, e *errs) {
	t := doc.Type
	refs := doc.InformacionReferencia
	switch {
	case len(refs) == 0 && (t == TypeNC || t == TypeND || t == TypeFEC || t == TypeREP):
		e.add("informacionReferencia", msg.ReferencesRequired.With())
	case len(refs) > 10:
		e.add("informacionReferencia", msg.ReferencesMax.With())
	}
	has16 := false
	for i := range refs {
		r := &refs[i]
		base := idx("informacionReferencia", i)
		switch {
		case r.TipoDocIR == "":
			e.add(base+".tipoDocIR", msg.Required.With())
		case !tiposDocReferencia.has(r.TipoDocIR):
			e.add(base+".tipoDocIR", msg.TipoDocIR.With())
		case r.TipoDocIR == DocRefDevolucion && !t.IsNote():
			e.add(base+".tipoDocIR", msg.CodeNotesOnly.With(DocRefDevolucion))
		case r.TipoDocIR == DocRefNoDomiciliado && t != TypeFEC:
			e.add(base+".tipoDocIR", msg.TipoDocIR16.With())
		case t == TypeREP && !tiposDocReferenciaREP.has(r.TipoDocIR):
			e.add(base+".tipoDocIR", msg.TipoDocIRREP.With())
		}
		if r.TipoDocIR == DocRefNoDomiciliado {
			has16 = true
		}
		if r.TipoDocIR == DocRefOtros {
			strLen(r.TipoDocRefOTRO, 5, 100, true, base+".tipoDocRefOTRO", e)
		}
		mesVencido := r.TipoDocIR == DocRefMesVencido
		numeroRequired := !mesVencido || t == TypeREP
		if strLen(r.Numero, 1, 50, numeroRequired, base+".numero", e) && r.Numero != "" &&
			tiposDocReferenciaConClave.has(r.TipoDocIR) && !isDigits(r.Numero, 50, 50) {
			e.add(base+".numero", msg.ReferenceClave.With())
		}
		if r.badFecha {
			e.add(base+".fechaEmisionIR", msg.DateTime.With())
		} else if r.FechaEmisionIR.IsZero() {
			e.add(base+".fechaEmisionIR", msg.Required.With())
		}
		switch {
		case r.Codigo == "" && !mesVencido:
			e.add(base+".codigo", msg.Required.With())
		case r.Codigo != "" && !codigosReferencia.has(r.Codigo):
			e.add(base+".codigo", msg.ReferenceCodigo.With())
		case r.Codigo == RefCreditoExoneracion && t != TypeNC:
			e.add(base+".codigo", msg.ReferenceCodigo12.With())
		case r.Codigo == RefOtros:
			strLen(r.CodigoReferenciaOTRO, 5, 100, true, base+".codigoReferenciaOTRO", e)
		}
		strLen(r.Razon, 3, 180, !mesVencido, base+".razon", e)
	}
	if t == TypeFEC && doc.Emisor.Identificacion.Tipo == IDExtranjeroNoDom && !has16 {
		e.add("informacionReferencia", msg.Reference16Required.With())
	}
	if t == TypeFEC && doc.Emisor.Identificacion.Tipo == IDNoContribuyente && doc.CondicionVenta != CondicionUsadosNoContrib {
		e.add("condicion_venta", msg.Condicion13Required.With())
	}
	if t == TypeFE && doc.Receptor != nil && doc.Receptor.Identificacion.Tipo == IDExtranjeroNoDom &&
		(doc.CondicionVenta != CondicionNoNacionalizada || len(refs) == 0) {
		e.add("ReceptorRequest.Identificacion.Tipo", msg.ForeignReceptorFE.With())
	}
}

// checkInvalidAmounts reports every amount of the body that could not be
// read as a decimal. Paths are built only for the bad ones.
func checkInvalidAmounts(doc *Document, e *errs) {
	notNumber := msg.NotANumber.With()
	for i := range doc.DetalleServicio {
		l := &doc.DetalleServicio[i]
		p := linePath{i: i}
		for _, f := range [...]struct {
			a    *Amount
			name string
		}{{&l.Cantidad, "cantidad"}, {&l.PrecioUnitario, "precioUnitario"}, {&l.MontoTotal, "montoTotal"},
			{&l.SubTotal, "subTotal"}, {&l.BaseImponible, "baseImponible"}} {
			if f.a.invalid {
				e.add(p.field(f.name), notNumber)
			}
		}
		for j := range l.Descuento {
			d := &l.Descuento[j]
			if d.PorcentajeDescuento.invalid {
				e.add(p.sub("descuento", j, "porcentajeDescuento"), notNumber)
			}
			if d.MontoDescuento.invalid {
				e.add(p.sub("descuento", j, "montoDescuento"), notNumber)
			}
		}
		for j := range l.Impuesto {
			tx := &l.Impuesto[j]
			if tx.Tarifa.invalid {
				e.add(p.sub("impuesto", j, "tarifa"), notNumber)
			}
			if tx.FactorCalculoIVA.invalid {
				e.add(p.sub("impuesto", j, "factorCalculoIVA"), notNumber)
			}
			if tx.MontoExportacion.invalid {
				e.add(p.sub("impuesto", j, "montoExportacion"), notNumber)
			}
			if di := tx.DatosImpuestoEspecifico; di != nil {
				for _, f := range [...]struct {
					a    *Amount
					name string
				}{{&di.CantidadUnidadMedida, "cantidadUnidadMedida"}, {&di.Porcentaje, "porcentaje"}, {&di.Proporcion, "proporcion"},
					{&di.VolumenUnidadConsumo, "volumenUnidadConsumo"}, {&di.ImpuestoUnidad, "impuestoUnidad"}} {
					if f.a.invalid {
						e.add(p.sub("impuesto", j, "datosImpuestoEspecifico."+f.name), notNumber)
					}
				}
			}
			if x := tx.Exoneracion; x != nil && x.TarifaExonerada.invalid {
				e.add(p.exo(j, "tarifaExonerada"), notNumber)
			}
		}
	}
	for i := range doc.OtrosCargos {
		oc := &doc.OtrosCargos[i]
		if oc.PorcentajeOC.invalid {
			e.add(idx("otrosCargos", i)+".porcentajeOC", notNumber)
		}
		if oc.MontoCargo.invalid {
			e.add(idx("otrosCargos", i)+".montoCargo", notNumber)
		}
	}
	if doc.ResumenFactura.CodigoTipoMoneda.TipoCambio.invalid {
		e.add("resumenFactura.codigoTipoMoneda.tipoCambio", notNumber)
	}
	for i := range doc.ResumenFactura.MedioPago {
		if doc.ResumenFactura.MedioPago[i].TotalMedioPago.invalid {
			e.add(idx("resumenFactura.medioPago", i)+".totalMedioPago", notNumber)
		}
	}
}
