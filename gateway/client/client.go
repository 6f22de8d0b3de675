package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one facturad service as one API user. It is safe for
// concurrent use; make one and share it.
type Client struct {
	base  string // without a trailing slash
	hc    *http.Client
	token string
	basic string // the whole Authorization header value
	retry RetryPolicy
	agent string
	lang  string // Accept-Language, or ""
	// maxBody bounds how much of an answer is read.
	maxBody int64
	// now and sleep are the clock the retries are timed by: time.Now,
	// and a timer that a cancelled context stops (sleepCtx). Tests give
	// their own, to see the waits without spending them.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

// RetryPolicy bounds the retries of a call answered 429 or 503 (and of a
// call that is safe to repeat whose connection failed).
type RetryPolicy struct {
	// MaxAttempts is the most attempts of one call, the first included;
	// 1 turns retries off. Default 4.
	MaxAttempts int
	// MaxWait is the longest the client waits before one retry: a
	// Retry-After longer than it ends the call with the answer's *Error.
	// Default 30s.
	MaxWait time.Duration
	// Backoff is the first wait when the answer has no Retry-After (or
	// the connection failed); it doubles at each retry, up to MaxWait.
	// Default 250ms.
	Backoff time.Duration
}

func (p *RetryPolicy) setDefaults() {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.MaxWait <= 0 {
		p.MaxWait = 30 * time.Second
	}
	if p.Backoff <= 0 {
		p.Backoff = 250 * time.Millisecond
	}
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client call through hc (its transport,
// timeouts, TLS settings). The default is a client of its own with a 90s
// timeout per attempt, enough for a send (the service bounds one at 60s).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.hc = hc }
}

// WithCredentials sets the API user the client speaks for: its usuario
// and contrasena (sent as Basic authorization) and its apiToken (sent as
// the AuthToken header).
func WithCredentials(usuario, contrasena, apiToken string) Option {
	return func(c *Client) { c.setCredentials(usuario, contrasena, apiToken) }
}

// WithRetry sets the retry policy; zero fields keep their defaults.
func WithRetry(p RetryPolicy) Option {
	return func(c *Client) { c.retry = p }
}

// WithUserAgent sets the User-Agent header of every call.
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.agent = ua }
}

// WithLanguage sets the Accept-Language header of every call: "es" (or
// "es-CR") for the error messages in Spanish, as Error.Message and
// Error.Fields give them; English without it. The codes (Error.Code,
// Error.Codes) are the same in every language.
func WithLanguage(tag string) Option {
	return func(c *Client) { c.lang = tag }
}

// New returns a client of the service at baseURL, such as
// "https://facturas.example.com" (the paths /api/... are appended to it).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q is not an http(s) URL", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: base URL %q has a query or fragment", baseURL)
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), agent: "facturad-go-client", maxBody: 64 << 20,
		now: time.Now, sleep: sleepCtx}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		c.hc = &http.Client{Timeout: 90 * time.Second}
	}
	c.retry.setDefaults()
	return c, nil
}

// As returns a copy of c speaking for another API user, over the same
// http.Client and with the same policy: typically the credentials a create
// call answered with.
func (c *Client) As(creds Credentials) *Client {
	cp := *c
	cp.setCredentials(creds.Usuario, creds.Contrasena, creds.APIToken)
	return &cp
}

// BaseURL returns the base URL the client calls.
func (c *Client) BaseURL() string { return c.base }

func (c *Client) setCredentials(usuario, contrasena, apiToken string) {
	c.token = apiToken
	// StdEncoding never wraps lines, whatever the length.
	c.basic = "Basic " + base64.StdEncoding.EncodeToString([]byte(usuario+":"+contrasena))
}

// request is one call to make.
type request struct {
	method      string
	path        string // with its query
	contentType string
	body        []byte
	// safe says the call may be repeated after a connection failure
	// without doing anything twice.
	safe bool
	// accept is the Accept header (default application/json).
	accept string
}

// answer is a successful call's status, headers and body.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// do makes a call with the retry policy and returns its 2xx answer, or an
// *Error for any other status, or the transport's error.
func (c *Client) do(ctx context.Context, r request) (answer, error) {
	backoff := c.retry.Backoff
	for attempt := 1; ; attempt++ {
		a, err := c.once(ctx, r)
		if err == nil {
			return a, nil
		}
		if attempt >= c.retry.MaxAttempts || ctx.Err() != nil {
			return answer{}, err
		}
		var wait time.Duration
		var ae *Error
		switch {
		case errors.As(err, &ae) && ae.Temporary():
			wait = ae.RetryAfter
			if wait == 0 {
				wait = backoff
			}
		case errors.As(err, &ae):
			return answer{}, err
		case r.safe:
			wait = backoff
		default:
			return answer{}, err
		}
		if wait > c.retry.MaxWait {
			return answer{}, err
		}
		if dl, ok := ctx.Deadline(); ok && dl.Sub(c.now()) < wait {
			// Waiting would only end in the deadline: give the caller the
			// answer now, while it still has time to do something else.
			return answer{}, err
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return answer{}, fmt.Errorf("%w (waiting to retry after: %w)", serr, err)
		}
		backoff = min(2*backoff, c.retry.MaxWait)
	}
}

// sleepCtx waits for d, or until ctx ends, whose error it then returns.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// once makes one attempt.
func (c *Client) once(ctx context.Context, r request) (answer, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, body)
	if err != nil {
		return answer{}, fmt.Errorf("facturad: %s %s: %w", r.method, pathOnly(r.path), err)
	}
	h := req.Header
	h["AuthToken"] = []string{c.token} // as the contract spells it
	h.Set("Authorization", c.basic)
	accept := r.accept
	if accept == "" {
		accept = "application/json"
	}
	h.Set("Accept", accept)
	if r.contentType != "" {
		h.Set("Content-Type", r.contentType)
	}
	if c.agent != "" {
		h.Set("User-Agent", c.agent)
	}
	if c.lang != "" {
		h.Set("Accept-Language", c.lang)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// url.Error quotes the URL, which holds no secret (credentials
		// travel in headers only).
		return answer{}, fmt.Errorf("facturad: %s %s: %w", r.method, pathOnly(r.path), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody))
	if err != nil {
		return answer{}, fmt.Errorf("facturad: %s %s: read the answer: %w", r.method, pathOnly(r.path), err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return answer{}, newError(r.method, pathOnly(r.path), resp, b)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

func pathOnly(p string) string {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return p[:i]
	}
	return p
}

// getJSON makes a call and decodes its JSON answer into out.
func (c *Client) callJSON(ctx context.Context, r request, out any) error {
	a, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(a.body, out); err != nil {
		return fmt.Errorf("facturad: %s %s: unreadable answer: %w", r.method, pathOnly(r.path), err)
	}
	return nil
}

// jsonRequest is a call with v encoded as its JSON body.
func jsonRequest(method, path string, v any, safe bool) (request, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return request{}, fmt.Errorf("facturad: %s %s: encode the request: %w", method, path, err)
	}
	return request{method: method, path: path, contentType: "application/json", body: b, safe: safe}, nil
}
