package gateway

import (
	"context"
	"net/http"

	"facturad/hacienda/api"
	"facturad/pipeline"
	"facturad/tenant"
)

// ConnectionTester runs a company's connection test (*pipeline.Pipeline):
// a company the principal may not read is tenant.ErrNotFound; whatever the
// test finds is in its answer.
type ConnectionTester interface {
	TestConnection(ctx context.Context, p tenant.Principal, companyID int64) (pipeline.ConnectionTest, error)
}

// ConnectionTestPath is the connection test's route (A.14).
const ConnectionTestPath = "/api/companies/{companyId}/prueba-conexion/v4"

// ConnectionTestRoute returns POST
// /api/companies/{companyId}/prueba-conexion/v4: for any principal that
// may read the company (the get call's rule; another tenant's company is a
// 404), a fresh login at the company's environment and its certificate
// opened, answered 200 whatever they found. It takes no body and has the
// check call's timeout: it waits for the tax authority's token service.
func ConnectionTestRoute(t ConnectionTester) Route {
	return Route{
		Method: http.MethodPost, Path: ConnectionTestPath, MaxBody: noBodyLimit, Timeout: CheckTimeout,
		Handle: func(ctx context.Context, r *Request) (Reply, error) {
			companyID, err := r.pathID(paramCompanyID, "CompaniaId")
			if err != nil {
				return Reply{}, err
			}
			res, err := t.TestConnection(ctx, r.Principal, companyID)
			if err != nil {
				return Reply{}, err
			}
			return Reply{JSON: api.PruebaConexion{
				Ambiente:               res.Ambiente,
				Token:                  res.Token,
				Certificado:            res.Certificado,
				IdentificacionCoincide: res.IdentificacionCoincide,
				VencimientoCertificado: api.LocalTime(res.VencimientoCertificado),
			}}, nil
		},
	}
}
