package recepcion_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"facturad/hacienda/recepcion"
)

// Reachable judges the tax authority by the latest exchange while it is
// recent, and by a GET of the token endpoint otherwise.
func TestReachable(t *testing.T) {
	ctx := context.Background()
	var post, get atomic.Int32 // the token endpoint's answers
	post.Store(http.StatusServiceUnavailable)
	get.Store(http.StatusMethodNotAllowed)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			w.WriteHeader(int(get.Load()))
			return
		}
		w.WriteHeader(int(post.Load()))
		_, _ = io.WriteString(w, `{"error":"invalid_grant","error_description":"Invalid user credentials"}`)
	}))
	defer srv.Close()
	c, err := recepcion.New(recepcion.Options{Logger: quiet, APIURL: srv.URL + "/api", TokenURL: srv.URL + "/token",
		RefusedCredentialsWait: -1, CredentialsTrust: -1, OutageCompanies: -1})
	if err != nil {
		t.Fatal(err)
	}

	// No exchange yet: the probe answers.
	if err := c.Reachable(ctx, time.Minute); err != nil {
		t.Errorf("before any exchange, the token endpoint answering 405: %v", err)
	}
	get.Store(http.StatusBadGateway)
	if err := c.Reachable(ctx, time.Minute); err == nil {
		t.Error("before any exchange, the token endpoint answering 502: reachable")
	}
	get.Store(http.StatusMethodNotAllowed)

	// A grant answered 503: unreachable while it is the latest exchange
	// and recent, whatever a GET would say.
	if _, err := c.Status(ctx, creds, "50601010100310123456700100001010000000001199999999"); err == nil {
		t.Fatal("a status call with the token service answering 503 succeeded")
	}
	if err := c.Reachable(ctx, time.Minute); err == nil {
		t.Error("after a grant answered 503: reachable")
	}
	if err := c.Reachable(ctx, 0); err != nil {
		t.Errorf("no recent exchange (window 0), the probe answering 405: %v", err)
	}

	// Credentials refused (400): the tax authority answered.
	post.Store(http.StatusBadRequest)
	_, _ = c.Status(ctx, creds, "50601010100310123456700100001010000000001199999999")
	if err := c.Reachable(ctx, time.Minute); err != nil {
		t.Errorf("after a grant refused with 400: %v", err)
	}

	// Nothing listens: the probe fails.
	srv.Close()
	if err := c.Reachable(ctx, 0); err == nil {
		t.Error("the token endpoint closed: reachable")
	}
}
