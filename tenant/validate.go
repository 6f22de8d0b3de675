package tenant

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"facturad/hacienda"
	"facturad/hacienda/msg"
	"facturad/hacienda/xmltext"
)

// ValidationError lists everything wrong with a request, by field. Field
// paths are the request's own names: company form fields in their form
// spelling (TipoIdentificacion, Certificado...), branch JSON fields in
// camelCase (sucursal, correoElectronico...), and usuario for users. The
// gateway answers it as the 400 form of the contract, each message (an
// entry of the catalogue, package msg) in the caller's language.
type ValidationError struct {
	Message string
	Fields  map[string][]msg.Message
}

// FieldErrors returns the messages by field path, in English.
func (e *ValidationError) FieldErrors() map[string][]string { return msg.Render(e.Fields, msg.English) }

// FieldMessages returns the messages by field path.
func (e *ValidationError) FieldMessages() map[string][]msg.Message { return e.Fields }

// Error lists the fields with their messages in a stable order.
func (e *ValidationError) Error() string {
	names := make([]string, 0, len(e.Fields))
	for f := range e.Fields {
		names = append(names, f)
	}
	sort.Strings(names)
	en := e.FieldErrors()
	var b strings.Builder
	b.WriteString(e.Message)
	for i, f := range names {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(f + ": " + strings.Join(en[f], ", "))
	}
	return b.String()
}

// Add records one problem with a field.
func (e *ValidationError) Add(field string, m msg.Message) {
	if e.Fields == nil {
		e.Fields = map[string][]msg.Message{}
	}
	e.Fields[field] = append(e.Fields[field], m)
}

// Has reports whether a field already has a problem.
func (e *ValidationError) Has(field string) bool { return len(e.Fields[field]) > 0 }

// orNil returns e when it holds problems and nil otherwise, typed as error
// so that a nil *ValidationError never becomes a non-nil error.
func (e *ValidationError) orNil() error {
	if e == nil || len(e.Fields) == 0 {
		return nil
	}
	return e
}

func newValidationError() *ValidationError {
	return &ValidationError{Message: "One or more validation errors occurred.", Fields: map[string][]msg.Message{}}
}

// invalidField returns a ValidationError with one problem.
func invalidField(field string, m msg.Message) *ValidationError {
	e := newValidationError()
	e.Add(field, m)
	return e
}

