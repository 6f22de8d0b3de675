package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/pipeline/delivery"
	"facturad/signer/certmint"
)

// hookReceiver is a real HTTP endpoint receiving webhooks: it verifies
// every signature with the documented verifier and keeps each event once
// by its id, counting the repeats.
type hookReceiver struct {
	srv    *httptest.Server
	secret atomic.Value // string
	up     atomic.Bool  // false: answers 500

	mu      sync.Mutex
	events  map[string]client.WebhookEvent // by id
	repeats int
	bad     int
	posts   int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{events: map[string]client.WebhookEvent{}}
	r.secret.Store("")
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.posts++
		if err := client.VerifyWebhook(r.secret.Load().(string), req.Header.Get(delivery.SignatureHeader), body, time.Now(), client.WebhookTolerance); err != nil {
			r.bad++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if !r.up.Load() {
			http.Error(w, "down for the test", http.StatusInternalServerError)
			return
		}
		var ev client.WebhookEvent
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		if _, ok := r.events[ev.ID]; ok {
			r.repeats++
		}
		r.events[ev.ID] = ev
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// got lists the events received, as "evento clave", sorted.
func (r *hookReceiver) got(t *testing.T) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		var d document
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatalf("event data %s: %v", ev.Data, err)
		}
		out = append(out, ev.Evento+" "+d.Clave)
	}
	sort.Strings(out)
	return out
}

// onlyCompanyID is the id of the one company the branch's credentials see.
func onlyCompanyID(t *testing.T, branch apiClient) int64 {
	t.Helper()
	var companies []struct {
		ID int64 `json:"id"`
	}
	branch.json("GET", "/api/companies/v4", nil, 200, &companies)
	if len(companies) != 1 {
		t.Fatalf("companies %+v", companies)
	}
	return companies[0].ID
}

