// Package openapicheck holds real calls to the service against its OpenAPI
// document: a test sends a request, reads the answer and asks a Checker
// whether both are what the document describes (path, parameters, body,
// status, the headers it names). It uses kin-openapi's validator, so that
// the document is read the way integrators' tools read it.
package openapicheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Checker checks calls against one OpenAPI document.
type Checker struct {
	doc    *openapi3.T
	router routers.Router
}

// New loads and validates an OpenAPI document (JSON or YAML).
func New(ctx context.Context, doc []byte) (*Checker, error) {
	l := openapi3.NewLoader()
	l.Context = ctx
	t, err := l.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	if err := t.Validate(ctx, openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is not valid: %w", err)
	}
	// Match paths whatever host the test server listens on.
	t.Servers = nil
	r, err := gorillamux.NewRouter(t)
	if err != nil {
		return nil, fmt.Errorf("route the OpenAPI document: %w", err)
	}
	return &Checker{doc: t, router: r}, nil
}

// Doc returns the loaded document.
func (c *Checker) Doc() *openapi3.T { return c.doc }

// ErrNotDescribed is returned for a call whose method and path the
// document does not describe.
var ErrNotDescribed = errors.New("the OpenAPI document does not describe this call")

// Call is one request and its answer.
type Call struct {
	Request     *http.Request // its Body is ignored: RequestBody is used
	RequestBody []byte
	Status      int
	Header      http.Header
	Body        []byte
}

// Check validates the answer of a call always, and its request when the
// service accepted it (a 2xx answer): a test may send a request the
// document forbids on purpose, and the service's 400 must still be
// described. Credentials are not checked (the service checks them).
func (c *Checker) Check(ctx context.Context, call Call) error {
	route, params, err := c.router.FindRoute(call.Request)
	if err != nil {
		return fmt.Errorf("%s %s: %w (%v)", call.Request.Method, call.Request.URL.Path, ErrNotDescribed, err)
	}
	opts := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
	req := call.Request.Clone(ctx)
	req.Body = io.NopCloser(bytes.NewReader(call.RequestBody))
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if call.Status/100 == 2 {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			return fmt.Errorf("%s %s: request: %w", call.Request.Method, call.Request.URL.Path, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: call.Status, Header: call.Header, Options: opts}
	out.SetBodyBytes(call.Body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return fmt.Errorf("%s %s: answer %d: %w", call.Request.Method, call.Request.URL.Path, call.Status, err)
	}
	return nil
}
