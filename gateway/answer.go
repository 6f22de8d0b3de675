package gateway

import (
	"time"

	"facturad/hacienda/api"
	"facturad/tenant"
)

// The answers of A.2–A.4 and the delivery calls, rendered from the tenant
// service's records into the contract's shapes (package hacienda/api).

func sn(b bool) string {
	if b {
		return "S"
	}
	return "N"
}

func newCompanyAnswer(c tenant.Company, now time.Time) api.Company {
	return api.Company{
		ID:                     c.ID,
		TipoIdentificacion:     c.TipoIdentificacion,
		NumeroIdentificacion:   c.NumeroIdentificacion,
		RazonSocial:            c.RazonSocial,
		TipoCliente:            c.TipoCliente,
		Activo:                 sn(c.Activo),
		FacturacionElectronica: c.FacturacionElectronica,
		CreatedAt:              api.LocalTime(c.CreatedAt),
		UpdatedAt:              api.LocalTime(c.UpdatedAt),
		CertificadoVencido:     c.CertificateExpired(now),
		ExpiracionCertificado:  api.LocalTime(c.CertificateExpiry),
		ValidacionesRegistro:   c.ValidacionesRegistro,
		Ambiente:               c.Ambiente,
		CuotaMensual:           c.CuotaMensual,
	}
}

// newCompanyDetailAnswer is the get form: contrasenaHacienda and clave
// are what the service opened for the caller, empty when it withheld them
// (tenant.Service.Company decides; decisions 162 and 164).
func newCompanyDetailAnswer(d tenant.CompanyDetail, now time.Time) api.CompanyDetail {
	c := d.Company
	return api.CompanyDetail{
		Company:            newCompanyAnswer(c, now),
		UsuarioHacienda:    c.UsuarioHacienda,
		ContrasenaHacienda: string(d.ContrasenaHacienda),
		Clave:              string(d.CertificatePIN),
		ActividadComercial: c.ActividadComercial,
		RazonComercial:     c.RazonComercial,
		Provincia:          c.Provincia,
		Canton:             c.Canton,
		Distrito:           c.Distrito,
		Barrio:             c.Barrio,
		OtrasSenas:         c.OtrasSenas,
		CodPais:            c.CodPais,
		Telefono:           c.Telefono,
		Fax:                c.Fax,
		CorreoElectronico:  c.CorreoElectronico,
		MonedaLocal:        c.MonedaLocal,
		MonedaExtranjera:   c.MonedaExtranjera,

		CorreoNotificaciones: c.CorreoNotificaciones,
		NotasImpresas:        c.NotasImpresas,
		TieneLogo:            c.HasLogo,
	}
}

// newCreateCompanyAnswer is CreateCompanyResponse. Its contrasenaHacienda
// and clave are always empty: a create never echoes the secrets it was
// sent (decisions 162 and 164).
func newCreateCompanyAnswer(cc tenant.CreatedCompany) api.CreatedCompany {
	c := cc.Company
	return api.CreatedCompany{
		CompaniaID:             c.ID,
		SucursalID:             cc.Branch.ID,
		TipoIdentificacion:     c.TipoIdentificacion,
		NumeroIdentificacion:   c.NumeroIdentificacion,
		TipoCliente:            c.TipoCliente,
		UsuarioHacienda:        c.UsuarioHacienda,
		Activo:                 sn(c.Activo),
		RazonSocial:            c.RazonSocial,
		RazonComercial:         c.RazonComercial,
		Provincia:              c.Provincia,
		Canton:                 c.Canton,
		Distrito:               c.Distrito,
		Barrio:                 c.Barrio,
		OtrasSenas:             c.OtrasSenas,
		CodPais:                c.CodPais,
		Telefono:               c.Telefono,
		Fax:                    c.Fax,
		CorreoElectronico:      c.CorreoElectronico,
		Sucursal:               cc.Branch.Sucursal,
		MonedaExtranjera:       c.MonedaExtranjera,
		FacturacionElectronica: c.FacturacionElectronica,
		ValidacionesRegistro:   c.ValidacionesRegistro,
		Ambiente:               c.Ambiente,
		CuotaMensual:           c.CuotaMensual,
		CorreoNotificaciones:   c.CorreoNotificaciones,
		NotasImpresas:          c.NotasImpresas,
		TieneLogo:              c.HasLogo,
		Usuario:                cc.Credentials.Usuario,
		Contrasena:             cc.Credentials.Contrasena,
		APIToken:               cc.Credentials.APIToken,
	}
}

