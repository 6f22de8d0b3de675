package gateway

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/valyala/fasthttp"

	"facturad/tenant"
)

// unmatchedRoute is the route of a request no route matched, in the access
// log and the metrics.
const unmatchedRoute = "unmatched"

// access writes the access line of one request at info: method, route
// pattern, status, duration in milliseconds, request id, the caller's
// user, company and branch when known, and the body bytes in and out. A
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
	if p.CompanyID != 0 {
		attrs = append(attrs, slog.Int64("company", p.CompanyID))
	}
	if p.BranchID != 0 {
		attrs = append(attrs, slog.Int64("branch", p.BranchID))
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "access", attrs...)
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
