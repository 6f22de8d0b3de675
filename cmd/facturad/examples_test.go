package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"facturad/docs/examples"
	"facturad/gateway/openapicheck"
	"facturad/signer/certmint"
)

// checkedClient is a branch user whose every call is held to the OpenAPI
// document the service serves.
type checkedClient struct {
	apiClient
	check *openapicheck.Checker
}

// call makes one call and checks its request and answer against the
// document.
func (c checkedClient) call(method, path string, body []byte) (int, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("AuthToken", c.token)
	req.SetBasicAuth(c.user, c.pass)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	err = c.check.Check(context.Background(), openapicheck.Call{Request: req, RequestBody: body,
		Status: resp.StatusCode, Header: resp.Header, Body: b})
	if err != nil {
		c.t.Errorf("the call disagrees with /openapi.json: %v\nanswer: %s", err, b)
	}
	return resp.StatusCode, b
}

// TestExamplesAccepted sends every request body of docs/examples to a
// running service (embedded store, built-in sandbox), each after the
// documents it refers to: every one is received (04) and then accepted
// (01), and every request and answer agrees with the served OpenAPI
// document.
func TestExamplesAccepted(t *testing.T) {
	notQuick(t, "an end-to-end drill (the Quick start runs one)")
	// The sandbox judges at once: the verdict's timing is not what this
	// test is about, and the check below waits for it however long the
	// machine takes.
	_, api, _, stop := startService(t, t.TempDir(), "--sandbox-processing-delay", "0",
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
	defer stop()
	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, admin, ca, "3101123456")

	resp, err := http.Get(admin.base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/openapi.json: %d %v", resp.StatusCode, err)
	}
	checker, err := openapicheck.New(context.Background(), doc)
	if err != nil {
		t.Fatal(err)
	}

	all, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	claves := map[string]string{}
	for _, ex := range all {
		t.Run(ex.Name, func(t *testing.T) {
			c := checkedClient{apiClient: branch, check: checker}
			c.t = t
			body, err := examples.Fill(ex.Body, claves)
			if err != nil {
				t.Fatal(err)
			}
			// The calculate call takes the same body and answers every
			// amount; its answer is held to the document too.
			if status, b := c.call("POST", "/api/documents/calculate/v4", body); status != 200 {
				t.Errorf("calculate: %d %s", status, b)
			}
			status, b := c.call("POST", "/api/documents/v4", body)
			var sent document
			if err := json.Unmarshal(b, &sent); err != nil || status != 200 || sent.Estado != "04" {
				t.Fatalf("send: %d %s", status, b)
			}
			claves[ex.Name] = sent.Clave
			// The verdict is waited for until a generous deadline, not
			// for a number of tries.
			checked := c.checkUntilVerdict(sent.Clave, "")
			if checked.Estado != "01" {
				t.Fatalf("check: estado %s %s: %s", checked.Estado, checked.Mensaje, strings.Join(checked.Detalle, "; "))
			}
			if status, _ := c.call("GET", "/api/documents/"+sent.Clave+"/v4?includeXml=true", nil); status != 200 {
				t.Errorf("read: %d", status)
			}
		})
	}
	if len(claves) != len(all) {
		t.Errorf("%d of %d examples accepted", len(claves), len(all))
	}
}
