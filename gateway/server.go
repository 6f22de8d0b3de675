package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"facturad/gateway/requestid"
	"facturad/hacienda/msg"
	"facturad/metrics"
	"facturad/tenant"
)

// Server serves the API and the admin listener. Build it with New.
type Server struct {
	o        Options
	log      *slog.Logger
	api      *fasthttp.Server
	admin    *fasthttp.Server
	metrics  *httpMetrics
	routes   []*route
	maxBody  int
	draining atomic.Bool

	idPrefix string
	idSeq    atomic.Uint64

	unmatched *routeMetrics
	promh     fasthttp.RequestHandler

	// streams ends when Shutdown gives up waiting: the streamed replies
	// still being written then stop (Reply.Stream).
	streams       context.Context
	cancelStreams context.CancelFunc
}

// route is one registered method and pattern with its limits and handler.
type route struct {
	method       string
	pattern      string
	segs         []string
	public       bool
	maxBody      int // limit of a non-multipart body
	maxMultipart int // limit of a multipart body; 0 means maxBody
	timeout      time.Duration
	h            Handler
	audit        string // the change the route records (Route.Audit)
	m            *routeMetrics
	// shape, when set, prepares the call's error shapes (call.a6 and the
	// conflict field) before anything can fail.
	shape func(c *call)
	// unavailableLog samples the route's log lines of store failures
	// answered 503 (call.unavailable).
	unavailableLog logSampler
}

// call is one request in flight: what the handler needs, copied or bound
// to the RequestCtx for the handler's duration only.
type call struct {
	s     *Server
	rc    *fasthttp.RequestCtx
	rt    *route
	ctx   context.Context
	reqID string
	p     tenant.Principal
	// a6, when set, shapes the body of a 500 answer (A.6): the call's own
	// answer with its message field set to text and its key to code.
	a6 func(code, text string) any
	// conflictField names the request field a tenant.ErrConflict is
	// about, and conflictMsg says what about it.
	conflictField string
	conflictMsg   *msg.Entry
	// shed is set when the answer is a 503 the service chose because of
	// load or a rollout (shedder): the request counter's class is "shed".
	shed bool
}

// New builds a Server. It registers the gateway's collectors with
// o.Registerer and fails when o.Tenants is nil or a collector cannot be
// registered.
func New(o Options) (*Server, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	m, err := newHTTPMetrics(o.Registerer)
	if err != nil {
		return nil, err
	}
	var prefix [6]byte
	if _, err := rand.Read(prefix[:]); err != nil {
		return nil, fmt.Errorf("gateway: request id prefix: %w", err)
	}
	s := &Server{
		o:        o,
		log:      o.Logger,
		metrics:  m,
		idPrefix: hex.EncodeToString(prefix[:]) + "-",
	}
	s.unmatched = m.forRoute("", unmatchedRoute, false)
	s.streams, s.cancelStreams = context.WithCancel(context.Background())

	r := router.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.NotFound = s.notFound
	r.MethodNotAllowed = s.methodNotAllowed

	static, err := staticRoutes()
	if err != nil {
		return nil, err
	}
	routes := slices.Concat(s.tenancyRoutes(), static, o.Routes)
	for _, rt := range routes {
		if err := s.register(rt); err != nil {
			return nil, err
		}
	}
	for _, rt := range s.routes {
		if err := addRoute(r, rt, s.wrap(rt)); err != nil {
			return nil, err
		}
		if rt.maxBody > s.maxBody {
			s.maxBody = rt.maxBody
		}
		if rt.maxMultipart > s.maxBody {
			s.maxBody = rt.maxMultipart
		}
	}

	s.api = &fasthttp.Server{
		Handler:        r.Handler,
		ErrorHandler:   s.readError,
		HeaderReceived: s.headerReceived,
		ExpectHandler:  s.expect,
		Name:           "facturad",
		// ReadTimeout is fasthttp's bound on the first byte and the
		// headers; headerReceived gives the body its own.
		ReadTimeout:                  o.HeaderTimeout,
		WriteTimeout:                 o.WriteTimeout,
		IdleTimeout:                  o.IdleTimeout,
		MaxRequestBodySize:           s.maxBody,
		Concurrency:                  concurrencyFor(o.MaxConns),
		DisablePreParseMultipartForm: true,
		NoDefaultContentType:         true,
		CloseOnShutdown:              true,
		Logger:                       fasthttpLogger{o.Logger},
	}
	s.promh = fasthttpadaptor.NewFastHTTPHandler(metrics.Handler(o.Gatherer))
	s.admin = &fasthttp.Server{
		Handler:            s.adminHandler,
		Name:               "facturad-admin",
		ReadTimeout:        o.ReadTimeout,
		WriteTimeout:       o.WriteTimeout,
		IdleTimeout:        o.IdleTimeout,
		MaxRequestBodySize: noBodyLimit,
		CloseOnShutdown:    true,
		Logger:             fasthttpLogger{o.Logger},
	}
	return s, nil
}

