package recepcion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
)

// CheckLogin (the connection test of A.14): a fresh login that reports the
// token service's own refusal text, leaves the company's session alone and
// ends its own session.

// loginOutcome is what a test wants of one CheckLogin.
type loginOutcome struct {
	ok      bool
	refused bool
	reason  string // exact, or a prefix when it ends in "…"
	is      error  // errors.Is must hold
}

func checkOutcome(t *testing.T, err error, want loginOutcome) {
	t.Helper()
	if want.ok {
		if err != nil {
			t.Fatalf("CheckLogin: %v, want nil", err)
		}
		return
	}
	var le *recepcion.LoginError
	if !errors.As(err, &le) {
		t.Fatalf("CheckLogin: %#v, want a *LoginError", err)
	}
	if le.Refused != want.refused {
		t.Errorf("refused %v, want %v (%v)", le.Refused, want.refused, err)
	}
	if p, cut := strings.CutSuffix(want.reason, "…"); cut {
		if !strings.HasPrefix(le.Reason, p) {
			t.Errorf("reason %q, want it to start with %q", le.Reason, p)
		}
	} else if le.Reason != want.reason {
		t.Errorf("reason %q, want %q", le.Reason, want.reason)
	}
	if want.is != nil && !errors.Is(err, want.is) {
		t.Errorf("%v does not match %v", err, want.is)
	}
}

// TestCheckLoginSandbox runs CheckLogin against the sandbox's token
// service, which knows one user.
func TestCheckLoginSandbox(t *testing.T) {
	prodUser := creds
	prodUser.Username = "cpj-3-101-123456@comprobanteselectronicos.go.cr"
	wrong := creds
	wrong.Password = []byte("not-the-password")
	tests := []struct {
		name   string
		faults sandbox.Faults
		creds  recepcion.Credentials
		want   loginOutcome
		// grants and refusals the sandbox counts; logouts it counts.
		grants, refusals, logouts int64
	}{
		{name: "ok/right password", creds: creds, want: loginOutcome{ok: true}, grants: 1, logouts: 1},
		{name: "error/wrong password: the token service's words", creds: wrong,
			want: loginOutcome{refused: true, reason: "Invalid user credentials", is: recepcion.ErrCredentials}, refusals: 1},
		{name: "error/a production user name against staging", creds: prodUser,
			want: loginOutcome{refused: true, reason: "Invalid user credentials", is: recepcion.ErrCredentials}, refusals: 1},
		{name: "error/no password: no call", creds: recepcion.Credentials{CompanyID: 7, Username: creds.Username},
			want: loginOutcome{reason: "the company has no tax-authority user or password", is: recepcion.ErrMissingCredentials}},
		{name: "error/the token service unavailable", faults: sandbox.Faults{TokenRefusal: 503}, creds: creds,
			want: loginOutcome{reason: "unreachable: the token service answered Service Unavailable: temporarily_unavailable: …"}, refusals: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, sandbox.Options{Checks: noChecks, Faults: tt.faults,
				Users: map[string]string{creds.Username: string(creds.Password)}}, recepcion.Options{})
			err := b.client.CheckLogin(context.Background(), tt.creds)
			checkOutcome(t, err, tt.want)
			if err != nil && (strings.Contains(err.Error(), string(tt.creds.Password)) && len(tt.creds.Password) > 0) {
				t.Errorf("the error shows the password: %v", err)
			}
			s := b.sb.Stats()
			if s.PasswordGrants != tt.grants || s.TokenRefused != tt.refusals || s.Logouts != tt.logouts {
				t.Errorf("sandbox counted %d grants, %d refusals, %d logouts; want %d, %d, %d",
					s.PasswordGrants, s.TokenRefused, s.Logouts, tt.grants, tt.refusals, tt.logouts)
			}
		})
	}
}

// TestCheckLoginLeavesTheSession: the company's cached session goes on as
// it was through a test that works and one that is refused, and only the
// test's own session is ended.
func TestCheckLoginLeavesTheSession(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks, Users: map[string]string{creds.Username: string(creds.Password)}}, recepcion.Options{})
	ctx := context.Background()
	login(t, b, creds) // the session the company's calls use
	if err := b.client.CheckLogin(ctx, creds); err != nil {
		t.Fatal(err)
	}
	wrong := creds
	wrong.Password = []byte("not-the-password")
	checkOutcome(t, b.client.CheckLogin(ctx, wrong), loginOutcome{refused: true, reason: "Invalid user credentials", is: recepcion.ErrCredentials})
	// The session's access token still works: no login, and the sandbox
	// takes it (the logout ended the test's session, not this one).
	before := b.sb.Stats()
	login(t, b, creds)
	after := b.sb.Stats()
	if after.PasswordGrants != before.PasswordGrants || after.RefreshGrants != before.RefreshGrants || after.Unauthorized != before.Unauthorized {
		t.Errorf("the session was disturbed: %+v then %+v", before, after)
	}
	if after.PasswordGrants != 2 || after.Logouts != 1 {
		t.Errorf("%d password grants and %d logouts, want 2 and 1", after.PasswordGrants, after.Logouts)
	}
	// The refusal was not remembered: the same wrong password in a call
	// logs in (and is refused) rather than failing without a request.
	before = b.sb.Stats()
	if _, err := b.client.Status(ctx, wrong, unknownClave()); !errors.Is(err, recepcion.ErrCredentials) {
		t.Fatalf("call with the wrong password: %v", err)
	}
	if got := b.sb.Stats().TokenRefused - before.TokenRefused; got != 1 {
		t.Errorf("the call made %d refused logins, want 1: the test's refusal was remembered", got)
	}
}

