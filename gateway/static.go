package gateway

import (
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
	serve := func(ct string, body []byte) handlerFunc {
		return func(c *call) error {
			c.rc.SetStatusCode(fasthttp.StatusOK)
			c.rc.SetContentType(ct)
			c.rc.SetBody(body)
			return nil
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