// concurrencyFor is fasthttp's Concurrency for a connection table of
// maxConns (0: no cap). The table is the listener's (steadyListener);
// fasthttp still counts a connection the listener closed to make room
// until that connection's goroutine notices, so it gets headroom rather
// than answering the newcomer 503.
func concurrencyFor(maxConns int) int {
	if maxConns <= 0 {
		return 0
	}
	return maxConns + max(maxConns/4, 64)
}

// addRoute registers rt with the router, turning the router's registration
// panics (a malformed or conflicting pattern) into an error.
func addRoute(r *router.Router, rt *route, h fasthttp.RequestHandler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("gateway: route %s %s: %v", rt.method, rt.pattern, v)
		}
	}()
	r.Handle(rt.method, rt.pattern, h)
	return nil
}

// Serve serves the API on ln until Shutdown; it then returns nil.
// Accept errors that pass (a full open-file table during a connection
// flood) never end it: see steadyListener.
// With Options.TLSConfig the connections are TLS.
func (s *Server) Serve(ln net.Listener) error {
	var l net.Listener = newSteadyListener(ln, s.log, s.o.MaxConnsPerIP, s.o.MaxConns)
	if s.o.TLSConfig != nil {
		// Outside the steady listener, so that fasthttp sees *tls.Conn
		// (RequestCtx.IsTLS) and the per-address count still sees every
		// connection; the handshake runs on the connection's first read,
		// under HeaderTimeout.
		l = tls.NewListener(l, s.o.TLSConfig)
	}
	return s.api.Serve(l)
}

// ServeAdmin serves /healthz, /readyz and /metrics on ln until Shutdown;
// it then returns nil.
func (s *Server) ServeAdmin(ln net.Listener) error {
	return s.admin.Serve(ln)
}

// Shutdown drains the server: /readyz fails from the first moment, the API
// keeps serving for Options.DrainDelay, then the API listener closes and the
// requests in flight finish; the admin listener closes last. It returns when
// every connection is closed, or with ctx's error when ctx ends first.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.shutdown(ctx, s.o.DrainDelay)
}

// ShutdownNow is Shutdown without the drain delay, for a server that
// already failed: waiting would keep a broken replica in the way without
// serving anyone. The requests in flight still finish.
func (s *Server) ShutdownNow(ctx context.Context) error {
	return s.shutdown(ctx, 0)
}

