package gateway

import (
	"context"
	_ "embed"

	"github.com/valyala/fasthttp"
)

// The public description of the API: an OpenAPI 3 document kept by hand
// beside the handlers, and a short page for people.
var (
	//go:embed static/openapi.json
	openAPIJSON []byte
	//go:embed static/docs.html
	docsHTML []byte
)

func (s *Server) registerStatic() {
	serve := func(ct string, body []byte) Handler {
		return func(context.Context, *Request) (Reply, error) {
			return Reply{Body: body, ContentType: ct}, nil
		}
	}
	for _, r := range []struct {
		path, ct string
		body     []byte
	}{
		{"/openapi.json", "application/json; charset=utf-8", openAPIJSON},
		{"/docs", "text/html; charset=utf-8", docsHTML},
	} {
		rt := s.handle(fasthttp.MethodGet, r.path, noBodyLimit, 0, serve(r.ct, r.body))
		rt.public = true
	}
}
