package main

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/hacienda/sandbox"
	"facturad/signer/certmint"
	"facturad/tenant/storetest"
)

// TestCompaniesInTwoEnvironments: one process serves a company on trial
// in the tax authority's staging environment and one in production (A.14).
// Sending at the same time, each document reaches its own environment's
// endpoints (two sandboxes standing in for them) and only those; a move to
// production is refused without the new environment's credentials and
// certificate and while a document of the old one is unsettled, and once
// made, the company numbers afresh in production. On both stores.
func TestCompaniesInTwoEnvironments(t *testing.T) {
	notQuick(t, "an end-to-end drill (the Quick start runs one)")
	onBothStores(t, testTwoEnvironments)
}

// onBothStores runs test as a subtest on the embedded store ("sqlite",
// no arguments) and on PostgreSQL and Redis ("postgres", the arguments
// that point the service at a schema and a key prefix of the test's own;
// skipped without them, and in the quick subset: notQuick).
func onBothStores(t *testing.T, test func(t *testing.T, storeArgs []string)) {
	t.Run("sqlite", func(t *testing.T) { test(t, nil) })
	t.Run("postgres", func(t *testing.T) {
		notQuick(t, "the run on PostgreSQL and Redis (the one on SQLite runs)")
		test(t, []string{"--database-url", postgresSchema(t), "--redis-url", storetest.RedisURL(t), "--master-key", masterKey(t)})
	})
}

