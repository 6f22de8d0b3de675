package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// Server is a Sandbox listening on an address.
type Server struct {
	*Sandbox
	srv *http.Server
	ln  net.Listener
	url string
	err chan error
}

// Listen starts a sandbox on addr ("127.0.0.1:0" picks a free port) and
// serves it until Close.
func Listen(addr string, o Options) (*Server, error) {
	sb, err := New(o)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sandbox: listen on %s: %w", addr, err)
	}
	s := &Server{
		Sandbox: sb,
		srv: &http.Server{
			Handler:           sb.Handler(),
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       60 * time.Second,
			IdleTimeout:       120 * time.Second,
			ErrorLog:          log.New(errorLog{sb.log}, "", 0),
		},
		ln:  ln,
		url: "http://" + ln.Addr().String(),
		err: make(chan error, 1),
	}
	go func() { s.err <- s.srv.Serve(ln) }()
	return s, nil
}

// errorLog is the HTTP server's ErrorLog: each of net/http's own messages
// (a panic in a handler, a failed TLS handshake, an accept error) becomes one
// line of the sandbox's logger, "http server" with the text under detail,
// rather than a plain line on standard error.
type errorLog struct{ l *slog.Logger }

func (e errorLog) Write(p []byte) (int, error) {
	e.l.Warn("http server", "detail", strings.TrimSpace(string(p)))
	return len(p), nil
}

// APIURL is the reception API's base URL.
func (s *Server) APIURL() string { return s.url + s.opts.BasePath }

// TokenURL is the token endpoint's URL.
func (s *Server) TokenURL() string { return s.url + s.tokenPath }

// RegistryURL is the base URL of the simulated public registry API (the
// counterpart of https://api.hacienda.go.cr): the server's root.
func (s *Server) RegistryURL() string { return s.url }

// Close stops the server, waiting for running calls until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	s.Sandbox.Close()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.err; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// ListenAndServe runs a sandbox on addr until ctx ends, then shuts it down
// gracefully (within ten seconds). It is what `facturad sandbox` runs.
func ListenAndServe(ctx context.Context, addr string, o Options) error {
	s, err := Listen(addr, o)
	if err != nil {
		return err
	}
	s.log.InfoContext(ctx, "tax-authority sandbox listening", "api", s.APIURL(), "token", s.TokenURL(), "registry", s.RegistryURL())
	select {
	case <-ctx.Done():
	case err := <-s.err:
		s.err <- err
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return s.Close(shut)
}

// TB is the part of testing.TB NewTestServer uses.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// TestServer is a sandbox on a loopback port for tests, closed when the
// test ends.
type TestServer struct {
	*Sandbox
	// URL is the root (http://127.0.0.1:port); APIURL the reception API's
	// base URL; TokenURL the token endpoint; RegistryURL the base URL of
	// the public registry API (the root too).
	URL, APIURL, TokenURL, RegistryURL string
	srv                                *httptest.Server
}

// NewTestServer starts a sandbox for a test, as net/http/httptest starts a
// server.
func NewTestServer(t TB, o Options) *TestServer {
	t.Helper()
	sb, err := New(o)
	if err != nil {
		t.Fatalf("sandbox: %v", err)
	}
	srv := httptest.NewServer(sb.Handler())
	ts := &TestServer{
		Sandbox:     sb,
		URL:         srv.URL,
		APIURL:      srv.URL + sb.opts.BasePath,
		TokenURL:    srv.URL + sb.tokenPath,
		RegistryURL: srv.URL,
		srv:         srv,
	}
	t.Cleanup(ts.Close)
	return ts
}

// Close stops the server.
func (ts *TestServer) Close() {
	ts.Sandbox.Close()
	ts.srv.Close()
}

// CloseClientConnections drops every open connection, as a crash of the
// tax authority's front end would.
func (ts *TestServer) CloseClientConnections() { ts.srv.CloseClientConnections() }
