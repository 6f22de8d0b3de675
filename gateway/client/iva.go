package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"facturad/hacienda/api"
)

// The IVA summary (A.15): a company's sales and purchases of a month per
// tax code and rate, for the monthly IVA return.

type (
	// IVASummary is a company's month: sales rows, purchase rows and each
	// side's totals, amounts with 2 decimals.
	IVASummary = api.ResumenIVA
	// IVARow is one tax code and rate's figures.
	IVARow = api.FilaIVA
)

func ivaPath(companyID int64, periodo, formato string) string {
	q := url.Values{api.ParamPeriodo: {periodo}}
	if formato != "" {
		q.Set(api.ParamFormato, formato)
	}
	return "/api/companies/" + strconv.FormatInt(companyID, 10) + "/reportes/iva/v4?" + q.Encode()
}

// IVASummary reads a company's IVA summary of a month (periodo YYYY-MM,
// required): for the admin, the company's reseller and the company's
// users. A malformed or missing periodo is an ErrValidation on periodo;
// another tenant's company ErrNotFound.
func (c *Client) IVASummary(ctx context.Context, companyID int64, periodo string) (*IVASummary, error) {
	var s IVASummary
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: ivaPath(companyID, periodo, ""), safe: true}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// IVASummaryCSV is IVASummary as CSV (RFC 4180): a header line, then one
// line per sales row and per purchase row, the first column (lado) saying
// which.
func (c *Client) IVASummaryCSV(ctx context.Context, companyID int64, periodo string) ([]byte, error) {
	a, err := c.do(ctx, request{method: http.MethodGet, path: ivaPath(companyID, periodo, "csv"), safe: true, accept: "text/csv"})
	return a.body, err
}
