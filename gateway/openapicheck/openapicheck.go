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
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
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
// JSON request body's names are first given the document's spelling; a
// form's (multipart or URL-encoded) likewise, and every form field must be
// one the document names. A JSON answer may hold no field its schema does
// not name: the document cannot fall behind what the service writes.
func (c *Checker) Check(ctx context.Context, call Call) error {
	route, params, err := c.router.FindRoute(call.Request)
	if err != nil {
		return fmt.Errorf("%s %s: %w (%v)", call.Request.Method, call.Request.URL.Path, ErrNotDescribed, err)
	}
	at := call.Request.Method + " " + call.Request.URL.Path
	opts := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
	body := call.RequestBody
	ct := call.Request.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(ct)
	var described *openapi3.MediaType
	if route.Operation.RequestBody != nil && mediaType != "" {
		described = route.Operation.RequestBody.Value.Content.Get(mediaType)
	}
	form := mediaType == "multipart/form-data" || mediaType == "application/x-www-form-urlencoded"
	switch {
	case form:
		// Read here: the validator's form reader matches names exactly.
		opts.ExcludeRequestBody = true
	case mediaType == "application/json" && described != nil:
		body = canonicalNames(body, described.Schema)
	}
	req := call.Request.Clone(ctx)
	req.Body = io.NopCloser(bytes.NewReader(body))
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if call.Status/100 == 2 {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			return fmt.Errorf("%s: request: %w", at, err)
		}
		if form {
			if described == nil || described.Schema == nil {
				return fmt.Errorf("%s: request: the document describes no %s body", at, mediaType)
			}
			if err := checkForm(ct, mediaType, body, described.Schema); err != nil {
				return fmt.Errorf("%s: request: %w", at, err)
			}
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: call.Status, Header: call.Header, Options: opts}
	out.SetBodyBytes(call.Body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return fmt.Errorf("%s: answer %d: %w", at, call.Status, err)
	}
	if err := strictAnswer(route.Operation, call); err != nil {
		return fmt.Errorf("%s: answer %d: %w", at, call.Status, err)
	}
	return nil
}

// checkForm validates a form body (multipart/form-data, its files read as
// their content, or application/x-www-form-urlencoded) against schema:
// each field name is given the schema's spelling without regard to case,
// and a name the schema does not have is an error. A field sent twice
// counts once, as the service reads it.
func checkForm(ct, mediaType string, body []byte, schema *openapi3.SchemaRef) error {
	values := map[string]string{}
	switch mediaType {
	case "multipart/form-data":
		_, params, err := mime.ParseMediaType(ct)
		if err != nil {
			return fmt.Errorf("content type: %w", err)
		}
		f, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(int64(len(body)) + 1)
		if err != nil {
			return fmt.Errorf("read the form: %w", err)
		}
		defer func() { _ = f.RemoveAll() }()
		for k, vs := range f.Value {
			if len(vs) > 0 {
				values[k] = vs[0]
			}
		}
		for k, fhs := range f.File {
			if len(fhs) == 0 {
				continue
			}
			r, err := fhs[0].Open()
			if err != nil {
				return fmt.Errorf("read the form's %s: %w", k, err)
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				return fmt.Errorf("read the form's %s: %w", k, err)
			}
			values[k] = string(b)
		}
	default:
		vs, err := url.ParseQuery(string(body))
		if err != nil {
			return fmt.Errorf("read the form: %w", err)
		}
		for k, v := range vs {
			if len(v) > 0 {
				values[k] = v[len(v)-1]
			}
		}
	}
	obj := map[string]any{}
	var errs []error
	for k, v := range values {
		name := ""
		for p := range schema.Value.Properties {
			if strings.EqualFold(p, k) {
				name = p
			}
		}
		if name == "" {
			errs = append(errs, fmt.Errorf("form field %q is not described", k))
			continue
		}
		obj[name] = v
	}
	if err := schema.Value.VisitJSON(obj, openapi3.MultiErrors()); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// strictAnswer fails a JSON answer that holds a field its schema does not
// name (where the schema does not allow other fields).
func strictAnswer(op *openapi3.Operation, call Call) error {
	mediaType, _, _ := mime.ParseMediaType(call.Header.Get("Content-Type"))
	if mediaType != "application/json" || len(bytes.TrimSpace(call.Body)) == 0 {
		return nil
	}
	r := op.Responses.Status(call.Status)
	if r == nil {
		r = op.Responses.Default()
	}
	if r == nil || r.Value == nil {
		return nil
	}
	mt := r.Value.Content.Get(mediaType)
	if mt == nil || mt.Schema == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(call.Body, &v); err != nil {
		return fmt.Errorf("the answer is not JSON: %w", err)
	}
	var extra []string
	undescribed(v, mt.Schema, "", &extra)
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("fields the document does not describe: %s", strings.Join(extra, ", "))
	}
	return nil
}

