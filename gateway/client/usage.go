package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"facturad/hacienda/api"
)

// Usage (A.14): what companies numbered in a Costa Rica calendar month.

type (
	// Usage is a company's month: its documents by type and estado, its
	// receiver's messages by estado.
	Usage = api.Uso
	// UsageList is the month of every company the caller manages.
	UsageList = api.UsoLista
)

// usageQuery is the query of a month, YYYY-MM; empty asks for the
// current one.
func usageQuery(periodo string) string {
	if periodo == "" {
		return ""
	}
	return "?" + url.Values{api.ParamPeriodo: {periodo}}.Encode()
}

// Usage reads what a company numbered in a month (periodo YYYY-MM, or ""
// for the current Costa Rica month): for the admin, the company's reseller
// and the company's users. A malformed periodo is an ErrValidation on
// periodo.
func (c *Client) Usage(ctx context.Context, companyID int64, periodo string) (*Usage, error) {
	var u Usage
	path := "/api/companies/" + strconv.FormatInt(companyID, 10) + "/uso/v4" + usageQuery(periodo)
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: path, safe: true}, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

// Usages reads the month of every company the caller manages: the admin's
// every company, a reseller's own (a branch user's is ErrNotFound).
func (c *Client) Usages(ctx context.Context, periodo string) (*UsageList, error) {
	var l UsageList
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: "/api/uso/v4" + usageQuery(periodo), safe: true}, &l); err != nil {
		return nil, err
	}
	return &l, nil
}
