package delivery

import (
	"encoding/json"
	"fmt"
	"strings"

	"facturad/hacienda/api"
	"facturad/tenant"
)

// A notice is a tenant event's e-mail to its company's notice addresses
// (CorreoNotificaciones, A.14): plain text in Spanish saying what happened
// and what the company must do, with the event's name and id at the end
// for a program that reads its mail. It is built from the event's data as
// its webhooks get it (api.TenantEventData), stored with the e-mail, so
// that every attempt sends the same message.

// noticeMessage is the e-mail of a notice. Data that cannot be read is a
// permanent failure: every attempt would read the same.
func noticeMessage(e tenant.EmailDelivery) (Message, error) {
	var d api.TenantEventData
	if err := json.Unmarshal(e.Payload, &d); err != nil {
		return Message{}, &SendError{Permanent: true, Stage: "notice", Msg: "the notice's data cannot be read"}
	}
	company := fmt.Sprintf("%s (identificación %s, ambiente %s)", d.RazonSocial, d.NumeroIdentificacion, d.Ambiente)
	fecha := strings.Replace(d.ExpiracionCertificado, "T", " ", 1)
	var subject string
	var text []string
	switch e.Evento {
	case tenant.EventCertificateExpiring:
		subject = fmt.Sprintf("El certificado de firma de %s vence el %s", d.RazonSocial, fecha)
		text = []string{
			"El certificado (llave criptográfica) con que se firman los comprobantes de " + company + " vence el " + fecha + " (hora de Costa Rica).",
			"",
			"Después de esa fecha los comprobantes no podrán enviarse a Hacienda: quedarán pendientes hasta que se cargue un certificado nuevo.",
			"Genere uno nuevo en ATV y cárguelo, con su PIN, al actualizar la compañía (campos Certificado y Clave).",
		}
	case tenant.EventCertificateExpired:
		subject = fmt.Sprintf("El certificado de firma de %s venció", d.RazonSocial)
		text = []string{
			"El certificado (llave criptográfica) con que se firman los comprobantes de " + company + " venció el " + fecha + " (hora de Costa Rica).",
			"",
			"Los comprobantes que se envíen quedan pendientes (estado 00) y no llegan a Hacienda.",
			"Cargue un certificado nuevo, con su PIN, al actualizar la compañía, y envíe de nuevo cada comprobante pendiente con el mismo id_externo: conserva su número.",
		}
	case tenant.EventCredentialsRefused:
		subject = fmt.Sprintf("Hacienda rechazó las credenciales de %s", d.RazonSocial)
		text = []string{
			"Hacienda rechazó el usuario y la contraseña de ATV de " + company + ".",
			"",
			"Los comprobantes esperan (estado 05) y se reintentan con pausas cada vez más largas; cada intento rechazado cuenta contra la cuenta en Hacienda.",
			"Corrija la contraseña en ATV si hace falta y actualice la compañía (UsuarioHacienda y ContrasenaHacienda): los comprobantes detenidos se envían en ese momento.",
		}
	case tenant.EventDocumentsStuck:
		subject = fmt.Sprintf("%d comprobantes de %s siguen sin respuesta de Hacienda", d.Cantidad, d.RazonSocial)
		text = []string{
			fmt.Sprintf("%d comprobantes de %s siguen sin una respuesta final de Hacienda una hora después de numerados:", d.Cantidad, company),
			"",
		}
		for _, c := range d.Claves {
			text = append(text, "  "+c)
		}
		if more := d.Cantidad - len(d.Claves); more > 0 {
			text = append(text, fmt.Sprintf("  … y %d más.", more))
		}
		text = append(text, "",
			"Consulte cada uno (PUT /api/documents/{clave}/v4): su mensaje dice por qué espera. Los que esperan a la compañía (certificado o credenciales) siguen en cuanto se corrige la causa y se envían de nuevo con el mismo id_externo.")
	default:
		return Message{}, &SendError{Permanent: true, Stage: "notice", Msg: "not a notice: " + truncate(e.Evento, 60)}
	}
	text = append(text, "", "—", "Evento: "+e.Evento, "Id: "+e.EventID)
	return Message{
		To:        e.Recipients,
		Subject:   subject,
		MessageID: fmt.Sprintf("%s.%d@facturad", e.EventID, e.ID),
		Text:      strings.Join(text, "\r\n"),
	}, nil
}
