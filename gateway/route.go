package gateway

import (
	"context"
	"net/url"
	"time"

	"facturad/tenant"
)

// Route is an extra API route, the extension point for the document calls
// of A.5 and the tax authority's callback. It is served exactly like a
// built-in route: authenticated unless Public, Handle under the route's
// own timeout.
type Route struct {
	// Method is the HTTP method (GET, POST, PUT...).
	Method string
	// Path is a fasthttp/router pattern such as "/api/documents/{clave}/v4".
	// Parameter names at one position must agree with the built-in routes'
	// (none of which start with /api/documents).
	Path string
	// MaxBody is the body limit in bytes; 0 means Options.MaxJSONBody.
	MaxBody int
	// Timeout bounds Handle; 0 means Options.RequestTimeout.
	Timeout time.Duration
	// Public serves the route without authentication (r.Principal is the
	// zero value): for callers that hold no API credentials, such as the
	// tax authority's callbacks, which the handler must authenticate
	// itself.
	Public bool
	// Handle answers the request.
	Handle Handler
}

// Handler answers one call: every route, the built-in ones and those added
// through Options.Routes, has this signature. The gateway has authenticated
// the caller (unless the route is Public), enforced the body limit and
// copied what the handler needs into r; a returned error is mapped to the
// contract's error form (see docs/design/gateway.md), a Reply is written as
// given.
type Handler func(ctx context.Context, r *Request) (Reply, error)

// Request is what a Route handler receives. It owns every field: nothing
// refers to the connection's buffers.
type Request struct {
	Principal   tenant.Principal
	RequestID   string
	Params      map[string]string // the path parameters by pattern name
	Query       url.Values
	ContentType string
	Body        []byte
}

// Reply is a Route handler's answer. When Body is nil, JSON is encoded as the
// body with content type application/json.
type Reply struct {
	Status      int // 0 means 200
	JSON        any
	Body        []byte
	ContentType string // for Body; default application/octet-stream
	// Disposition is sent as the Content-Disposition header with Body when
	// not empty (a download's file name).
	Disposition string
}
