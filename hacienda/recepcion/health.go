package recepcion

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// exchangeHealth remembers how the client's latest exchange with the tax
// authority (an API call, a token grant or a logout) ended: whether the
// tax authority answered it, and when.
type exchangeHealth struct {
	mu   sync.Mutex
	at   time.Time
	fail error // nil: answered
}

// record notes an exchange that ended at t: answered unless it failed in
// transport or the tax authority answered 5xx or 429, the failures the
// alert HaciendaUnreachable counts too. A call its caller canceled is
// left out.
func (h *exchangeHealth) record(t time.Time, status int, err error) {
	var fail error
	switch o := outcome(err); {
	case o == string(KindCanceled):
		return // the caller gave up: it says nothing of the tax authority
	case err == nil && status >= 500:
		fail = fmt.Errorf("the tax authority answered %d", status)
	case err == nil && status == http.StatusTooManyRequests:
		fail = errors.New("the tax authority answered 429 (rate limited)")
	case err == nil, o == "client_error", o == "unauthorized":
	default:
		fail = fmt.Errorf("exchange failed: %s", o)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if t.Before(h.at) {
		return // a slower exchange that started earlier
	}
	h.at, h.fail = t, fail
}

func (h *exchangeHealth) latest() (time.Time, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.at, h.fail
}

// Reachable reports whether the tax authority answers this client: from
// its latest exchange when one ended within recent (an answer other than
// 5xx or 429 is nil, a failure its cause), or else by a light probe, a GET
// of the token endpoint without credentials, where any answer below 500
// but 429 is nil. The probe is not counted in the client's metrics and
// does not move its latest exchange: it stands for the exchanges only
// while there are none.
func (c *Client) Reachable(ctx context.Context, recent time.Duration) error {
	if at, fail := c.metrics.health.latest(); !at.IsZero() && time.Since(at) <= recent {
		return fail
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.TokenTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.ep.TokenURL, nil)
	if err != nil {
		return fmt.Errorf("probe of the token endpoint: %w", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("probe of the token endpoint: %s", ClassifyTransport(OpToken, err, false).Kind)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return fmt.Errorf("probe of the token endpoint: answered %d", resp.StatusCode)
	}
	return nil
}
