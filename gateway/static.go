package gateway

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/valyala/fasthttp"

	"facturad/docs/examples"
)

// The public description of the API: an OpenAPI 3 document kept by hand
// beside the handlers, and a short page for people.
var (
	//go:embed static/openapi.json
	openAPIJSON []byte
	//go:embed static/docs.html
	docsHTML []byte
)

// OpenAPI returns the OpenAPI document the service serves at
// /openapi.json: the one kept beside the handlers with the request bodies
// of docs/examples as the send call's examples.
func OpenAPI() ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIJSON, &doc); err != nil {
		return nil, fmt.Errorf("gateway: read the OpenAPI document: %w", err)
	}
	all, err := examples.All()
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	content, ok := dig(doc, "paths", "/api/documents/v4", "post", "requestBody", "content", "application/json")
	if !ok {
		return nil, fmt.Errorf("gateway: the OpenAPI document has no JSON body for the send call")
	}
	out := make(map[string]any, len(all))
	for _, ex := range all {
		out[ex.Name] = map[string]any{"summary": ex.Summary, "value": json.RawMessage(ex.Body)}
	}
	content["examples"] = out
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("gateway: write the OpenAPI document: %w", err)
	}
	return b, nil
}

// dig walks nested JSON objects by key.
func dig(m map[string]any, keys ...string) (map[string]any, bool) {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}

func (s *Server) registerStatic() error {
	openapi, err := OpenAPI()
	if err != nil {
		return err
	}
	serve := func(ct string, body []byte) Handler {
		return func(context.Context, *Request) (Reply, error) {
			return Reply{Body: body, ContentType: ct}, nil
		}
	}
	for _, r := range []struct {
		path, ct string
		body     []byte
	}{
		{"/openapi.json", "application/json; charset=utf-8", openapi},
		{"/docs", "text/html; charset=utf-8", docsHTML},
	} {
		rt := s.handle(fasthttp.MethodGet, r.path, noBodyLimit, 0, serve(r.ct, r.body))
		rt.public = true
	}
	return nil
}