func testTwoEnvironments(t *testing.T, storeArgs []string) {
	staging := sandbox.NewTestServer(t, sandbox.Options{})
	// Production's token service knows the client as api-prod, staging's
	// as api-stag: each client must present its own.
	production := sandbox.NewTestServer(t, sandbox.Options{ClientID: "api-prod"})
	_, api, _, stop := startService(t, t.TempDir(), append(append([]string{
		"--hacienda-env", "production",
		"--hacienda-staging-api-url", staging.APIURL, "--hacienda-staging-token-url", staging.TokenURL,
		"--hacienda-production-api-url", production.APIURL, "--hacienda-production-token-url", production.TokenURL,
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken},
		storeArgs...), trustSandboxes(t, staging, production)...)...)
	defer stop()
	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	trial, trialID := createCompanyWith(t, admin, ca, "3101111111", certmint.Options{}, map[string]string{"ambiente": "pruebas"})
	live, liveID := createCompanyWith(t, admin, ca, "3101222222", certmint.Options{}, nil)
	for id, want := range map[int64]string{trialID: "pruebas", liveID: "produccion"} { // production's default
		var c struct{ Ambiente string }
		admin.json("GET", fmt.Sprintf("/api/companies/%d/v4", id), nil, 200, &c)
		if c.Ambiente != want {
			t.Errorf("company %d: ambiente %q, want %q", id, c.Ambiente, want)
		}
	}

	// Both send at once.
	const n = 4
	sendAll := func(who apiClient, prefix string) []document {
		docs := make([]document, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := bytes.Replace(sendRequests(t, prefix)[0], []byte(`"`+prefix+`-0"`), []byte(fmt.Sprintf(`"%s-%d"`, prefix, i)), 1)
				status, _, b, err := who.try(checkedHTTP(t), who.base, "POST", "/api/documents/v4", "application/json", body)
				if err != nil || status != 200 {
					t.Errorf("send %s-%d: %d %v %s", prefix, i, status, err, b)
					return
				}
				if err := json.Unmarshal(b, &docs[i]); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		return docs
	}
	var trialDocs, liveDocs []document
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); trialDocs = sendAll(trial, "trial") }()
	go func() { defer wg.Done(); liveDocs = sendAll(live, "live") }()
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	reached := func(docs []document, there, notThere *sandbox.TestServer, env string) {
		t.Helper()
		for _, d := range docs {
			if _, ok := there.Document(d.Clave); !ok {
				t.Errorf("%s document %s did not reach %s's endpoints", env, d.Clave, env)
			}
			if _, ok := notThere.Document(d.Clave); ok {
				t.Errorf("%s document %s reached the other environment", env, d.Clave)
			}
		}
	}
	reached(trialDocs, staging, production, "pruebas")
	reached(liveDocs, production, staging, "produccion")

	// Moving the trial company to production: without that environment's
	// credentials and certificate, refused.
	companyPath := fmt.Sprintf("/api/companies/%d/v4", trialID)
	move := func(extra map[string]string) (int, map[string][]string) {
		t.Helper()
		extra["ambiente"] = "produccion"
		ct, body := companyForm(t, ca, "3101111111", certmint.Options{}, extra)
		status, b := admin.do("PUT", companyPath, ct, body)
		var e struct{ Errors map[string][]string }
		json.Unmarshal(b, &e)
		return status, e.Errors
	}
	if status, errs := move(map[string]string{"Certificado": "", "Clave": "", "ContrasenaHacienda": ""}); status != 400 || len(errs["ambiente"]) == 0 {
		t.Fatalf("move without credentials: %d %v, want 400 on ambiente", status, errs)
	}

	// While a document of pruebas is unsettled (staging still processing
	// it: 04), refused too.
	if err := staging.SetProcessingDelay(time.Hour); err != nil {
		t.Fatal(err)
	}
	var waiting document
	trial.json("POST", "/api/documents/v4", sendRequests(t, "trial-wait")[0], 200, &waiting)
	if waiting.Estado != "04" {
		t.Fatalf("send with staging still processing: estado %q", waiting.Estado)
	}
	status, errs := move(map[string]string{"ContrasenaHacienda": "clave-de-produccion"})
	if status != 400 || !strings.Contains(strings.Join(errs["ambiente"], " "), "not settled") {
		t.Fatalf("move with a document unsettled: %d %v, want 400 on ambiente", status, errs)
	}
	if err := staging.SetProcessingDelay(0); err != nil {
		t.Fatal(err)
	}
	for _, d := range append(trialDocs, waiting) {
		var settled document
		trial.json("PUT", "/api/documents/"+d.Clave+"/v4", nil, 200, &settled)
		if settled.Estado != "01" {
			t.Fatalf("pruebas document %s checked: estado %q", d.Clave, settled.Estado)
		}
	}

	// Settled: the move goes through, and production numbers afresh.
	if status, errs := move(map[string]string{"ContrasenaHacienda": "clave-de-produccion"}); status != 200 {
		t.Fatalf("move with credentials and certificate: %d %v", status, errs)
	}
	var first document
	trial.json("POST", "/api/documents/v4", sendRequests(t, "trial-live")[0], 200, &first)
	if _, ok := production.Document(first.Clave); !ok {
		t.Errorf("after the move, document %s did not reach production", first.Clave)
	}
	if !strings.HasSuffix(first.Consecutivo, "0000000001") {
		t.Errorf("first production consecutivo %s, want number 1 (pruebas used %d)", first.Consecutivo, n+1)
	}
	// An id_externo used in pruebas names no production document: a new
	// send with it is a 400, never the test document's answer.
	status, b := trial.do("POST", "/api/documents/v4", "application/json", sendRequests(t, "trial")[0])
	if status != 400 || !strings.Contains(string(b), "id_externo") {
		t.Errorf("a pruebas id_externo sent after the move: %d %s, want a 400 on id_externo", status, b)
	}
	// A pruebas document is still read as it was.
	var old document
	trial.json("GET", "/api/documents/"+trialDocs[0].Clave+"/v4", nil, 200, &old)
	if old.Estado == "" || old.Clave != trialDocs[0].Clave {
		t.Errorf("a pruebas document after the move: %+v", old)
	}
}

// trustSandboxes makes the service trust the answers of each of sbs (their
// authorities in one bundle, and their answer signer's identification).
func trustSandboxes(t *testing.T, sbs ...*sandbox.TestServer) []string {
	t.Helper()
	var buf bytes.Buffer
	for _, sb := range sbs {
		pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: sb.AnswerAuthority().Raw})
	}
	f := filepath.Join(t.TempDir(), "answer-cas.pem")
	if err := os.WriteFile(f, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--hacienda-trust-bundle", f, "--hacienda-answer-signer", sandbox.AnswerIdentification}
}