// TestCheckLoginForgetsARefusal: credentials refused by a call are not
// tried again by calls for RefusedCredentialsWait; a test login with them
// that works lets the calls go on at once.
func TestCheckLoginForgetsARefusal(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks, Users: map[string]string{creds.Username: "the old password"}},
		recepcion.Options{RefusedCredentialsWait: 10 * time.Minute})
	ctx := context.Background()
	if _, err := b.client.Status(ctx, creds, unknownClave()); !errors.Is(err, recepcion.ErrCredentials) {
		t.Fatalf("%v, want refused", err)
	}
	// The taxpayer sets, at the tax authority, the password the company
	// already has.
	b.sb.AddUser(creds.Username, string(creds.Password))
	before := b.sb.Stats().PasswordGrants
	if _, err := b.client.Status(ctx, creds, unknownClave()); !errors.Is(err, recepcion.ErrCredentials) || b.sb.Stats().PasswordGrants != before {
		t.Fatalf("%v: want the remembered refusal, without a login", err)
	}
	if err := b.client.CheckLogin(ctx, creds); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Status(ctx, creds, unknownClave()); !errors.Is(err, recepcion.ErrNotFound) {
		t.Fatalf("after the test login: %v, want a login and the API's answer", err)
	}
}

// TestCheckLoginMetrics: a test login is counted like any password grant,
// and its logout is counted but not timed, so that the test adds no
// histogram to /metrics.
func TestCheckLoginMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := setup(t, sandbox.Options{Checks: noChecks}, recepcion.Options{Registerer: reg})
	if err := b.client.CheckLogin(context.Background(), creds); err != nil {
		t.Fatal(err)
	}
	expected := `
# HELP facturad_hacienda_calls_total HTTP exchanges with the tax authority, by operation and outcome.
# TYPE facturad_hacienda_calls_total counter
facturad_hacienda_calls_total{op="logout",outcome="ok"} 1
facturad_hacienda_calls_total{op="password",outcome="ok"} 1
# HELP facturad_hacienda_token_grants_total Token requests to the tax authority's token service, by grant and outcome.
# TYPE facturad_hacienda_token_grants_total counter
facturad_hacienda_token_grants_total{grant="password",outcome="ok"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expected), "facturad_hacienda_calls_total", "facturad_hacienda_token_grants_total"); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "facturad_hacienda_call_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "op" && l.GetValue() != "password" {
					t.Errorf("a duration histogram for op %q", l.GetValue())
				}
			}
		}
	}
}

// idpCall is one request the test token service received.
type idpCall struct {
	path string
	form url.Values
}

// TestCheckLoginAnswers holds CheckLogin to each way a token service
// answers or fails, on a token service of the test's own.
func TestCheckLoginAnswers(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		hang   bool
		want   loginOutcome
	}{
		{name: "ok/token", status: 200, body: `{"access_token":"a","expires_in":300,"refresh_token":"r-1","refresh_expires_in":36000,"token_type":"bearer"}`,
			want: loginOutcome{ok: true}},
		{name: "error/invalid_grant with a description", status: 401, body: `{"error":"invalid_grant","error_description":"Account disabled"}`,
			want: loginOutcome{refused: true, reason: "Account disabled", is: recepcion.ErrCredentials}},
		{name: "error/an error code alone", status: 400, body: `{"error":"invalid_client"}`,
			want: loginOutcome{refused: true, reason: "invalid_client", is: recepcion.ErrCredentials}},
		{name: "error/refused without a body", status: 401,
			want: loginOutcome{refused: true, reason: "401 Unauthorized", is: recepcion.ErrCredentials}},
		{name: "error/a server error", status: 502, body: `<html>bad gateway</html>`,
			want: loginOutcome{reason: "unreachable: the token service answered Bad Gateway"}},
		{name: "error/forbidden is no verdict on the password", status: 403, body: `{"error":"access_denied","error_description":"Blocked"}`,
			want: loginOutcome{reason: "unreachable: the token service answered Forbidden: access_denied: Blocked"}},
		{name: "error/a token answer without a token", status: 200, body: `{"token_type":"bearer"}`,
			want: loginOutcome{reason: "unreachable: its answer cannot be read (unreadable)"}},
		{name: "error/no answer in time", hang: true,
			want: loginOutcome{reason: "unreachable: no answer in time (timeout)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu    sync.Mutex
				calls []idpCall
			)
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = r.ParseForm()
				mu.Lock()
				calls = append(calls, idpCall{r.URL.Path, r.PostForm})
				mu.Unlock()
				if r.URL.Path == "/realm/logout" {
					w.WriteHeader(http.StatusNoContent)
					return
				}
				if tt.hang {
					select {
					case <-release:
					case <-r.Context().Done():
					}
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			defer close(release)
			var logs bytes.Buffer
			var logsMu sync.Mutex
			c, err := recepcion.New(recepcion.Options{APIURL: srv.URL + "/api", TokenURL: srv.URL + "/realm/token",
				TokenTimeout: 200 * time.Millisecond,
				Logger:       slog.New(slog.NewJSONHandler(lockedWriter{&logsMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatal(err)
			}
			err = c.CheckLogin(context.Background(), creds)
			checkOutcome(t, err, tt.want)

			mu.Lock()
			defer mu.Unlock()
			if len(calls) == 0 || calls[0].path != "/realm/token" {
				t.Fatalf("calls %+v, want a token request first", calls)
			}
			f := calls[0].form
			if f.Get("grant_type") != "password" || f.Get("username") != creds.Username || f.Get("password") != string(creds.Password) || f.Get("client_id") != "api-stag" {
				t.Errorf("token request %v", f)
			}
			// The session a token came with is ended at once, with its
			// refresh token; a failed login has none to end.
			wantCalls := 1
			if tt.want.ok {
				wantCalls = 2
				if len(calls) == 2 && (calls[1].path != "/realm/logout" || calls[1].form.Get("refresh_token") != "r-1" || calls[1].form.Get("client_id") != "api-stag") {
					t.Errorf("logout %+v", calls[1])
				}
			}
			if len(calls) != wantCalls {
				t.Errorf("%d calls, want %d: %+v", len(calls), wantCalls, calls)
			}
			logsMu.Lock()
			defer logsMu.Unlock()
			if strings.Contains(logs.String(), string(creds.Password)) || strings.Contains(logs.String(), url.QueryEscape(string(creds.Password))) {
				t.Errorf("the log shows the password:\n%s", logs.String())
			}
			if err != nil && strings.Contains(err.Error(), srv.URL) {
				t.Errorf("the reason names the token service's address: %v", err)
			}
		})
	}
}

// TestCheckLoginUnreachable: a token service that does not listen.
func TestCheckLoginUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	c, err := recepcion.New(recepcion.Options{APIURL: addr + "/api", TokenURL: addr + "/token", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	err = c.CheckLogin(context.Background(), creds)
	checkOutcome(t, err, loginOutcome{reason: "unreachable: connection refused (refused)"})
	if v := recepcion.Judge(err); v.Kind != recepcion.Transient {
		t.Errorf("judged %s, want transient", v.Kind)
	}
	var le *recepcion.LoginError
	if errors.As(err, &le) {
		b, _ := json.Marshal(le.Reason)
		if strings.Contains(string(b), addr) {
			t.Errorf("the reason names the address: %s", b)
		}
	}
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestCheckLoginCooldown: a refused test login is answered again without
// asking for TestLoginCooldown, for the same user and password, so that a
// caller repeating the test cannot lock the taxpayer's account; changed
// credentials, and the same ones once the cooldown has passed, are tried.
func TestCheckLoginCooldown(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks, Users: map[string]string{creds.Username: string(creds.Password)}}, recepcion.Options{})
	ctx := context.Background()
	wrong := creds
	wrong.Password = []byte("not-the-password")
	refused := func() int64 { return b.sb.Stats().TokenRefused }
	checkOutcome(t, b.client.CheckLogin(ctx, wrong), loginOutcome{refused: true, reason: "Invalid user credentials", is: recepcion.ErrCredentials})
	for range 5 {
		checkOutcome(t, b.client.CheckLogin(ctx, wrong), loginOutcome{refused: true, reason: "Invalid user credentials (the same user and password were refused at …", is: recepcion.ErrCredentials})
	}
	if got := refused(); got != 1 {
		t.Errorf("%d refused logins for six tests within the cooldown, want 1", got)
	}
	// The same wrong ones after the cooldown: asked again.
	b.clock.Advance(recepcion.TestLoginCooldown)
	checkOutcome(t, b.client.CheckLogin(ctx, wrong), loginOutcome{refused: true, reason: "Invalid user credentials", is: recepcion.ErrCredentials})
	if got := refused(); got != 2 {
		t.Errorf("%d refused logins after the cooldown, want 2", got)
	}
	// Other credentials, within the new cooldown: tried at once.
	checkOutcome(t, b.client.CheckLogin(ctx, creds), loginOutcome{ok: true})
}
