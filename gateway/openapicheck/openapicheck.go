// Package openapicheck holds real calls to the service against its OpenAPI
// document: a test sends a request, reads the answer and asks a Checker
// whether both are what the document describes (path, parameters, body,
// status, the headers it names). It uses kin-openapi's validator, so that
// the document is read the way integrators' tools read it.
package openapicheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

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

// registerDownloads teaches the validator to read the downloads' bodies,
// the XML documents and the PDF, as strings (their schema is a string).
var registerDownloads = sync.OnceFunc(func() {
	text := func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(body)
		return string(b), err
	}
	openapi3filter.RegisterBodyDecoder("application/xml", text)
	openapi3filter.RegisterBodyDecoder("application/pdf", text)
})

// New loads and validates an OpenAPI document (JSON or YAML).
func New(ctx context.Context, doc []byte) (*Checker, error) {
	registerDownloads()
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
//
// The contract matches input field names without regard to case, so a
// JSON request body's names are first given the document's spelling. A
// multipart form's body is not checked (its field names match without
// regard to case too, which the validator's form reader cannot follow).
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
	body := call.RequestBody
	mediaType, _, _ := mime.ParseMediaType(call.Request.Header.Get("Content-Type"))
	switch {
	case mediaType == "multipart/form-data":
		opts.ExcludeRequestBody = true
	case mediaType == "application/json" && route.Operation.RequestBody != nil:
		if mt := route.Operation.RequestBody.Value.Content.Get(mediaType); mt != nil {
			body = canonicalNames(body, mt.Schema)
		}
	}
	req := call.Request.Clone(ctx)
	req.Body = io.NopCloser(bytes.NewReader(body))
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

// canonicalNames rewrites a JSON body's object keys that match a property
// of their schema without regard to case to the schema's spelling, as the
// service reads them. A body that is not JSON is returned as is, for the
// validator to report.
func canonicalNames(body []byte, schema *openapi3.SchemaRef) []byte {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return body
	}
	out, err := json.Marshal(canonical(v, schema))
	if err != nil {
		return body
	}
	return out
}

func canonical(v any, ref *openapi3.SchemaRef) any {
	if ref == nil || ref.Value == nil {
		return v
	}
	// The schema and the alternatives it is composed of.
	schemas := []*openapi3.Schema{ref.Value}
	for _, list := range [][]*openapi3.SchemaRef{ref.Value.AllOf, ref.Value.OneOf, ref.Value.AnyOf} {
		for _, r := range list {
			if r.Value != nil {
				schemas = append(schemas, r.Value)
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			name, prop := k, (*openapi3.SchemaRef)(nil)
		find:
			for _, s := range schemas {
				for p, r := range s.Properties {
					if strings.EqualFold(p, k) {
						name, prop = p, r
						break find
					}
				}
			}
			if _, taken := out[name]; taken && name != k {
				name = k // two spellings of one field: keep both for the validator
			}
			out[name] = canonical(x, prop)
		}
		return out
	case []any:
		var items *openapi3.SchemaRef
		for _, s := range schemas {
			if s.Items != nil {
				items = s.Items
				break
			}
		}
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = canonical(x, items)
		}
		return out
	}
	return v
}
