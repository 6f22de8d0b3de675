package gateway

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"

	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/tenant"
)

// IVASummary is the service behind the IVA summary of A.15
// (*tenant.Service satisfies it): who may read it (the admin, the
// company's reseller, its users; another tenant's company is
// tenant.ErrNotFound) and the periodo's check.
type IVASummary interface {
	IVASummary(ctx context.Context, p tenant.Principal, companyID int64, periodo string) (tenant.IVASummary, error)
}

// IVARoute returns GET /api/companies/{companyId}/reportes/iva/v4: a
// company's IVA summary of one month (periodo=YYYY-MM, required), as JSON
// or, with formato=csv, as CSV (docs/design/iva-summary.md).
func IVARoute(s IVASummary) Route {
	return Route{
		Method: http.MethodGet, Path: pathIVA, MaxBody: noBodyLimit,
		Handle: func(ctx context.Context, r *Request) (Reply, error) {
			companyID, err := r.pathID(paramCompanyID, "CompaniaId")
			if err != nil {
				return Reply{}, err
			}
			p, err := periodo(r)
			if err != nil {
				return Reply{}, err
			}
			csvOut := false
			if vs := queryValues(r.Query, api.ParamFormato); len(vs) > 0 {
				switch f := strings.ToLower(strings.TrimSpace(vs[0])); f {
				case "csv":
					csvOut = true
				case "", "json":
				default:
					return Reply{}, invalid(api.ParamFormato, msg.Formato.With())
				}
			}
			sum, err := s.IVASummary(ctx, r.Principal, companyID, p)
			if err != nil {
				return Reply{}, err
			}
			out := NewResumenIVA(sum)
			if !csvOut {
				return Reply{JSON: out}, nil
			}
			body, err := ResumenIVACSV(out)
			if err != nil {
				return Reply{}, err
			}
			return Reply{Body: body, ContentType: "text/csv; charset=utf-8",
				Disposition: `attachment; filename="iva-` + sum.Periodo + `.csv"`}, nil
		},
	}
}

const pathIVA = "/api/companies/{companyId}/reportes/iva/v4"

// NewResumenIVA writes a summary as the contract's answer: amounts with 2
// decimals, the lists [] when empty.
func NewResumenIVA(s tenant.IVASummary) api.ResumenIVA {
	rows := func(in []tenant.IVARow, purchase bool) []api.FilaIVA {
		out := make([]api.FilaIVA, len(in))
		for i, r := range in {
			out[i] = newFilaIVA(r, purchase)
		}
		return out
	}
	return api.ResumenIVA{
		Periodo: s.Periodo, Ventas: rows(s.Ventas, false), Compras: rows(s.Compras, true),
		Totales: api.TotalesIVA{Ventas: newFilaIVA(s.TotalVentas, false), Compras: newFilaIVA(s.TotalCompras, true)},
	}
}

func newFilaIVA(r tenant.IVARow, purchase bool) api.FilaIVA {
	f := api.FilaIVA{
		Codigo: r.Codigo, CodigoTarifaIVA: r.CodigoTarifaIVA, Tarifa: r.Tarifa,
		BaseImponible: r.Base.StringFixed(2), Impuesto: r.Impuesto.StringFixed(2), Exento: r.Exento.StringFixed(2),
		Exonerado: r.Exonerado.StringFixed(2), NoSujeto: r.NoSujeto.StringFixed(2), Documentos: r.Documentos,
	}
	if purchase {
		a := r.Acreditable.StringFixed(2)
		f.ImpuestoAcreditable = &a
	}
	return f
}

// ivaCSVHeader is the CSV's header: the rows' JSON names, after a first
// column, lado, that says whether the row is a sale (ventas) or a purchase
// (compras). impuestoAcreditable is empty on sales rows.
var ivaCSVHeader = []string{"lado", "codigo", "codigoTarifaIVA", "tarifa", "baseImponible", "impuesto",
	"exento", "exonerado", "noSujeto", "documentos", "impuestoAcreditable"}

// ResumenIVACSV writes a summary as CSV (RFC 4180: CRLF line ends, fields
// quoted when they need it): the header, then one line per sales row and
// one per purchase row. The totals are not lines: a spreadsheet sums the
// columns.
func ResumenIVACSV(s api.ResumenIVA) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	if err := w.Write(ivaCSVHeader); err != nil {
		return nil, err
	}
	for _, side := range []struct {
		name string
		rows []api.FilaIVA
	}{{"ventas", s.Ventas}, {"compras", s.Compras}} {
		for _, r := range side.rows {
			acr := ""
			if r.ImpuestoAcreditable != nil {
				acr = *r.ImpuestoAcreditable
			}
			// The codes of a received document are its supplier's: text
			// cells are neutralised against formula injection, numbers
			// only when not plain numbers (decision 112).
			if err := w.Write([]string{side.name, api.CSVText(r.Codigo), api.CSVText(r.CodigoTarifaIVA), api.CSVNumber(r.Tarifa),
				api.CSVNumber(r.BaseImponible), api.CSVNumber(r.Impuesto), api.CSVNumber(r.Exento), api.CSVNumber(r.Exonerado),
				api.CSVNumber(r.NoSujeto), strconv.FormatInt(r.Documentos, 10), api.CSVNumber(acr)}); err != nil {
				return nil, err
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// Interface guard: the tenant service answers the summary.
var _ IVASummary = (*tenant.Service)(nil)