func newBranchAnswer(b tenant.Branch) api.Branch {
	return api.Branch{
		ID:                  b.ID,
		CompaniaID:          b.CompanyID,
		RazonComercial:      b.RazonComercial,
		Provincia:           b.Provincia,
		Canton:              b.Canton,
		Distrito:            b.Distrito,
		Barrio:              b.Barrio,
		OtrasSenas:          b.OtrasSenas,
		CodPais:             b.CodPais,
		Telefono:            b.Telefono,
		Fax:                 b.Fax,
		CorreoElectronico:   b.CorreoElectronico,
		Activo:              sn(b.Activo),
		CreatedAt:           api.LocalTime(b.CreatedAt),
		UpdatedAt:           api.LocalTime(b.UpdatedAt),
		Sucursal:            b.Sucursal,
		MonedaLocal:         b.MonedaLocal,
		MonedaExtranjera:    b.MonedaExtranjera,
		VerMonedaExtranjera: sn(b.VerMonedaExtranjera),
		Licencia:            b.Licencia,
	}
}

func newCredentialsAnswer(c tenant.Credentials) api.Credentials {
	return api.Credentials{Usuario: c.Usuario, Contrasena: c.Contrasena, APIToken: c.APIToken}
}

func newAPIUserAnswer(u tenant.APIUser) api.APIUser {
	return api.APIUser{ID: u.ID, Usuario: u.Username, Activo: sn(u.Activo), CreatedAt: api.LocalTime(u.CreatedAt)}
}

func newWebhookAnswer(w tenant.Webhook) api.Webhook {
	return api.Webhook{ID: w.ID, URL: w.URL, Eventos: w.Eventos, CreatedAt: api.LocalTime(w.CreatedAt)}
}

func newDeliveryAnswer(d tenant.Delivery) api.Delivery {
	return api.Delivery{
		ID: d.ID, EventoID: d.EventID, Evento: d.Evento, Clave: d.Clave, Creado: api.LocalTime(d.Created),
		Estado: string(d.State()), Intentos: d.Attempts, UltimoIntento: api.LocalTime(d.LastAttemptAt),
		UltimoCodigo: d.LastStatus, UltimoError: d.LastError, ProximoIntento: api.LocalTime(d.NextAttemptAt),
		Entregado: api.LocalTime(d.DeliveredAt), Fallido: api.LocalTime(d.FailedAt),
	}
}

func newEmailAnswer(e tenant.EmailDelivery) api.DocumentEmail {
	a := api.DocumentEmail{
		Estado: string(e.State()), Destinatarios: e.Recipients, Rechazados: []api.EmailRejection{}, Intentos: e.Attempts,
		UltimoIntento: api.LocalTime(e.LastAttemptAt), UltimoError: e.LastError,
		ProximoIntento: api.LocalTime(e.NextAttemptAt), Enviado: api.LocalTime(e.SentAt),
		Fallido: api.LocalTime(e.FailedAt), Creado: api.LocalTime(e.Created),
	}
	if a.Destinatarios == nil {
		a.Destinatarios = []string{}
	}
	for _, r := range e.Rejected {
		a.Rechazados = append(a.Rechazados, api.EmailRejection{Correo: r.Address, Codigo: r.Code, Mensaje: r.Message})
	}
	return a
}
