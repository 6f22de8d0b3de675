package sandbox

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"facturad/hacienda"
)

// The reception API's refusals of a submission (400 with X-Error-Cause).
// Each check below names its source in docs/design/hacienda-api.md, "What
// the sandbox refuses".

// checkBody checks the JSON of a submission by itself: the fields' presence
// and shape, the parties' identifications by type, and the base64 of the
// document. It returns the decoded document, or the cause of a 400.
func checkBody(b *submitBody) ([]byte, string) {
	switch {
	case !digits(b.Clave, 50):
		return nil, "La clave debe tener 50 dígitos."
	case b.Fecha == "":
		return nil, "La fecha es requerida."
	case b.Emisor == nil:
		return nil, "La identificación del emisor es requerida."
	case b.ConsecutivoReceptor != "" && !digits(b.ConsecutivoReceptor, 20):
		return nil, "El consecutivoReceptor debe tener 20 dígitos."
	case b.ComprobanteXML == "":
		return nil, "El comprobanteXml es requerido."
	}
	if cause := checkParty(b.Emisor, "emisor"); cause != "" {
		return nil, cause
	}
	if b.Receptor != nil {
		if cause := checkParty(b.Receptor, "receptor"); cause != "" {
			return nil, cause
		}
	}
	if _, err := time.Parse(time.RFC3339, b.Fecha); err != nil {
		return nil, "La fecha no tiene el formato requerido (yyyy-MM-ddTHH:mm:ss-06:00)."
	}
	// Go's decoder skips line breaks; the API takes one unbroken string.
	if strings.ContainsAny(b.ComprobanteXML, "\r\n\t ") {
		return nil, "El comprobanteXml no está codificado en base64: contiene saltos de línea o espacios."
	}
	xml, err := base64.StdEncoding.Strict().DecodeString(b.ComprobanteXML)
	if err != nil {
		return nil, "El comprobanteXml no está codificado en base64."
	}
	return xml, ""
}

// checkParty checks one JSON identification: a known type, at most 12
// characters, digits for the Costa Rican types with their length (left
// zero padding up to 12 is accepted), letters and digits for the foreign
// ones (05, 06).
func checkParty(p *Party, role string) string {
	t, n := p.TipoIdentificacion, p.NumeroIdentificacion
	if !hacienda.IsIDType(t) {
		return fmt.Sprintf("El tipo de identificación del %s (%q) no es válido.", role, t)
	}
	if n == "" || len(n) > 12 {
		return fmt.Sprintf("El número de identificación del %s debe tener entre 1 y 12 caracteres.", role)
	}
	if !hacienda.IsNationalID(t) {
		if !(hacienda.Identificacion{Tipo: t, Numero: n}).FitsReceptionAPI() {
			return fmt.Sprintf("El número de identificación del %s solo admite letras y dígitos.", role)
		}
		return ""
	}
	if strings.Trim(n, "0123456789") != "" {
		return fmt.Sprintf("El número de identificación del %s solo admite dígitos para el tipo %s.", role, t)
	}
	if !(hacienda.Identificacion{Tipo: t, Numero: hacienda.UnpaddedNumber(n)}).NumberProblem().IsZero() {
		return fmt.Sprintf("El número de identificación del %s (%s) no tiene la longitud del tipo %s.", role, n, t)
	}
	return ""
}

// checkAgainstXML compares the submission's JSON with the document it
// carries: the clave, the consecutivoReceptor of a receptor message, and
// the parties, which are the XML's (spec §15.3: in a purchase invoice the
// emisor is the seller and the company that signs it the receptor).
func checkAgainstXML(b *submitBody, in docInfo) string {
	if in.clave != b.Clave {
		return "La clave del comprobante no coincide con la clave indicada en la solicitud."
	}
	isMR := in.typ.IsReceiverMessage()
	if isMR != (b.ConsecutivoReceptor != "") {
		return "El consecutivoReceptor solo se indica para un mensaje receptor, y es requerido para él."
	}
	if isMR && in.consecutivo != b.ConsecutivoReceptor {
		return "El consecutivoReceptor no coincide con el del mensaje receptor."
	}
	if cause := sameParty(b.Emisor, in.emisorTipo, in.emisorNumero, "emisor"); cause != "" {
		return cause
	}
	if t := b.Emisor.TipoIdentificacion; (t == hacienda.IDExtranjeroNoDom || t == hacienda.IDNoContribuyente) && !in.typ.IssuedByBuyer {
		return fmt.Sprintf("El tipo de identificación %s del emisor solo se admite en una factura electrónica de compra.", t)
	}
	switch {
	case b.Receptor != nil:
		return sameParty(b.Receptor, in.receptorTipo, in.receptorNumero, "receptor")
	case isMR:
		return "El receptor es requerido para un mensaje receptor."
	case in.receptorNumero != "" && len(in.receptorNumero) <= 12:
		return "El receptor del comprobante está identificado: indique su identificación en el JSON."
	}
	return ""
}

// sameParty compares a JSON identification with the XML's, ignoring left
// zero padding. The type is compared when the XML carries one (a receptor
// message carries numbers only).
func sameParty(p *Party, xmlTipo, xmlNumero, role string) string {
	if xmlNumero == "" {
		return fmt.Sprintf("El comprobante no tiene %s identificado y el JSON indica %s %s.", role, p.TipoIdentificacion, p.NumeroIdentificacion)
	}
	if !hacienda.SameNumber(p.NumeroIdentificacion, xmlNumero) || (xmlTipo != "" && xmlTipo != p.TipoIdentificacion) {
		return fmt.Sprintf("La identificación del %s del JSON (%s %s) no coincide con la del %s del comprobante (%s %s).",
			role, p.TipoIdentificacion, p.NumeroIdentificacion, role, xmlTipo, xmlNumero)
	}
	return ""
}
