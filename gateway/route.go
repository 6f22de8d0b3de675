package gateway

import (
	"context"
	"io"
	"net/url"
	"time"

	"facturad/hacienda/msg"
	"facturad/tenant"
)

// Route is an API route. Every route is one: the gateway's own (the
// tenancy calls, /openapi.json and /docs) and those added through
// Options.Routes (the document, received-document, listing and delivery
// calls, the tax authority's callback) are registered and served alike:
// authenticated unless Public, within their body limit, Handle under the
// route's own timeout.
type Route struct {
	// Method is the HTTP method (GET, POST, PUT...).
	Method string
	// Path is a fasthttp/router pattern such as "/api/documents/{clave}/v4".
	// Parameter names at one position must agree with the other routes'
	// (the router refuses two names there): {companyId}, {branchId},
	// {userId}, {clave}.
	Path string
	// MaxBody is the body limit in bytes; 0 means Options.MaxJSONBody.
	MaxBody int
	// MaxMultipart is the body limit of a multipart/form-data body (a
	// company form with its certificate); 0 means MaxBody.
	MaxMultipart int
	// Timeout bounds Handle; 0 means Options.RequestTimeout.
	Timeout time.Duration
	// Public serves the route without authentication (r.Principal is the
	// zero value): for callers that hold no API credentials, such as the
	// tax authority's callbacks, which the handler must authenticate
	// itself.
	Public bool
	// Handle answers the request.
	Handle Handler
	// Audit, when set, names the change the route makes (a tenant.Audit*
	// action such as "webhook.crear"): every answer of it in 2xx is
	// recorded in the audit log (A.14) with the caller, the request id,
	// the company changed (the path's {companyId}, unless the handler
	// names another with Request.Changed) and the names of the request's
	// fields. Every route that changes a tenant's configuration sets it;
	// docs/design/audit.md lists the actions and the routes that record
	// none.
	Audit string
	// Sheds marks a route that refuses work because of load as a matter
	// of course (a branch's lane, a bound on heavy work): its
	// status="shed" request counter exists from the start, at zero, as
	// its 2xx, 4xx and 5xx do. Any route may answer a shed 503 (every slow
	// password check busy); on the others that counter appears with the
	// first.
	Sheds bool

	// shape, when set, prepares the call's error shapes (call.a6 and the
	// conflict field) before anything can fail: the tenancy calls that
	// answer a 500 with their own body (A.6).
	shape func(c *call)
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
	// Lang is the language the caller asked for (Accept-Language:
	// Spanish for es and es-*, English otherwise): what the reply says to
	// people is said in it.
	Lang msg.Lang

	// changed is what the handler told the audit log (Changed).
	changed *auditNote
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
	// Header holds further headers of the answer, by name.
	Header map[string]string

	// Stream, when set, writes the body instead of JSON or Body, after the
	// handler has returned and the status and headers are sent: a body
	// too large to hold (an export), sent chunked as Stream writes it.
	// Stream runs outside the route's Timeout, with a context that keeps
	// the request id and ends when the server's Shutdown gives up waiting
	// (not when the handler returns); the server's WriteTimeout bounds
	// each write to the connection, not the whole body, so a client that
	// keeps reading gets a body of any length and one that stops is cut
	// off after WriteTimeout. A Stream that returns an error ends the body
	// without its closing chunk and closes the connection, so that the
	// client sees a truncated answer rather than a complete one; what it
	// wrote before is sent. Stream must return when a write to w fails.
	Stream func(ctx context.Context, w io.Writer) error
	// Release, when set, is called exactly once when the reply is done
	// with, whether Stream ran or not (the connection may close before
	// the body is written): it frees what the handler held for Stream.
	Release func()
}
