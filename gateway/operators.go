package gateway

import (
	"context"
	"net/url"
	"time"

	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/tenant"
)

// The operators' lists (A.14): what needs attention, so that an alert's
// runbook can name the companies. An admin sees every company, a reseller
// its own; a company's user gets 404, as for a route that is not its.
// Keyset pages like A.10's, through the listings' cursors (listRoute).

// Operators answers the operators' lists (*tenant.Service satisfies it).
type Operators interface {
	ExpiringCertificates(ctx context.Context, p tenant.Principal, before time.Time, after *tenant.ListKey, limit int) ([]tenant.CompanyCertificate, error)
	StuckDocuments(ctx context.Context, p tenant.Principal, after *tenant.ListKey, limit int) ([]tenant.StuckDocument, error)
}

// OperatorRoutes returns GET /api/admin/certificados/v4?vencenAntesDe=
// (the active companies whose certificate expires strictly before Costa
// Rica midnight of that date, by expiry) and GET
// /api/admin/documentos-detenidos/v4 (the documents still unsettled an
// hour after they were numbered, the oldest first), both answering
// {"items", "next"} and taking limit and cursor as A.10's listings do.
// cursorKey is as for DocumentListRoute.
func OperatorRoutes(o Operators, cursorKey []byte) ([]Route, error) {
	certs, err := listRoute("/api/admin/certificados/v4", listSpec{Kind: "certificados", Parse: parseCertificateQuery}, cursorKey,
		func(ctx context.Context, p tenant.Principal, _ int64, q tenant.ListQuery) ([]tenant.CompanyCertificate, error) {
			return o.ExpiringCertificates(ctx, p, q.Hasta, q.After, q.Limit)
		},
		tenant.CompanyCertificate.ListKey, expiringCertificateAnswer)
	if err != nil {
		return nil, err
	}
	stuck, err := listRoute("/api/admin/documentos-detenidos/v4", listSpec{Kind: "documentos-detenidos", Parse: parsePageQuery}, cursorKey,
		func(ctx context.Context, p tenant.Principal, _ int64, q tenant.ListQuery) ([]tenant.StuckDocument, error) {
			return o.StuckDocuments(ctx, p, q.After, q.Limit)
		},
		tenant.StuckDocument.ListKey, stuckDocumentAnswer)
	if err != nil {
		return nil, err
	}
	return []Route{certs, stuck}, nil
}

// parseCertificateQuery reads vencenAntesDe (required, YYYY-MM-DD), as the
// filter's Hasta: Costa Rica midnight of that date, the first instant not
// listed. limit and cursor as A.10.
func parseCertificateQuery(q url.Values) (listQuery, error) {
	var out listQuery
	r := newQueryReader(q)
	switch v := r.one(api.ParamVencenAntesDe); {
	case v == "":
		r.bad(api.ParamVencenAntesDe, msg.VencenRequired.With())
	default:
		d, err := time.Parse(time.DateOnly, v)
		if err != nil || d.Year() < 1 {
			// The years are 0001 to 9999, as for the listings' dates
			// (the layout reads four digits, so only 0000 parses).
			r.bad(api.ParamVencenAntesDe, msg.VencenFormat.With())
			break
		}
		out.Filter.Hasta = tenant.CostaRicaMidnight(d.Date())
	}
	out.Cursor = r.page(&out.Filter)
	return out, r.err()
}

// parsePageQuery reads limit and cursor only.
func parsePageQuery(q url.Values) (listQuery, error) {
	var out listQuery
	r := newQueryReader(q)
	out.Cursor = r.page(&out.Filter)
	return out, r.err()
}

func expiringCertificateAnswer(c tenant.CompanyCertificate) api.ExpiringCertificate {
	return api.ExpiringCertificate{
		CompaniaID:            c.CompanyID,
		NumeroIdentificacion:  c.NumeroIdentificacion,
		RazonSocial:           c.RazonSocial,
		Ambiente:              c.Ambiente,
		ExpiracionCertificado: api.LocalTime(c.Expiry),
	}
}

func stuckDocumentAnswer(d tenant.StuckDocument) api.StuckDocument {
	espera := api.EsperaServicio
	if d.WaitsForCaller {
		espera = api.EsperaCompania
	}
	return api.StuckDocument{
		CompaniaID:           d.CompanyID,
		NumeroIdentificacion: d.NumeroIdentificacion,
		RazonSocial:          d.RazonSocial,
		Ambiente:             d.Ambiente,
		Clave:                d.Clave,
		Estado:               string(d.Estado),
		Numerado:             api.LocalTime(d.NumberedAt),
		Espera:               espera,
	}
}
