package recepcion

import (
	"strings"
)

// APIParty is an identification as the reception API's JSON takes it, or
// nil when it does not fit there: the API knows the types 01 to 06 and
// caps numbers at 12 digits (the XML allows 20 characters for foreign
// ids), so a longer or non-numeric number is left out of the JSON, as the
// tax authority's schema requires; it stays in the XML. It is the one rule
// the service builds a submission's parties with.
func APIParty(tipo, numero string) *Party {
	switch tipo {
	case "01", "02", "03", "04", "05", "06":
	default:
		return nil
	}
	if numero == "" || len(numero) > 12 || strings.Trim(numero, "0123456789") != "" {
		return nil
	}
	return &Party{TipoIdentificacion: tipo, NumeroIdentificacion: numero}
}
