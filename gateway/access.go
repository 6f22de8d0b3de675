package gateway

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"facturad/tenant"
)

// unmatchedRoute is the route of a request no route matched, in the access
// log and the metrics.
const unmatchedRoute = "unmatched"

// access writes the access line of one request at info: method, route
// pattern, status, duration in milliseconds, request id, the caller's
// user, company and branch when known (a branch user's own, else those the
// path names), and the body bytes in and out. A
// 2xx or 3xx line is written for the fraction Options.AccessLogSample of
// requests; every other status always is.
func (s *Server) access(rc *fasthttp.RequestCtx, method, route, reqID string, p tenant.Principal, d time.Duration) {
	status := rc.Response.StatusCode()
	if status < 400 && !s.sampled() {
		return
	}
	ctx := context.Background() // the id is written below, not taken from a context
	if !s.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 11)
	attrs = append(attrs,
		slog.String("method", method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.String("request_id", reqID),
		slog.Int("bytes_in", len(rc.Request.Body())),
		slog.Int("bytes_out", len(rc.Response.Body())),
	)
	if p.Username != "" {
		attrs = append(attrs, slog.String("user", p.Username))
	}
	company, branch := p.CompanyID, p.BranchID
	if company == 0 {
		// An admin or a reseller (or a caller not authenticated) names
		// the company and branch it acts on in the path.
		company, branch = pathID(rc, "companyId"), pathID(rc, "branchId")
	}
	if company != 0 {
		attrs = append(attrs, slog.Int64("company", company))
	}
	if branch != 0 {
		attrs = append(attrs, slog.Int64("branch", branch))
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "access", attrs...)
}

// pathID is the value of the matched route's path parameter name when it
// is a positive id, else 0 (absent, or not a number: the call answers 400).
func pathID(rc *fasthttp.RequestCtx, name string) int64 {
	v, ok := rc.UserValue(name).(string)
	if !ok {
		return 0
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}

// sampled reports whether a 2xx or 3xx request's line is written.
func (s *Server) sampled() bool {
	switch f := s.o.AccessLogSample; {
	case f >= 1:
		return true
	case f <= 0:
		return false
	default:
		return rand.Float64() < f
	}
}