// undescribed adds to extra the path of each object field of v that
// schema, with its compositions, does not name.
func undescribed(v any, ref *openapi3.SchemaRef, path string, extra *[]string) {
	if ref == nil || ref.Value == nil || v == nil {
		return
	}
	schemas := flatten(v, ref.Value)
	switch v := v.(type) {
	case map[string]any:
		props := map[string]*openapi3.SchemaRef{}
		var additional *openapi3.SchemaRef
		open := false
		for _, s := range schemas {
			for name, p := range s.Properties {
				if _, ok := props[name]; !ok {
					props[name] = p
				}
			}
			if s.AdditionalProperties.Schema != nil {
				additional = s.AdditionalProperties.Schema
			}
			if s.AdditionalProperties.Has != nil && *s.AdditionalProperties.Has {
				open = true
			}
		}
		for k, x := range v {
			switch p, ok := props[k]; {
			case ok:
				undescribed(x, p, path+"."+k, extra)
			case additional != nil:
				undescribed(x, additional, path+"."+k, extra)
			case !open:
				*extra = append(*extra, strings.TrimPrefix(path+"."+k, "."))
			}
		}
	case []any:
		for _, s := range schemas {
			if s.Items != nil {
				for i, x := range v {
					undescribed(x, s.Items, fmt.Sprintf("%s[%d]", path, i), extra)
				}
				return
			}
		}
	}
}

// flatten returns s and what it is composed of that applies to v: every
// allOf member, and the oneOf and anyOf alternatives v validates against
// (all of them when none does).
func flatten(v any, s *openapi3.Schema) []*openapi3.Schema {
	out := []*openapi3.Schema{s}
	for _, r := range s.AllOf {
		if r.Value != nil {
			out = append(out, flatten(v, r.Value)...)
		}
	}
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		var match []*openapi3.Schema
		for _, r := range alts {
			if r.Value != nil && r.Value.VisitJSON(v) == nil {
				match = append(match, flatten(v, r.Value)...)
			}
		}
		if len(match) == 0 {
			for _, r := range alts {
				if r.Value != nil {
					match = append(match, flatten(v, r.Value)...)
				}
			}
		}
		out = append(out, match...)
	}
	return out
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

// Transport returns an http.RoundTripper that makes each call through base
// (http.DefaultTransport when nil) and gives report what Check finds wrong
// with it, so that every call of a client under test is held to the
// document. Calls the document does not describe are not reported (a
// test may probe paths it does not name); a failed round trip is returned
// as it is.
func (c *Checker) Transport(base http.RoundTripper, report func(error)) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{c: c, base: base, report: report}
}

type transport struct {
	c      *Checker
	base   http.RoundTripper
	report func(error)
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	err = t.c.Check(req.Context(), Call{Request: req, RequestBody: body, Status: resp.StatusCode, Header: resp.Header, Body: answer})
	if err != nil && !errors.Is(err, ErrNotDescribed) {
		t.report(fmt.Errorf("the call disagrees with the OpenAPI document: %w", err))
	}
	return resp, nil
}
