package recepcion

import "facturad/hacienda"

// APIParty is an identification as the reception API's JSON takes it, or
// nil when it does not fit there (hacienda.Identificacion.FitsReceptionAPI:
// a foreign id longer than 12 characters stays in the XML only). It is the
// one rule the service builds a submission's parties with.
func APIParty(tipo, numero string) *Party {
	if !(hacienda.Identificacion{Tipo: tipo, Numero: numero}).FitsReceptionAPI() {
		return nil
	}
	return &Party{TipoIdentificacion: tipo, NumeroIdentificacion: numero}
}
