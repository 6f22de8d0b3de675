package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/api"
)

// Export downloads a company's documents issued from desde to hasta (both
// included, at most 366 days apart) as one ZIP archive
// (GET /api/companies/{id}/exportar/v4, A.15): per document its signed
// XML, the tax authority's answer, the company's receiver's message
// (received documents) and the PDF, and last indice.csv. The archive is
// streamed: the caller reads it from the returned body and must Close it.
// The body's reading is bounded by ctx alone (not by the HTTP client's
// Timeout, which bounds only the wait for the answer's headers here), so
// give ctx a deadline that suits the period's size.
//
// An export that fails on the service's side midway ends the body early:
// reading it then fails (io.ErrUnexpectedEOF), and what was read is not a
// valid ZIP (its last entry, ERROR.txt, says why). Refusals are *Error:
// ErrNotFound for a company the caller does not manage, 400 for a bad
// period, 429 while an export of the company runs, 503 while the service
// runs its most exports (both with RetryAfter; the call is not retried).
func (c *Client) Export(ctx context.Context, companyID int64, desde, hasta time.Time) (io.ReadCloser, error) {
	const layout = "2006-01-02T15:04:05"
	q := url.Values{}
	q.Set(api.ParamDesde, desde.In(hacienda.CostaRica).Format(layout))
	q.Set(api.ParamHasta, hasta.In(hacienda.CostaRica).Format(layout))
	path := companyPath(companyID) + "/exportar/v4?" + q.Encode()

	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("facturad: GET %s: %w", pathOnly(path), err)
	}
	req.Header["AuthToken"] = []string{c.token}
	req.Header.Set("Authorization", c.basic)
	req.Header.Set("Accept", "application/zip")
	if c.agent != "" {
		req.Header.Set("User-Agent", c.agent)
	}
	if c.lang != "" {
		req.Header.Set("Accept-Language", c.lang)
	}
	// The client's Timeout would cut the body: it bounds the headers
	// only, by a timer stopped once they are in.
	hc := *c.hc
	hc.Timeout = 0
	var timer *time.Timer
	if c.hc.Timeout > 0 {
		timer = time.AfterFunc(c.hc.Timeout, cancel)
	}
	resp, err := hc.Do(req)
	if timer != nil && !timer.Stop() && err == nil {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("facturad: GET %s: no answer within %s", pathOnly(path), c.hc.Timeout)
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("facturad: GET %s: %w", pathOnly(path), err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, c.maxBody))
		return nil, newError(http.MethodGet, pathOnly(path), resp, b)
	}
	return &exportBody{ReadCloser: resp.Body, cancel: cancel}, nil
}

// exportBody ends the call's context when closed.
type exportBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *exportBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