func (s *Server) shutdown(ctx context.Context, drain time.Duration) error {
	s.draining.Store(true)
	// A streamed reply (an export) may take longer than the caller of
	// Shutdown waits: once it stops waiting, the streams end (their
	// clients see a truncated body) and their connections close.
	stop := context.AfterFunc(ctx, s.cancelStreams)
	defer stop()
	if drain > 0 {
		t := time.NewTimer(drain)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	errAPI := s.api.ShutdownWithContext(ctx)
	errAdmin := s.admin.ShutdownWithContext(ctx)
	if errAPI != nil {
		return fmt.Errorf("gateway: shut down api listener: %w", errAPI)
	}
	if errAdmin != nil {
		return fmt.Errorf("gateway: shut down admin listener: %w", errAdmin)
	}
	return nil
}

// wrap turns a route into a fasthttp handler: request id, metrics, panic
// recovery, body limit, timeout and authentication around rt.h.
func (s *Server) wrap(rt *route) fasthttp.RequestHandler {
	return func(rc *fasthttp.RequestCtx) {
		start := time.Now()
		c := &call{s: s, rc: rc, rt: rt, reqID: s.requestID(rc)}
		rc.Response.Header.Set(headerRequestID, c.reqID)
		if s.draining.Load() {
			rc.SetConnectionClose()
		}
		defer func() {
			if v := recover(); v != nil {
				c.panicked(v)
			}
			d := time.Since(start)
			rt.m.observe(rc.Response.StatusCode(), c.shed, d)
			s.access(rc, rt.method, rt.pattern, c.reqID, c.p, d)
		}()
		s.serve(c)
	}
}

func (s *Server) serve(c *call) {
	rc := c.rc
	if c.rt.shape != nil {
		c.rt.shape(c)
	}
	if len(rc.Request.Body()) > c.rt.limitFor(rc.Request.Header.ContentType()) {
		c.fail(errTooLarge)
		return
	}
	// The request id travels with the context, so that whatever the
	// handler logs under it can be matched to the caller's X-Request-Id.
	ctx, cancel := context.WithTimeout(requestid.NewContext(context.Background(), c.reqID), c.rt.timeout)
	defer cancel()
	c.ctx = ctx
	if !c.rt.public {
		p, err := s.authenticate(c)
		if err != nil {
			c.fail(err)
			return
		}
		c.p = p
	}
	req := c.request()
	rep, err := c.rt.h(ctx, req)
	if err != nil {
		c.fail(err)
		return
	}
	if c.rt.audit != "" && (rep.Status == 0 || rep.Status >= 200 && rep.Status < 300) {
		s.recordChange(c, req)
	}
	c.reply(rep)
}

// request copies what a handler needs out of the connection.
func (c *call) request() *Request {
	rc := c.rc
	r := &Request{
		Principal:   c.p,
		RequestID:   c.reqID,
		Params:      map[string]string{},
		Query:       url.Values{},
		ContentType: string(rc.Request.Header.ContentType()),
		Body:        append([]byte(nil), rc.Request.Body()...),
		Lang:        langOf(rc),
	}
	for _, seg := range c.rt.segs {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			name = strings.TrimSuffix(name, "}")
			if v, ok := rc.UserValue(name).(string); ok {
				r.Params[name] = v
			}
		}
	}
	for k, v := range rc.QueryArgs().All() {
		r.Query.Add(string(k), string(v))
	}
	return r
}

// reply writes a handler's answer.
func (c *call) reply(rep Reply) {
	status := rep.Status
	if status == 0 {
		status = fasthttp.StatusOK
	}
	for k, v := range rep.Header {
		c.rc.Response.Header.Set(k, v)
	}
	if rep.Body == nil && rep.Stream == nil {
		writeJSON(c.rc, status, rep.JSON)
		return
	}
	ct := rep.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	c.rc.SetStatusCode(status)
	c.rc.SetContentType(ct)
	if rep.Disposition != "" {
		c.rc.Response.Header.Set(fasthttp.HeaderContentDisposition, rep.Disposition)
	}
	if rep.Stream != nil {
		c.replyStream(rep)
		return
	}
	c.rc.SetBody(rep.Body)
}