var (
	reDigits = regexp.MustCompile(`^[0-9]+$`)
	reLetter = regexp.MustCompile(`^[A-Z]{3}$`)
	// User names: 3 to 64 characters, letters, digits and . _ @ -, starting
	// with a letter or digit. No ':' (it separates the pair in HTTP Basic)
	// and no spaces.
	reUsername = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{2,63}$`)
)

// Lengths from the v4.4 schema for the values that end up in the XML's
// Emisor, and our own caps for the rest.
const (
	maxNombre          = 100 // Emisor/Nombre 5..100
	minNombre          = 5
	maxNombreComercial = 80 // NombreComercial 3..80
	minNombreComercial = 3
	maxOtrasSenas      = 250 // Ubicacion/OtrasSenas 5..250
	minOtrasSenas      = 5
	maxBarrio          = 50 // Ubicacion/Barrio 5..50
	minBarrio          = 5
	maxCorreo          = 160 // CorreoElectronico ≤160 each
	maxCorreos         = 4   // Emisor/CorreoElectronico 1..4
	minTelefono        = 8   // NumTelefono 8..20 digits
	maxTelefono        = 20
	maxCodPais         = 3 // Telefono/CodigoPais ≤3 digits
	lenActividad       = 6 // CodigoActividadEmisor, exactly 6
	maxUsuarioHacienda = 100
	maxSecret          = 256
	maxTipoCliente     = 50
	maxLicencia        = 100
	// MaxCertificateSize caps an uploaded .p12; real ones are a few KiB.
	MaxCertificateSize = 64 << 10
)

func runes(s string) int { return utf8.RuneCountInString(s) }

// checkLen reports a string outside [min, max] characters; an empty value
// is not checked (required-ness is checked apart).
func checkLen(e *ValidationError, field, v string, minLen, maxLen int) {
	if v == "" {
		return
	}
	n := runes(v)
	switch {
	case !utf8.ValidString(v):
		e.Add(field, msg.InvalidUTF8.With())
	case n < minLen:
		e.Add(field, msg.MinLength.With(minLen))
	case n > maxLen:
		e.Add(field, msg.MaxLength.With(maxLen))
	}
}

func required(e *ValidationError, field, v string) bool {
	if v == "" {
		e.Add(field, msg.Required.With())
		return false
	}
	return true
}

// checkIdentification checks a company's identification: a Costa Rican
// type (01 física, 02 jurídica, 03 DIMEX, 04 NITE), the only ones a
// company that issues documents has, and a number written as that type's
// (hacienda.Identificacion.NumberProblem, nota 4).
func checkIdentification(e *ValidationError, typeField, numField, tipo, num string) {
	national := hacienda.IsNationalID(tipo)
	switch {
	case tipo == "":
		e.Add(typeField, msg.Required.With())
	case !national:
		e.Add(typeField, msg.CompanyIDType.With())
	}
	switch {
	case num == "":
		e.Add(numField, msg.Required.With())
	case national:
		if p := (hacienda.Identificacion{Tipo: tipo, Numero: num}).NumberProblem(); !p.IsZero() {
			e.Add(numField, p)
		}
	}
}

// checkSucursal checks a 3-digit establishment code (001 is the head
// office; 000 is not a code).
func checkSucursal(e *ValidationError, field, v string) {
	if len(v) != 3 || !reDigits.MatchString(v) || v == "000" {
		e.Add(field, msg.SucursalCode.With())
	}
}

// normLocation checks Provincia (one digit 1-7), Canton and Distrito (two
// digits, a single digit is padded: "1" becomes "01", as the XML wants).
func normLocation(e *ValidationError, fields [3]string, prov, canton, distrito *string) {
	if *prov != "" && (len(*prov) != 1 || *prov < "1" || *prov > "7") {
		e.Add(fields[0], msg.ProvinciaDigit.With())
	}
	for i, p := range []*string{canton, distrito} {
		v := *p
		if v == "" {
			continue
		}
		if len(v) == 1 {
			v = "0" + v
		}
		if len(v) != 2 || !reDigits.MatchString(v) || v == "00" {
			e.Add(fields[i+1], msg.LocationDigits.With())
			continue
		}
		*p = v
	}
	// Every document of the company carries the location: a code the
	// official catalogue does not have would fail every send later, on a
	// field the caller never sent.
	if e.Has(fields[0]) || e.Has(fields[1]) || e.Has(fields[2]) || *prov == "" || *canton == "" || *distrito == "" {
		return
	}
	switch {
	case !hacienda.KnownCanton(*prov, *canton):
		e.Add(fields[1], msg.CantonUnknown.With(*canton, *prov))
	case !hacienda.KnownLocation(*prov, *canton, *distrito):
		e.Add(fields[2], msg.DistritoUnknown.With(*distrito, *canton, *prov))
	}
}

// checkText reports every value, given as field and value pairs, that an
// XML document cannot carry (invalid UTF-8, control characters, U+FFFE,
// U+FFFF): the company's and its branches' text ends up in every document
// they issue.
func checkText(e *ValidationError, pairs ...string) {
	for i := 0; i+1 < len(pairs); i += 2 {
		if problem := xmltext.Check(pairs[i+1]); !problem.IsZero() {
			e.Add(pairs[i], problem)
		}
	}
}

// normPhone removes spaces, dashes and parentheses and checks 8 to 20 digits
// (Telefono/NumTelefono).
func normPhone(e *ValidationError, field string, v *string) {
	if *v == "" {
		return
	}
	clean := strings.NewReplacer(" ", "", "-", "", "(", "", ")", "").Replace(*v)
	if !reDigits.MatchString(clean) || len(clean) < minTelefono || len(clean) > maxTelefono || clean[0] == '0' {
		e.Add(field, msg.TelephoneDigits.With(minTelefono, maxTelefono))
		return
	}
	*v = clean
}

func checkCodPais(e *ValidationError, field, v string) {
	if v != "" && (!reDigits.MatchString(v) || len(v) > maxCodPais) {
		e.Add(field, msg.TelephoneCountry.With(maxCodPais))
	}
}

// checkEmails checks one to four addresses separated by ';' without spaces,
// each at most 160 characters and of the tax authority's form.
func checkEmails(e *ValidationError, field, v string, maxCount int) {
	if v == "" {
		return
	}
	parts := strings.Split(v, ";")
	if len(parts) > maxCount {
		if maxCount == 1 {
			e.Add(field, msg.EmailOne.With())
		} else {
			e.Add(field, msg.EmailList.With(maxCount))
		}
		return
	}
	for _, p := range parts {
		if runes(p) > maxCorreo {
			e.Add(field, msg.EmailLength.With(maxCorreo))
			return
		}
		if !hacienda.ValidEmail(p) {
			e.Add(field, msg.EmailFormat.With())
			return
		}
	}
}

// normCurrency upper-cases and checks an ISO 4217 alphabetic code,
// defaulting an empty one.
func normCurrency(e *ValidationError, field string, v *string, def string) {
	if *v == "" {
		*v = def
		return
	}
	u := strings.ToUpper(*v)
	if !reLetter.MatchString(u) || !hacienda.KnownCurrency(u) {
		e.Add(field, msg.Currency.With())
		return
	}
	*v = u
}

// normFlag upper-cases an S/N flag; empty stays empty (its default depends
// on the call).
func normFlag(e *ValidationError, field string, v *string) {
	u := strings.ToUpper(*v)
	switch u {
	case "", "S", "N":
		*v = u
	default:
		e.Add(field, msg.FlagSN.With())
	}
}

// normRegistryChecks trims and lower-cases a sent validacionesRegistro and
// checks it is one of the four values; nil (not sent) stays nil.
func normRegistryChecks(e *ValidationError, field string, v *string) {
	if v == nil {
		return
	}
	u := strings.ToLower(strings.TrimSpace(*v))
	if !ValidRegistryChecks(u) {
		e.Add(field, msg.RegistryChecks.With())
		return
	}
	*v = u
}

// normAmbiente trims and lower-cases a sent ambiente and checks it names
// an environment; nil and empty stay as they are (not sent).
func normAmbiente(e *ValidationError, v *string) {
	if v == nil {
		return
	}
	u := strings.ToLower(strings.TrimSpace(*v))
	switch u {
	case "", AmbientePruebas, AmbienteProduccion:
		*v = u
	default:
		e.Add(FieldAmbiente, msg.Ambiente.With(AmbientePruebas, AmbienteProduccion))
	}
}

// MaxCuotaMensual is the largest monthly quota a company may have.
const MaxCuotaMensual = 1_000_000_000

// parseCuota reads a sent cuotaMensual: nil for "" (no limit).
func parseCuota(e *ValidationError, v string) *int64 {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > MaxCuotaMensual {
		e.Add(FieldCuotaMensual, msg.CuotaMensual.With(MaxCuotaMensual))
		return nil
	}
	return &n
}

// CheckUsername reports whether a user name is acceptable: 3 to 64 letters,
// digits and . _ @ -, starting with a letter or digit.
func CheckUsername(field, name string) error {
	e := newValidationError()
	checkUsername(e, field, name)
	return e.orNil()
}

// ValidUsername reports whether name can be an API user's usuario: 3 to 64
// letters, digits or . _ @ -, starting with a letter or digit.
func ValidUsername(name string) bool { return reUsername.MatchString(name) }

func checkUsername(e *ValidationError, field, name string) {
	if name == "" {
		e.Add(field, msg.Required.With())
		return
	}
	if !reUsername.MatchString(name) {
		e.Add(field, msg.Username.With())
	}
}

func trim(ps ...*string) {
	for _, p := range ps {
		*p = strings.TrimSpace(*p)
	}
}

// normCompany trims, defaults and checks a company request. create tells a
// create (defaults for Sucursal and Activo) from an update. Certificate and
// secrets that depend on stored state are checked by the caller.
func normCompany(in *CompanyInput, create bool) *ValidationError {
	e := newValidationError()
	trim(&in.TipoIdentificacion, &in.Identificacion, &in.RazonSocial, &in.ActividadComercial,
		&in.UsuarioHacienda, &in.TipoCliente, &in.RazonComercial, &in.Provincia, &in.Canton,
		&in.Distrito, &in.Barrio, &in.OtrasSenas, &in.CodPais, &in.Telefono, &in.Fax,
		&in.CorreoElectronico, &in.Sucursal, &in.MonedaLocal, &in.MonedaExtranjera, &in.Activo)

	checkText(e, "TipoIdentificacion", in.TipoIdentificacion, "Identificacion", in.Identificacion,
		"RazonSocial", in.RazonSocial, "ActividadComercial", in.ActividadComercial,
		"UsuarioHacienda", in.UsuarioHacienda, "TipoCliente", in.TipoCliente, "RazonComercial", in.RazonComercial,
		"Provincia", in.Provincia, "Canton", in.Canton, "Distrito", in.Distrito, "Barrio", in.Barrio,
		"OtrasSenas", in.OtrasSenas, "CodPais", in.CodPais, "Telefono", in.Telefono, "Fax", in.Fax,
		"CorreoElectronico", in.CorreoElectronico, "Sucursal", in.Sucursal, "MonedaLocal", in.MonedaLocal,
		"MonedaExtranjera", in.MonedaExtranjera, "Activo", in.Activo)
	checkIdentification(e, "TipoIdentificacion", "Identificacion", in.TipoIdentificacion, in.Identificacion)
	if required(e, "RazonSocial", in.RazonSocial) {
		checkLen(e, "RazonSocial", in.RazonSocial, minNombre, maxNombre)
	}
	if in.ActividadComercial != "" && runes(in.ActividadComercial) != lenActividad {
		e.Add("ActividadComercial", msg.ActividadComercial.With(lenActividad))
	}
	checkLen(e, "UsuarioHacienda", in.UsuarioHacienda, 1, maxUsuarioHacienda)
	if len(in.ContrasenaHacienda) > maxSecret {
		e.Add("ContrasenaHacienda", msg.MaxBytes.With(maxSecret))
	}
	checkLen(e, "TipoCliente", in.TipoCliente, 1, maxTipoCliente)
	checkLen(e, "RazonComercial", in.RazonComercial, minNombreComercial, maxNombreComercial)

	// The company is the Emisor of its documents, whose Ubicacion and
	// CorreoElectronico are mandatory in a Factura Electrónica.
	required(e, "Provincia", in.Provincia)
	required(e, "Canton", in.Canton)
	required(e, "Distrito", in.Distrito)
	normLocation(e, [3]string{"Provincia", "Canton", "Distrito"}, &in.Provincia, &in.Canton, &in.Distrito)
	checkLen(e, "Barrio", in.Barrio, minBarrio, maxBarrio)
	if required(e, "OtrasSenas", in.OtrasSenas) {
		checkLen(e, "OtrasSenas", in.OtrasSenas, minOtrasSenas, maxOtrasSenas)
	}
	if in.CodPais == "" {
		in.CodPais = "506"
	}
	checkCodPais(e, "CodPais", in.CodPais)
	normPhone(e, "Telefono", &in.Telefono)
	normPhone(e, "Fax", &in.Fax)
	if required(e, "CorreoElectronico", in.CorreoElectronico) {
		checkEmails(e, "CorreoElectronico", in.CorreoElectronico, maxCorreos)
	}

	if in.Sucursal == "" {
		in.Sucursal = "001"
	}
	if create {
		checkSucursal(e, "Sucursal", in.Sucursal)
	}
	normCurrency(e, "MonedaLocal", &in.MonedaLocal, "CRC")
	normCurrency(e, "MonedaExtranjera", &in.MonedaExtranjera, "USD")
	normFlag(e, "Activo", &in.Activo)
	normRegistryChecks(e, FieldValidacionesRegistro, in.ValidacionesRegistro)
	normAmbiente(e, in.Ambiente)
	if in.CorreoNotificaciones != nil {
		*in.CorreoNotificaciones = strings.TrimSpace(*in.CorreoNotificaciones)
		if *in.CorreoNotificaciones != "" {
			checkEmails(e, FieldCorreoNotificaciones, *in.CorreoNotificaciones, maxCorreos)
		}
	}
	normPrint(e, in)
	if create && in.Activo == "" {
		in.Activo = "S"
	}

	if len(in.Certificate) > MaxCertificateSize {
		e.Add("Certificado", msg.CertificateSize.With(MaxCertificateSize>>10))
	}
	if len(in.Certificate) > 0 && len(in.CertificatePIN) == 0 {
		e.Add("Clave", msg.PINRequired.With())
	}
	if len(in.CertificatePIN) > maxSecret {
		e.Add("Clave", msg.MaxBytes.With(maxSecret))
	}
	return e
}

// normBranch trims, defaults and checks a branch request (JSON names).
func normBranch(in *BranchInput, create bool) *ValidationError {
	e := newValidationError()
	trim(&in.Sucursal, &in.RazonComercial, &in.Provincia, &in.Canton, &in.Distrito, &in.Barrio,
		&in.OtrasSenas, &in.CodPais, &in.Telefono, &in.Fax, &in.CorreoElectronico, &in.MonedaLocal,
		&in.MonedaExtranjera, &in.VerMonedaExtranjera, &in.Licencia, &in.Activo)

	checkText(e, "sucursal", in.Sucursal, "razonComercial", in.RazonComercial, "provincia", in.Provincia,
		"canton", in.Canton, "distrito", in.Distrito, "barrio", in.Barrio, "otrasSenas", in.OtrasSenas,
		"codPais", in.CodPais, "telefono", in.Telefono, "fax", in.Fax, "correoElectronico", in.CorreoElectronico,
		"monedaLocal", in.MonedaLocal, "monedaExtranjera", in.MonedaExtranjera,
		"verMonedaExtranjera", in.VerMonedaExtranjera, "licencia", in.Licencia, "activo", in.Activo)
	if required(e, "sucursal", in.Sucursal) {
		checkSucursal(e, "sucursal", in.Sucursal)
	}
	checkLen(e, "razonComercial", in.RazonComercial, minNombreComercial, maxNombreComercial)
	// A branch's address is optional (the company's applies), but a
	// location is all three codes or none.
	if in.Provincia != "" || in.Canton != "" || in.Distrito != "" {
		required(e, "provincia", in.Provincia)
		required(e, "canton", in.Canton)
		required(e, "distrito", in.Distrito)
	}
	normLocation(e, [3]string{"provincia", "canton", "distrito"}, &in.Provincia, &in.Canton, &in.Distrito)
	checkLen(e, "barrio", in.Barrio, minBarrio, maxBarrio)
	checkLen(e, "otrasSenas", in.OtrasSenas, minOtrasSenas, maxOtrasSenas)
	if in.CodPais == "" {
		in.CodPais = "506"
	}
	checkCodPais(e, "codPais", in.CodPais)
	normPhone(e, "telefono", &in.Telefono)
	normPhone(e, "fax", &in.Fax)
	checkEmails(e, "correoElectronico", in.CorreoElectronico, maxCorreos)
	normCurrency(e, "monedaLocal", &in.MonedaLocal, "CRC")
	normCurrency(e, "monedaExtranjera", &in.MonedaExtranjera, "USD")
	normFlag(e, "verMonedaExtranjera", &in.VerMonedaExtranjera)
	if in.VerMonedaExtranjera == "" {
		in.VerMonedaExtranjera = "N"
	}
	checkLen(e, "licencia", in.Licencia, 1, maxLicencia)
	normFlag(e, "activo", &in.Activo)
	if create && in.Activo == "" {
		in.Activo = "S"
	}
	return e
}
