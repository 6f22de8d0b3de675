package gateway

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"facturad/hacienda/msg"
	"facturad/pipeline/export"
	"facturad/tenant"
)

// ExportStarter starts an export (*export.Exporter satisfies it): the
// caller's right to the company, the period and a free slot are checked
// before anything is written.
type ExportStarter interface {
	Start(ctx context.Context, p tenant.Principal, companyID int64, desde, hasta time.Time) (*export.Export, error)
}

// PathExport is the export's route (A.15).
const PathExport = "/api/companies/{companyId}/exportar/v4"

// ExportRoute returns GET /api/companies/{companyId}/exportar/v4?desde=&hasta=
// for Options.Routes: a ZIP of the company's documents of the period
// (A.15; pipeline/export writes it), streamed as it is written. The
// admin, the company's reseller and the company's users may export it,
// as they read its audit log; anyone else gets 404. desde and hasta are
// read as the listings read them (A.10); the exporter's Start checks that
// both are given and that the period spans at most export.MaxSpan (a 400
// on the parameter at fault). Beyond the exports the
// process runs at once the answer is 503, beyond the company's 429, both
// with Retry-After. The route's timeout bounds only the checks: the
// archive is streamed after (Reply.Stream), for as long as it takes
// within the exporter's MaxDuration.
func ExportRoute(e ExportStarter) Route {
	return Route{
		Method: http.MethodGet, Path: PathExport, MaxBody: noBodyLimit, Sheds: true,
		Handle: func(ctx context.Context, r *Request) (Reply, error) {
			companyID, err := strconv.ParseInt(r.Params[paramCompanyID], 10, 64)
			if err != nil || companyID <= 0 {
				return Reply{}, invalid("CompaniaId", msg.CompaniaIDParam.With())
			}
			// Read as the listings read it; what makes a period an
			// export's (both ends, the span) is Start's to check.
			q := newQueryReader(r.Query)
			var f tenant.ListQuery
			q.period(&f)
			if err := q.err(); err != nil {
				return Reply{}, err
			}
			x, err := e.Start(ctx, r.Principal, companyID, f.Desde, f.Hasta)
			if err != nil {
				return Reply{}, err
			}
			return Reply{
				ContentType: contentTypeZIP,
				Disposition: `attachment; filename="` + x.FileName() + `"`,
				Stream:      x.WriteTo,
				Release:     x.Release,
				Header:      map[string]string{"Cache-Control": "no-store"},
			}, nil
		},
	}
}

const contentTypeZIP = "application/zip"

// Interface guard: the exporter is what the route calls.
var _ ExportStarter = (*export.Exporter)(nil)
