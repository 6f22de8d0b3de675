package gateway

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"facturad/docs/examples"
	"facturad/hacienda"
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
// of docs/examples as the send and calculate calls' examples.
func OpenAPI() ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIJSON, &doc); err != nil {
		return nil, fmt.Errorf("gateway: read the OpenAPI document: %w", err)
	}
	served, err := servedExamples()
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	for _, path := range []string{"/api/documents/v4", "/api/documents/calculate/v4"} {
		content, ok := dig(doc, "paths", path, "post", "requestBody", "content", "application/json")
		if !ok {
			return nil, fmt.Errorf("gateway: the OpenAPI document has no JSON body for POST %s", path)
		}
		content["examples"] = served
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("gateway: write the OpenAPI document: %w", err)
	}
	return b, nil
}

// servedExamples are the files of docs/examples as OpenAPI examples. A
// body that refers to another example's document holds placeholders
// there; served, they are a sample clave and date of the right shape, and
// the example's description says what to put in their place.
func servedExamples() (map[string]any, error) {
	all, err := examples.All()
	if err != nil {
		return nil, err
	}
	samples := map[string]string{}
	for i, ex := range all {
		var head struct {
			Tipo string `json:"tipo_documento"`
		}
		if err := json.Unmarshal(ex.Body, &head); err != nil {
			return nil, fmt.Errorf("example %s: %w", ex.Name, err)
		}
		samples[ex.Name] = sampleClave(head.Tipo, i+1)
	}
	out := make(map[string]any, len(all))
	for _, ex := range all {
		body, err := examples.Fill(ex.Body, samples)
		if err != nil {
			return nil, fmt.Errorf("example %s: %w", ex.Name, err)
		}
		e := map[string]any{"summary": ex.Summary, "value": json.RawMessage(body)}
		if len(ex.Needs) > 0 {
			e["description"] = fmt.Sprintf("%s. The informacionReferencia entry refers to the document sent from the %s example: "+
				"its numero and fechaEmisionIR hold a sample clave and date here. Put the clave of your own document "+
				"(the clave of its send answer) and its issue date in their place: the tax authority refuses a "+
				"reference to a document it never received.", ex.Summary, strings.Join(ex.Needs, " and "))
		}
		out[ex.Name] = e
	}
	return out, nil
}

// sampleClave is a well-formed clave of document type tipo, number n, of
// the examples' company (cédula jurídica 3101123456), branch 001 and
// terminal 00001, issued on 21 November 2026 in normal situation.
func sampleClave(tipo string, n int) string {
	return hacienda.Clave{
		Date:         time.Date(2026, time.November, 21, 0, 0, 0, 0, hacienda.CostaRica),
		IssuerID:     "003101123456",
		Consecutivo:  hacienda.Consecutivo{Branch: "001", Terminal: "00001", DocType: tipo, Number: int64(n)},
		Situacion:    hacienda.SituacionNormal,
		SecurityCode: "00000001",
	}.String()
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

// staticRoutes serve the OpenAPI document and the page for people, to
// anyone.
func staticRoutes() ([]Route, error) {
	openapi, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	serve := func(ct string, body []byte) Handler {
		return func(context.Context, *Request) (Reply, error) {
			return Reply{Body: body, ContentType: ct}, nil
		}
	}
	return []Route{
		{Method: http.MethodGet, Path: "/openapi.json", MaxBody: noBodyLimit, Public: true, Handle: serve("application/json; charset=utf-8", openapi)},
		{Method: http.MethodGet, Path: "/docs", MaxBody: noBodyLimit, Public: true, Handle: serve("text/html; charset=utf-8", docsHTML)},
	}, nil
}
