package sandbox

import (
	"context"
	"fmt"

	"facturad/hacienda"
)

// replyKey names a receiver's message about a document by the document's
// clave and the receiver's identification (zero padding ignored): the tax
// authority takes one message per document and receiver.
func replyKey(clave, receptor string) string {
	return clave + "/" + hacienda.UnpaddedNumber(receptor)
}

// answered checks a receiver's message against the document it answers,
// as the tax authority does (the annex's validations of MensajeReceptor):
// the message must read as a v4.4 MensajeReceptor (or, with the schema
// check on, validate against its schema); the document must have been
// received and accepted; the message's parties must be the document's
// (its emisor the supplier, its receptor the document's receptor, the
// taxpayer that signs and sends the message); and its totals must be the
// document's.
func (s *Sandbox) answered(ctx context.Context, d *document) []string {
	var lines []string
	if x, ok := s.checks.Schema.(*XSDCheck); ok {
		lines = append(lines, x.checkRead(ctx, d.XML, d.info)...)
	} else if _, err := hacienda.ParseMensajeReceptor(d.XML); err != nil {
		lines = append(lines, fmt.Sprintf(`-1, %q, 0, 0`, err.Error()))
	}
	ref := s.lookup(d.Clave)
	if ref == nil {
		return append(lines, fmt.Sprintf("El comprobante con clave %s no ha sido recibido por la Administración Tributaria: no se puede aceptar ni rechazar.", d.Clave))
	}
	if estado, _ := s.state(ctx, ref); estado != "aceptado" {
		lines = append(lines, fmt.Sprintf("El comprobante con clave %s no ha sido aceptado por la Administración Tributaria (estado %s).", d.Clave, estado))
	}
	in, doc := d.info, ref.info
	if !hacienda.SameNumber(in.emisorNumero, doc.emisorNumero) {
		lines = append(lines, fmt.Sprintf("El NumeroCedulaEmisor (%s) no coincide con el emisor del comprobante (%s).", in.emisorNumero, doc.emisorNumero))
	}
	if !hacienda.SameNumber(in.receptorNumero, doc.receptorNumero) {
		lines = append(lines, fmt.Sprintf("El NumeroCedulaReceptor (%s) no coincide con el receptor del comprobante (%s).", in.receptorNumero, doc.receptorNumero))
	}
	if d.Receptor != nil && !hacienda.SameNumber(d.Receptor.NumeroIdentificacion, doc.receptorNumero) {
		lines = append(lines, "El receptor que envía el mensaje no es el receptor del comprobante.")
	}
	if !sameAmount(in.totalFactura, doc.totalFactura) {
		lines = append(lines, fmt.Sprintf("El TotalFactura (%s) no coincide con el total del comprobante (%s).", in.totalFactura, doc.totalFactura))
	}
	if (in.totalImpuesto != "" || doc.totalImpuesto != "") && !sameAmount(in.totalImpuesto, doc.totalImpuesto) {
		lines = append(lines, fmt.Sprintf("El MontoTotalImpuesto (%s) no coincide con el impuesto del comprobante (%s).", in.totalImpuesto, doc.totalImpuesto))
	}
	return lines
}

// sameAmount compares two decimals as written in documents; an unreadable
// one never matches.
func sameAmount(a, b string) bool {
	x, errA := hacienda.ParseAmount(a)
	y, errB := hacienda.ParseAmount(b)
	return errA == nil && errB == nil && x.Equal(y)
}
