package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"facturad/hacienda/api"
)

// The registry lookups' answers (A.13).
type (
	// Contribuyente is a taxpayer of the tax authority's registry.
	Contribuyente = api.Contribuyente
	// CabysList is the answer of a CAByS search or lookup by code.
	CabysList = api.CabysList
	// ExoneracionRegistro is an exoneration authorisation of the registry.
	ExoneracionRegistro = api.Exoneracion
	// TipoCambio is the central bank's exchange rate of a day.
	TipoCambio = api.TipoCambio
)

// Contribuyente looks up a taxpayer in the tax authority's registry: an
// *Error with status 404 when it is not registered.
func (c *Client) Contribuyente(ctx context.Context, identificacion string) (*Contribuyente, error) {
	var out Contribuyente
	err := c.callJSON(ctx, request{method: http.MethodGet, path: "/api/registry/contribuyentes/" + url.PathEscape(identificacion) + "/v4", safe: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// SearchCabys searches the CAByS catalog in force by words, at most limit
// entries (0: the service's default).
func (c *Client) SearchCabys(ctx context.Context, q string, limit int) (*CabysList, error) {
	v := url.Values{"q": {q}}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	return c.cabys(ctx, v)
}

// Cabys looks up a CAByS code: no items when it is not in the catalog in
// force.
func (c *Client) Cabys(ctx context.Context, codigo string) (*CabysList, error) {
	return c.cabys(ctx, url.Values{"codigo": {codigo}})
}

func (c *Client) cabys(ctx context.Context, v url.Values) (*CabysList, error) {
	var out CabysList
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: "/api/registry/cabys/v4?" + v.Encode(), safe: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Exoneracion looks up an exoneration authorisation: an *Error with
// status 404 when the registry has none with that number.
func (c *Client) Exoneracion(ctx context.Context, autorizacion string) (*ExoneracionRegistro, error) {
	var out ExoneracionRegistro
	err := c.callJSON(ctx, request{method: http.MethodGet, path: "/api/registry/exoneraciones/" + url.PathEscape(autorizacion) + "/v4", safe: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// TipoCambio returns the central bank's exchange rate of moneda ("" is
// USD) on day's calendar date, as day's own location has it (build it with
// time.Date); the zero time is today in Costa Rica, as the service sees it.
func (c *Client) TipoCambio(ctx context.Context, moneda string, day time.Time) (*TipoCambio, error) {
	v := url.Values{}
	if moneda != "" {
		v.Set("moneda", moneda)
	}
	if !day.IsZero() {
		v.Set("fecha", day.Format(time.DateOnly))
	}
	path := "/api/registry/tipo-cambio/v4"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out TipoCambio
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: path, safe: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