// authenticate checks the AuthToken header and the Basic pair (A.1).
func (s *Server) authenticate(c *call) (tenant.Principal, error) {
	h := &c.rc.Request.Header
	token := string(bytes.TrimSpace(h.Peek("AuthToken")))
	user, pass, reason := parseBasic(h.Peek(fasthttp.HeaderAuthorization))
	if token == "" {
		reason = msg.AuthNoToken
	}
	if reason != nil {
		return tenant.Principal{}, &credentialsError{reason: reason}
	}
	// Worked out only if authentication needs it (not for a cached pair).
	ctx := tenant.WithClientAddrFunc(c.ctx, func() string { return s.clientAddr(c.rc) })
	p, err := s.o.Tenants.Authenticate(ctx, token, user, pass)
	if err != nil {
		return tenant.Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	return p, nil
}

// clientAddr is the address a request comes from: its peer, or behind a
// trusted proxy the right-most X-Forwarded-For address that is not a
// trusted proxy's.
func (s *Server) clientAddr(rc *fasthttp.RequestCtx) string {
	peer, _ := netip.AddrFromSlice(rc.RemoteIP())
	peer = peer.Unmap()
	if !s.trusted(peer) {
		return peer.String()
	}
	var hops []string
	for _, v := range rc.Request.Header.PeekAll("X-Forwarded-For") {
		hops = append(hops, strings.Split(string(v), ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if a = a.Unmap(); !s.trusted(a) {
			return a.String()
		}
	}
	return peer.String()
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.o.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

const headerRequestID = "X-Request-Id"

// requestID returns a sane incoming X-Request-Id (1 to 128 characters of
// letters, digits and "-_.:") or a fresh one.
func (s *Server) requestID(rc *fasthttp.RequestCtx) string {
	if in := rc.Request.Header.Peek(headerRequestID); saneRequestID(in) {
		return string(in)
	}
	return s.idPrefix + strconv.FormatUint(s.idSeq.Add(1), 16)
}

func saneRequestID(b []byte) bool {
	if len(b) == 0 || len(b) > 128 {
		return false
	}
	for _, ch := range b {
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		case ch == '-', ch == '_', ch == '.', ch == ':':
		default:
			return false
		}
	}
	return true
}

// limitFor is the body limit of rt for a request of content type ct.
func (rt *route) limitFor(ct []byte) int {
	if rt.maxMultipart > 0 && isMultipart(ct) {
		return rt.maxMultipart
	}
	return rt.maxBody
}

func isMultipart[T string | []byte](ct T) bool {
	const mp = "multipart/form-data"
	return len(ct) >= len(mp) && strings.EqualFold(string(ct[:len(mp)]), mp)
}

// headerReceived picks the body limit of the route a request is for, before
// its body is read, so that an oversized body is refused unread, and gives
// the body ReadTimeout (the headers had HeaderTimeout).
func (s *Server) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	rt := s.match(h.Method(), h.RequestURI())
	if rt == nil {
		return fasthttp.RequestConfig{MaxRequestBodySize: noBodyLimit, ReadTimeout: s.o.ReadTimeout}
	}
	return fasthttp.RequestConfig{MaxRequestBodySize: rt.limitFor(h.ContentType()), ReadTimeout: s.o.ReadTimeout}
}

// match finds the route of method and a request URI without touching the
// router (the request context is not ready yet when headers arrive).
func (s *Server) match(method, uri []byte) *route {
	if i := bytes.IndexAny(uri, "?#"); i >= 0 {
		uri = uri[:i]
	}
	// An absolute URI ("http://host/path") keeps only its path.
	if !bytes.HasPrefix(uri, []byte("/")) {
		if i := bytes.Index(uri, []byte("://")); i >= 0 {
			rest := uri[i+3:]
			if j := bytes.IndexByte(rest, '/'); j >= 0 {
				uri = rest[j:]
			}
		}
	}
	for _, rt := range s.routes {
		if string(method) == rt.method && matchSegs(rt.segs, uri) {
			return rt
		}
	}
	return nil
}

func splitPattern(p string) []string {
	return strings.Split(strings.Trim(p, "/"), "/")
}

// matchSegs reports whether path matches the pattern segments, where a
// "{name}" segment matches any one non-empty segment.
func matchSegs(segs []string, path []byte) bool {
	path = bytes.TrimPrefix(path, []byte("/"))
	for i, seg := range segs {
		var cur []byte
		if j := bytes.IndexByte(path, '/'); j >= 0 {
			cur, path = path[:j], path[j+1:]
		} else {
			if i != len(segs)-1 {
				return false
			}
			cur, path = path, nil
		}
		if strings.HasPrefix(seg, "{") {
			if len(cur) == 0 {
				return false
			}
			continue
		}
		if string(cur) != seg {
			return false
		}
	}
	return len(path) == 0
}

// readError answers a request fasthttp could not read: too large a body is
// 413, a slow client 408, anything else 400, all in the A.7 form.
func (s *Server) readError(rc *fasthttp.RequestCtx, err error) {
	start := time.Now()
	reqID := s.requestID(rc)
	rc.Response.Header.Set(headerRequestID, reqID)
	rc.SetConnectionClose()
	var (
		ae    *apiError
		ne    net.Error
		small *fasthttp.ErrSmallBuffer
	)
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		ae = errTooLarge
		drainBody(rc)
	case errors.As(err, &small):
		ae = &apiError{status: fasthttp.StatusRequestHeaderFieldsTooLarge, msg: msg.HeadersTooLarge.With()}
	case errors.As(err, &ne) && ne.Timeout():
		ae = &apiError{status: fasthttp.StatusRequestTimeout, msg: msg.RequestTimeout.With()}
	default:
		ae = &apiError{status: fasthttp.StatusBadRequest, msg: msg.RequestUnreadable.With()}
		if name, reason := brokenHeader(err); !reason.IsZero() {
			ae.msg = msg.HeadersUnreadable.With()
			ae.fields = msg.One(name, reason)
		}
	}
	rt := s.match(rc.Request.Header.Method(), rc.Request.Header.RequestURI())
	writeAPIError(rc, rt, ae)
	m, method, pattern := s.unmatched, string(rc.Request.Header.Method()), unmatchedRoute
	if rt != nil {
		m, method, pattern = rt.m, rt.method, rt.pattern
	}
	d := time.Since(start)
	m.observe(rc.Response.StatusCode(), false, d)
	s.access(rc, method, pattern, reqID, tenant.Principal{}, d)
}

// expect answers "Expect: 100-continue": a declared body over the route's
// limit gets its 413 before the client sends it.
func (s *Server) expect(rc *fasthttp.RequestCtx) int {
	h := &rc.Request.Header
	rt := s.match(h.Method(), h.RequestURI())
	limit := noBodyLimit
	if rt != nil {
		limit = rt.limitFor(h.ContentType())
	}
	if h.ContentLength() > limit {
		s.readError(rc, fasthttp.ErrBodyTooLarge)
		return fasthttp.StatusRequestEntityTooLarge
	}
	return fasthttp.StatusContinue
}

// drainBody reads and drops what the client is still sending of a refused
// body (up to drainMax, while it keeps coming), so that it reaches the point
// of reading our 413 instead of finding the connection reset under it.
func drainBody(rc *fasthttp.RequestCtx) {
	const (
		drainMax  = 16 << 20
		drainIdle = 200 * time.Millisecond
	)
	n := rc.Request.Header.ContentLength()
	if n <= 0 || n > drainMax || rc.Request.MayContinue() {
		return
	}
	conn := rc.Conn()
	buf := make([]byte, 32<<10)
	for left := n; left > 0; {
		if err := conn.SetReadDeadline(time.Now().Add(drainIdle)); err != nil {
			return
		}
		k, err := conn.Read(buf[:min(len(buf), left)])
		left -= k
		if err != nil {
			return
		}
	}
}

func (s *Server) notFound(rc *fasthttp.RequestCtx) {
	s.plainError(rc, &apiError{status: fasthttp.StatusNotFound, msg: msg.RouteNotFound.With()})
}

func (s *Server) methodNotAllowed(rc *fasthttp.RequestCtx) {
	s.plainError(rc, &apiError{status: fasthttp.StatusMethodNotAllowed, msg: msg.MethodNotAllowed.With()})
}

func (s *Server) plainError(rc *fasthttp.RequestCtx, ae *apiError) {
	start := time.Now()
	reqID := s.requestID(rc)
	rc.Response.Header.Set(headerRequestID, reqID)
	if s.draining.Load() {
		rc.SetConnectionClose()
	}
	writeAPIError(rc, nil, ae)
	d := time.Since(start)
	s.unmatched.observe(rc.Response.StatusCode(), false, d)
	s.access(rc, string(rc.Method()), unmatchedRoute, reqID, tenant.Principal{}, d)
}

// adminHandler serves the admin listener.
func (s *Server) adminHandler(rc *fasthttp.RequestCtx) {
	if !rc.IsGet() && !rc.IsHead() {
		writeAPIError(rc, nil, &apiError{status: fasthttp.StatusMethodNotAllowed, msg: msg.MethodNotAllowed.With()})
		return
	}
	switch string(rc.Path()) {
	case "/healthz":
		writeJSON(rc, fasthttp.StatusOK, map[string]string{"status": "ok"})
	case "/readyz":
		s.readyz(rc)
	case "/metrics":
		s.promh(rc)
	default:
		writeAPIError(rc, nil, &apiError{status: fasthttp.StatusNotFound, msg: msg.RouteNotFound.With()})
	}
}

// The values of /readyz's status.
const (
	statusReady    = "ready"
	statusDegraded = "degraded"
	statusNotReady = "not ready"
)

// readyBody is /readyz's answer: the A.7 fields (on a 503) beside the
// overall status and each check's "ok" or "down: ...".
type readyBody struct {
	StatusCode int               `json:"statusCode,omitempty"`
	Code       string            `json:"code,omitempty"`
	Message    string            `json:"message,omitempty"`
	Errors     any               `json:"errors,omitempty"` // {} on a 503
	Status     string            `json:"status"`
	Checks     map[string]string `json:"checks"`
}

// readyz answers /readyz: 503 while draining or when a check the service
// cannot do without fails; 200 "degraded" when only checks with a fallback
// fail; 200 "ready" otherwise.
func (s *Server) readyz(rc *fasthttp.RequestCtx) {
	body := readyBody{Status: statusReady, Checks: map[string]string{}}
	var down []string
	if s.draining.Load() {
		body.Status = statusNotReady
		body.Code, body.Message = msg.Stopping.Code(), msg.Stopping.With().In(langOf(rc))
		body.Checks["shutdown"] = "draining"
	} else {
		for _, r := range s.runChecks() {
			body.Checks[r.name] = r.result
			if r.result == checkOK {
				continue
			}
			if r.degrades {
				if body.Status == statusReady {
					body.Status = statusDegraded
				}
				continue
			}
			body.Status = statusNotReady
			down = append(down, r.name)
		}
		if body.Status == statusNotReady {
			body.Code = msg.NotReady.Code()
			body.Message = msg.NotReady.With(strings.Join(down, ", ")).In(langOf(rc))
		}
	}
	if body.Status != statusNotReady {
		writeJSON(rc, fasthttp.StatusOK, body)
		return
	}
	body.StatusCode, body.Errors = fasthttp.StatusServiceUnavailable, map[string][]string{}
	rc.Response.Header.Set(fasthttp.HeaderRetryAfter, "5")
	writeJSON(rc, fasthttp.StatusServiceUnavailable, body)
}

const checkOK = "ok"

type checkResult struct {
	name, result string
	degrades     bool
}

// runChecks runs every readiness check at once, each under ReadyTimeout.
// A failure is logged with its cause; the answer says only "down" and
// whether it timed out, since a driver's error may quote a host or a URL.
func (s *Server) runChecks() []checkResult {
	checks := s.o.ReadyChecks
	if s.o.Ready != nil {
		checks = append([]ReadyCheck{{Name: "store", Check: s.o.Ready}}, checks...)
	}
	out := make([]checkResult, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), s.o.ReadyTimeout)
			defer cancel()
			out[i] = checkResult{name: c.Name, result: checkOK, degrades: c.Degrades}
			err := c.Check.Ready(ctx)
			if err == nil {
				return
			}
			out[i].result = "down: unreachable"
			if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
				out[i].result = "down: no answer within " + s.o.ReadyTimeout.String()
			}
			s.log.Warn("readiness check failed", "check", c.Name, "degrades", c.Degrades, "err", err)
		})
	}
	wg.Wait()
	return out
}

