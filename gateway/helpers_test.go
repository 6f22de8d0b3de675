package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"facturad/gateway/openapicheck"
	"facturad/hacienda/msg"
)

// testBundle is a Server on in-memory listeners with clients for both.
type testBundle struct {
	srv    *Server
	reg    *prometheus.Registry
	logs   *syncBuffer
	api    *fasthttp.Client
	admin  *fasthttp.Client
	apiLn  *fasthttputil.InmemoryListener
	served chan error
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// setup starts a Server with o (Tenants must be set) and stops it at the
// end of the test.
func setup(t testing.TB, o Options) *testBundle {
	t.Helper()
	b := &testBundle{reg: prometheus.NewRegistry(), logs: &syncBuffer{}, served: make(chan error, 2)}
	o.Registerer = b.reg
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewJSONHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	b.srv = srv
	b.apiLn = fasthttputil.NewInmemoryListener()
	adminLn := fasthttputil.NewInmemoryListener()
	go func() { b.served <- srv.Serve(b.apiLn) }()
	go func() { b.served <- srv.ServeAdmin(adminLn) }()
	b.api = &fasthttp.Client{Dial: func(string) (net.Conn, error) { return b.apiLn.Dial() }, ReadTimeout: 10 * time.Second}
	b.admin = &fasthttp.Client{Dial: func(string) (net.Conn, error) { return adminLn.Dial() }, ReadTimeout: 10 * time.Second}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return b
}

// creds are the two headers of one API user.
type creds struct{ token, user, pass string }

// reply is an answer read back.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request. body may be nil; ct is its content type.
func (b *testBundle) do(t testing.TB, method, path string, c *creds, ct string, body []byte, hdr ...string) reply {
	t.Helper()
	return doWith(t, b.api, method, path, c, ct, body, hdr...)
}

func doWith(t testing.TB, cl *fasthttp.Client, method, path string, c *creds, ct string, body []byte, hdr ...string) reply {
	t.Helper()
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://facturad.test" + path)
	req.Header.Set("accept", "text/plain")
	if c != nil {
		req.Header.Set("AuthToken", c.token)
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(c.user+":"+c.pass)))
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if body != nil {
		req.Header.SetContentType(ct)
		req.SetBody(body)
	}
	if err := cl.DoTimeout(req, resp, 20*time.Second); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	r := reply{status: resp.StatusCode(), header: http.Header{}, body: append([]byte(nil), resp.Body()...)}
	for k, v := range resp.Header.All() {
		r.header.Add(string(k), string(v))
	}
	checkCall(t, method, path, ct, body, r)
	return r
}

// openAPIChecker holds every call of the gateway's tests to the OpenAPI
// document, loaded once.
var openAPIChecker = sync.OnceValues(func() (*openapicheck.Checker, error) {
	b, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	return openapicheck.New(context.Background(), b)
})

// checkCall checks one call of a test against the OpenAPI document: the
// answer always, the request when the service accepted it. Calls the
// document does not describe (the probes, deliberately unknown paths and
// methods) are not checked.
func checkCall(t testing.TB, method, path, ct string, body []byte, r reply) {
	t.Helper()
	c, err := openAPIChecker()
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, "http://facturad.test"+path, nil)
	if err != nil {
		return // a deliberately malformed target
	}
	if body != nil {
		req.Header.Set("Content-Type", ct)
	}
	err = c.Check(context.Background(), openapicheck.Call{Request: req, RequestBody: body, Status: r.status, Header: r.header, Body: r.body})
	if err != nil && !errors.Is(err, openapicheck.ErrNotDescribed) {
		t.Errorf("the call disagrees with /openapi.json: %v", err)
	}
}

// object decodes a JSON object answer.
func (r reply) object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil || m == nil {
		t.Fatalf("answer is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// array decodes a JSON array answer of objects.
func (r reply) array(t testing.TB) []map[string]any {
	t.Helper()
	var a []map[string]any
	if err := json.Unmarshal(r.body, &a); err != nil || a == nil {
		t.Fatalf("answer is not a JSON array: %v: %s", err, r.body)
	}
	return a
}

// jsonKind names the JSON types of the contract's fields.
type jsonKind int

const (
	kString jsonKind = iota
	kInt
	kBool
	kDate // a "2006-01-02T15:04:05" local date-time string
	kFlag // "S" or "N"
	kStringOrNull
	kObject
	kArray
	kNumber
	kNumberOrNull
)

// requireShape fails unless every key of shape is present in m with its
// JSON type.
func requireShape(t testing.TB, what string, m map[string]any, shape map[string]jsonKind) {
	t.Helper()
	for k, kind := range shape {
		v, ok := m[k]
		if !ok {
			t.Errorf("%s: contract field %q missing in %v", what, k, m)
			continue
		}
		if err := checkKind(v, kind); err != nil {
			t.Errorf("%s: field %q = %#v: %v", what, k, v, err)
		}
	}
}

func checkKind(v any, kind jsonKind) error {
	switch kind {
	case kString:
		if _, ok := v.(string); !ok {
			return errors.New("want a string")
		}
	case kStringOrNull:
		if _, ok := v.(string); !ok && v != nil {
			return errors.New("want a string or null")
		}
	case kInt:
		f, ok := v.(float64)
		if !ok || f != float64(int64(f)) {
			return errors.New("want an integer")
		}
	case kObject:
		if _, ok := v.(map[string]any); !ok {
			return errors.New("want an object")
		}
	case kArray:
		if _, ok := v.([]any); !ok {
			return errors.New("want an array")
		}
	case kNumber, kNumberOrNull:
		if _, ok := v.(float64); !ok && !(kind == kNumberOrNull && v == nil) {
			return errors.New("want a number")
		}
	case kBool:
		if _, ok := v.(bool); !ok {
			return errors.New("want a boolean")
		}
	case kFlag:
		if s, ok := v.(string); !ok || (s != "S" && s != "N") {
			return errors.New(`want "S" or "N"`)
		}
	case kDate:
		s, ok := v.(string)
		if !ok {
			return errors.New("want a date-time string")
		}
		if _, err := time.Parse("2006-01-02T15:04:05", s); err != nil {
			return fmt.Errorf("want a local date-time without zone: %v", err)
		}
	}
	return nil
}

// requireA7 checks the A.7 form of a non-500 answer and returns its errors.
func requireA7(t testing.TB, r reply, status int) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	m := r.object(t)
	requireShape(t, "error body", m, map[string]jsonKind{"statusCode": kInt, "code": kString, "message": kString})
	if got, _ := m["statusCode"].(float64); int(got) != status {
		t.Errorf("statusCode %v, want %d", m["statusCode"], status)
	}
	if code, _ := m["code"].(string); msg.Lookup(code) == nil || msg.Lookup(code).Kind() != msg.Answer {
		t.Errorf("code %q is no answer code of the catalogue", m["code"])
	}
	errs, ok := m["errors"].(map[string]any)
	if !ok {
		t.Fatalf("errors is not an object: %s", r.body)
	}
	return errs
}

// requireField fails unless errs names field.
func requireField(t testing.TB, errs map[string]any, field string) {
	t.Helper()
	msgs, ok := errs[field].([]any)
	if !ok || len(msgs) == 0 {
		t.Fatalf("no error on field %q in %v", field, errs)
	}
}

// multipartBody builds a multipart form with text fields and files.
func multipartBody(t testing.TB, values map[string]string, files map[string][]byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range values {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for k, data := range files {
		fw, err := w.CreateFormFile(k, k+".p12")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(fw, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), buf.Bytes()
}