// TestWebhooksSurviveSIGKILL runs the real service, registers a webhook
// for every document event through the API, issues documents while the
// endpoint answers 500, waits until every event is in the outbox and has
// been attempted, kills the service with SIGKILL, brings the endpoint up
// and starts the service again: every event arrives, signed, exactly the
// events of the documents' changes (no loss, nothing invented), and the
// delivery log shows the failed attempts before the success.
func TestWebhooksSurviveSIGKILL(t *testing.T) {
	notQuick(t, "a crash drill")
	dir := t.TempDir()
	// The receiver is on loopback: the sandbox allows it only with
	// webhook_allow_private.
	args := []string{"--data-dir", dir, "--sandbox-processing-delay", "0", "--delivery-backoff", "200ms", "--webhook-allow-private",
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken}
	first := startChild(t, nil, args...)
	admin := apiClient{t: t, base: "http://" + first.api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, admin, ca, "3101123456")
	companyID := onlyCompanyID(t, branch)

	rcv := newHookReceiver(t)
	var hook client.WebhookCreated
	branch.json("POST", fmt.Sprintf("/api/companies/%d/webhooks/v4", companyID),
		fmt.Appendf(nil, `{"url":%q,"eventos":["documento.no_enviado","documento.enviado","documento.aceptado","documento.rechazado","documento.error","documento.pendiente"]}`, rcv.srv.URL+"/hooks"),
		200, &hook)
	rcv.secret.Store(hook.Secreto)

	// Three invoices, each 00 → 05 (stored signed) → 04 (received) → 01.
	const docs = 3
	var want []string
	bodies := sendRequests(t, "hook")
	for i := range docs {
		var d document
		b := bytes.Replace(bodies[0], []byte(`"hook-0"`), fmt.Appendf(nil, `"hook-fe-%d"`, i), 1)
		branch.json("POST", "/api/documents/v4", b, 200, &d)
		for _, ev := range []string{"documento.no_enviado", "documento.enviado", "documento.aceptado"} {
			want = append(want, ev+" "+d.Clave)
		}
	}
	sort.Strings(want)
	// Wait until every event is in the outbox and was attempted (and
	// failed: the endpoint answers 500).
	logPath := fmt.Sprintf("/api/companies/%d/webhooks/%d/deliveries/v4?limit=100", companyID, hook.ID)
	deadline := time.Now().Add(90 * time.Second)
	for {
		var page client.DeliveryPage
		branch.json("GET", logPath, nil, 200, &page)
		attempted := 0
		for _, d := range page.Items {
			if d.Intentos > 0 && d.Estado == "pendiente" && d.UltimoCodigo == 500 {
				attempted++
			}
		}
		if len(page.Items) == len(want) && attempted == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the outbox has %d of %d events, %d attempted: %+v", len(page.Items), len(want), attempted, page.Items)
		}
		time.Sleep(100 * time.Millisecond)
	}
	first.kill()
	if n := len(rcv.got(t)); n != 0 {
		t.Fatalf("%d events accepted while the endpoint was down", n)
	}

	rcv.up.Store(true)
	second := startChild(t, nil, args...)
	deadline = time.Now().Add(90 * time.Second)
	for len(rcv.got(t)) < len(want) {
		if time.Now().After(deadline) {
			t.Fatalf("after the restart %d of %d events arrived:\n%v", len(rcv.got(t)), len(want), rcv.got(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
	got := rcv.got(t)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events\n%v\nwant\n%v", got, want)
	}
	rcv.mu.Lock()
	bad := rcv.bad
	rcv.mu.Unlock()
	if bad != 0 {
		t.Fatalf("%d deliveries with a bad signature", bad)
	}
	// The log shows the failed attempts before each success.
	branch.base = "http://" + second.api
	var page client.DeliveryPage
	deadline = time.Now().Add(30 * time.Second)
	for {
		branch.json("GET", logPath, nil, 200, &page)
		delivered := 0
		for _, d := range page.Items {
			if d.Estado == "entregado" {
				delivered++
			}
		}
		if delivered == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log: %+v", page.Items)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, d := range page.Items {
		if d.Intentos < 2 || d.UltimoCodigo != 204 || d.UltimoError != "" || d.Entregado == "0001-01-01T00:00:00" {
			t.Errorf("delivery %+v", d)
		}
	}
}

// sandboxWebhookRefusals registers webhooks on a running service of the
// sandbox environment started without webhook_allow_private: loopback,
// private and link-local addresses are refused (the policy applies in
// every environment), naming the setting where it would help; http is
// allowed but another scheme is not, and the answer says so; a URL that
// is not a JSON string says that.
func sandboxWebhookRefusals(t *testing.T, api string) {
	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, admin, ca, "3101777777")
	path := fmt.Sprintf("/api/companies/%d/webhooks/v4", onlyCompanyID(t, branch))
	for _, tt := range []struct{ url, want string }{
		{`"http://127.0.0.1:1/x"`, "FACTURAD_WEBHOOK_ALLOW_PRIVATE"},
		{`"http://localhost:8080/x"`, "FACTURAD_WEBHOOK_ALLOW_PRIVATE"},
		{`"http://10.0.0.7/x"`, "FACTURAD_WEBHOOK_ALLOW_PRIVATE"},
		{`"http://169.254.169.254/latest/meta-data"`, "is not a public address"},
		{`"http://[::ffff:0:a9fe:a9fe]/x"`, "is not a public address"},
		{`"ftp://93.184.215.14/x"`, "must be https (http is allowed in the sandbox environment)"},
		{`5`, "must be a JSON string, not a number"},
	} {
		status, body := branch.do("POST", path, "application/json", []byte(`{"url":`+tt.url+`,"eventos":["documento.aceptado"]}`))
		var e struct {
			Errors map[string][]string `json:"errors"`
		}
		if err := json.Unmarshal(body, &e); status != 400 || err != nil || len(e.Errors["url"]) != 1 || !strings.Contains(e.Errors["url"][0], tt.want) {
			t.Errorf("url %s: %d %s, want a 400 on url saying %q", tt.url, status, body, tt.want)
		}
	}
	var hooks []client.Webhook
	branch.json("GET", path, nil, 200, &hooks)
	if len(hooks) != 0 {
		t.Errorf("webhooks registered: %+v", hooks)
	}
}