// register adds a route with its defaults: the JSON body limit, the
// request timeout.
func (s *Server) register(r Route) error {
	if r.Handle == nil || r.Method == "" || !strings.HasPrefix(r.Path, "/") {
		return fmt.Errorf("gateway: route %s %q needs a method, a path and a handler", r.Method, r.Path)
	}
	rt := &route{
		method:       r.Method,
		pattern:      r.Path,
		segs:         splitPattern(r.Path),
		public:       r.Public,
		maxBody:      r.MaxBody,
		maxMultipart: r.MaxMultipart,
		timeout:      r.Timeout,
		h:            r.Handle,
		audit:        r.Audit,
		m:            s.metrics.forRoute(r.Method, r.Path, r.Sheds),
		shape:        r.shape,
	}
	if rt.maxBody <= 0 {
		rt.maxBody = s.o.MaxJSONBody
	}
	if rt.timeout <= 0 {
		rt.timeout = s.o.RequestTimeout
	}
	s.routes = append(s.routes, rt)
	return nil
}

// fasthttpLogger sends fasthttp's own messages to slog. fasthttp's errors
// about unreadable requests quote the raw request bytes, headers included
// (AuthToken, Authorization: Basic): those quotes are cut off before
// anything is logged.
type fasthttpLogger struct{ l *slog.Logger }

