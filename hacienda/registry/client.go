package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
)

// DefaultURL is the base URL of the tax authority's public registry API.
const DefaultURL = "https://api.hacienda.go.cr"

// DefaultTimeout bounds one call to the registry.
const DefaultTimeout = 5 * time.Second

// maxAnswer bounds the body of an answer read.
const maxAnswer = 4 << 20

// ClientOptions configure a Client.
type ClientOptions struct {
	// BaseURL is the registry's base URL (DefaultURL when empty).
	BaseURL string
	// HTTPClient makes the calls (a client of its own when nil).
	HTTPClient *http.Client
	// Timeout bounds each call (DefaultTimeout when 0).
	Timeout time.Duration
	// Now is the clock that tells today from a past day (time.Now when
	// nil).
	Now func() time.Time
}

// Client calls the registry's HTTP API. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	hc      *http.Client
	timeout time.Duration
	now     func() time.Time
}

// NewClient returns a Client.
func NewClient(o ClientOptions) (*Client, error) {
	if o.BaseURL == "" {
		o.BaseURL = DefaultURL
	}
	u, err := url.Parse(strings.TrimRight(o.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("registry URL %q: want http(s)://host[/path]", o.BaseURL)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Client{base: u, hc: o.HTTPClient, timeout: o.Timeout, now: o.Now}, nil
}

// BaseURL returns the registry's base URL, any password in it masked.
func (c *Client) BaseURL() string { return c.base.Redacted() }

// get asks endpoint path?query and returns the answer's body: a 200's, or
// ErrNotRegistered for a 404, a *MalformedError for a 400, an
// *UnavailableError for anything else.
func (c *Client) get(ctx context.Context, endpoint, path string, query url.Values) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", endpoint, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "facturad")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &UnavailableError{Endpoint: endpoint, Err: unwrapURL(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, &UnavailableError{Endpoint: endpoint, Status: resp.StatusCode, Err: fmt.Errorf("read the answer: %w", err)}
	}
	if len(body) > maxAnswer {
		return nil, &UnavailableError{Endpoint: endpoint, Status: resp.StatusCode, Err: errors.New("answer too large")}
	}
	status := resp.StatusCode
	if status == http.StatusOK {
		// The registry sometimes answers a miss with a 200 whose body is
		// its error form ({"code": 404, "status": "..."}).
		if code := errorForm(body); code != 0 {
			status = code
		}
	}
	switch s := status; {
	case s == http.StatusOK:
		return body, nil
	case s == http.StatusNotFound:
		return nil, ErrNotRegistered
	case s == http.StatusBadRequest:
		return nil, &MalformedError{Endpoint: endpoint, Status: s, Detail: detail(body)}
	default:
		// 429 and 403 are the registry's block of an address that asks too
		// often; 5xx its failures.
		return nil, &UnavailableError{Endpoint: endpoint, Status: s, After: recepcion.RetryAfter(resp.Header),
			Err: errors.New(http.StatusText(s))}
	}
}

// errorForm returns the code of an answer in the registry's error form, an
// object with a code of 400 or more and a status but none of an answer's
// fields; 0 for anything else.
func errorForm(body []byte) int {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' {
		return 0
	}
	var f map[string]json.RawMessage
	if json.Unmarshal(b, &f) != nil {
		return 0
	}
	var code int
	if json.Unmarshal(f["code"], &code) != nil || code < 400 || code > 599 {
		return 0
	}
	if _, ok := f["status"]; !ok || len(f) != 2 {
		return 0
	}
	return code
}

// unwrapURL drops the *url.Error around a transport error: its text
// repeats the URL, which says nothing the endpoint does not.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// detail is the start of an error answer's text, for the error message.
func detail(body []byte) string {
	s := strings.TrimSpace(string(body))
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// fetch asks endpoint path?query and reads the answer with decode; an
// answer it cannot read is the registry failing (*UnavailableError).
func fetch[T any](ctx context.Context, c *Client, endpoint, path string, query url.Values, decode func([]byte) (T, error)) (T, error) {
	var zero T
	body, err := c.get(ctx, endpoint, path, query)
	if err != nil {
		return zero, err
	}
	v, err := decode(body)
	if err != nil {
		return zero, &UnavailableError{Endpoint: endpoint, Status: http.StatusOK, Err: err}
	}
	return v, nil
}

// Taxpayer asks /fe/ae for a taxpayer.
func (c *Client) Taxpayer(ctx context.Context, id string) (Taxpayer, error) {
	t, err := fetch(ctx, c, "ae", "/fe/ae", url.Values{"identificacion": {id}}, DecodeTaxpayer)
	if err == nil && t.Identificacion == "" {
		t.Identificacion = id
	}
	return t, err
}

// Cabys asks /fe/cabys for one code; ErrNotRegistered when the catalog
// has none.
func (c *Client) Cabys(ctx context.Context, code string) (Cabys, error) {
	items, err := fetch(ctx, c, "cabys", "/fe/cabys", url.Values{"codigo": {code}}, DecodeCabys)
	if err != nil {
		return Cabys{}, err
	}
	for _, it := range items {
		if it.Codigo == code {
			return it, nil
		}
	}
	return Cabys{}, ErrNotRegistered
}

// SearchCabys asks /fe/cabys for the entries matching words, at most top.
func (c *Client) SearchCabys(ctx context.Context, q string, top int) ([]Cabys, error) {
	v := url.Values{"q": {q}}
	if top > 0 {
		v.Set("top", strconv.Itoa(top))
	}
	items, err := fetch(ctx, c, "cabys", "/fe/cabys", v, DecodeCabys)
	switch {
	case errors.Is(err, ErrNotRegistered):
		return []Cabys{}, nil
	case err != nil:
		return nil, err
	}
	if top > 0 && len(items) > top {
		items = items[:top]
	}
	return items, nil
}

// Exoneration asks /fe/ex for an authorisation.
func (c *Client) Exoneration(ctx context.Context, autorizacion string) (Exoneration, error) {
	e, err := fetch(ctx, c, "ex", "/fe/ex", url.Values{"autorizacion": {autorizacion}}, DecodeExoneration)
	if err == nil && e.Autorizacion == "" {
		e.Autorizacion = autorizacion
	}
	return e, err
}

// Rate asks /indicadores/tc for a currency's rate on a day: today's from
// /indicadores/tc/dolar, a past day's from its history. Only the US dollar
// has a history there; ErrNotRegistered for another currency, or for a
// day with no rate.
func (c *Client) Rate(ctx context.Context, moneda string, day time.Time) (Rate, error) {
	if moneda != "USD" {
		return Rate{}, ErrNotRegistered
	}
	d := day.Format(time.DateOnly)
	if d >= c.now().In(hacienda.CostaRica).Format(time.DateOnly) {
		r, err := fetch(ctx, c, "tc", "/indicadores/tc/dolar", nil, DecodeDollar)
		if err != nil {
			return Rate{}, err
		}
		if r.Fecha == d {
			return r, nil
		}
		// Today's rate not published yet under today's date: the
		// history may have it.
	}
	rates, err := fetch(ctx, c, "tc", "/indicadores/tc/dolar/historico", url.Values{"d": {d}, "h": {d}}, DecodeRates)
	if err != nil {
		return Rate{}, err
	}
	for _, r := range rates {
		if r.Fecha == d {
			r.Moneda = moneda
			return r, nil
		}
	}
	return Rate{}, ErrNotRegistered
}