func (f fasthttpLogger) Printf(format string, args ...any) {
	safe := make([]any, len(args))
	for i, a := range args {
		if err, ok := a.(error); ok {
			safe[i] = redactRequestBytes(err.Error(), true)
			continue
		}
		safe[i] = a
	}
	// One msg per line: fasthttp's text goes under its own key.
	f.l.Warn("http server", "detail", redactRequestBytes(fmt.Sprintf(format, safe...), false))
}

// redactRequestBytes keeps the part of a fasthttp message that says what
// went wrong and drops what could quote the request: everything from the
// first of "contents", "buffer size" or a header name that carries
// credentials, and in an error's own text also from its first double quote
// (fasthttp quotes request bytes with %q: "cannot find http request method
// in %q").
func redactRequestBytes(msg string, quotes bool) string {
	cut := len(msg)
	lower := strings.ToLower(msg)
	markers := []string{"contents", "buffer size", "authtoken", "authorization"}
	if quotes {
		markers = append(markers, `"`)
	}
	for _, marker := range markers {
		if i := strings.Index(lower, marker); i >= 0 && i < cut {
			cut = i
		}
	}
	if cut == len(msg) {
		return msg
	}
	return strings.TrimRight(msg[:cut], " ,:.") + " [request bytes redacted]"
}
