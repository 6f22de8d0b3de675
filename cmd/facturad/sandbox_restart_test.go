package main

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"facturad/pipeline/delivery/smtptest"
	"facturad/signer/certmint"
)

// builtInSandboxLine is the log line that says where the built-in
// sandbox listens and where it keeps its state.
var builtInSandboxLine = regexp.MustCompile(`"msg":"built-in tax-authority sandbox","api":"([^"]+)","token":"([^"]+)","state":"([^"]+)"`)

// sandboxStatus asks the built-in sandbox of the child c, as the service
// asks it, the state of clave: its status code and ind-estado.
func sandboxStatus(t *testing.T, c *child, clave string) (int, string) {
	t.Helper()
	m := builtInSandboxLine.FindStringSubmatch(c.errs.String())
	if m == nil {
		t.Fatalf("the service did not say where its sandbox listens:\n%s", c.errs)
	}
	return sandboxStatusAt(t, m[1], m[2], clave)
}

// sandboxStatusAt asks the sandbox whose reception API is api and token
// endpoint token, as the service asks it, the state of clave: its status
// code and ind-estado.
func sandboxStatusAt(t *testing.T, api, token, clave string) (int, string) {
	t.Helper()
	resp, err := http.PostForm(token, url.Values{"grant_type": {"password"}, "client_id": {"api-stag"},
		"username": {"cpj-3-101-123456@stag.comprobanteselectronicos.go.cr"}, "password": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("sandbox token: %d %v", resp.StatusCode, err)
	}
	req, _ := http.NewRequest("GET", api+"/recepcion/"+clave, nil)
	req.Header.Set("Authorization", "bearer "+tok.AccessToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		IndEstado string `json:"ind-estado"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&st)
	return resp.StatusCode, st.IndEstado
}

// TestBuiltInSandboxRemembersAcrossRestart: the embedded default (the
// embedded store and the built-in sandbox) in a process of its own issues
// an invoice, which the sandbox accepts, and a second one it has received
// but not judged yet; the service is stopped (SIGTERM, or killed with
// SIGKILL) and started again on the same data folder. The sandbox still
// answers the status of both invoices (the second is judged after the
// restart), and a credit note about the first is accepted: before the
// sandbox kept its state in the data folder it was refused, "no
// corresponde a un comprobante recibido". The buyer's e-mails say who
// issued them.
func TestBuiltInSandboxRemembersAcrossRestart(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) { builtInSandboxRestart(t, sig) })
	}
}

func builtInSandboxRestart(t *testing.T, sig syscall.Signal) {
	dir := t.TempDir()
	st := smtptest.New(t)
	caFile := filepath.Join(t.TempDir(), "smtp-ca.pem")
	if err := os.WriteFile(caFile, st.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"SSL_CERT_FILE=" + caFile} // the mail server's certificate, as a system root
	args := []string{"--data-dir", dir, "--log-level", "info", "--sandbox-processing-delay", "1s",
		"--smtp-url", st.URL(), "--smtp-from", "Facturación <facturas@plataforma.example>",
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken}

	first := startChild(t, env, args...)
	if m := builtInSandboxLine.FindStringSubmatch(first.errs.String()); m == nil || m[3] != filepath.Join(dir, "sandbox.db") {
		t.Fatalf("the built-in sandbox does not keep its state in the data folder:\n%s", first.errs)
	}
	branch, fe, bodies := acceptedInvoice(t, first.api, "restart")
	var pending document
	// A second invoice, received by the sandbox (04) but not judged yet
	// when the service stops.
	second := bytes.Replace(bodies[0], []byte(`"restart-0"`), []byte(`"restart-0b"`), 1)
	branch.json("POST", "/api/documents/v4", second, 200, &pending)
	if pending.Estado != "04" {
		t.Fatalf("the second invoice: %+v, want 04 (received, not judged)", pending)
	}

	if sig == syscall.SIGTERM {
		_ = first.cmd.Process.Signal(sig)
		select {
		case <-first.exited:
		case <-time.After(60 * time.Second):
			t.Fatalf("the service did not stop on SIGTERM:\n%s", first.errs)
		}
	} else {
		first.kill()
	}

	again := startChild(t, env, args...)
	branch.base = "http://" + again.api
	if code, estado := sandboxStatus(t, again, fe.Clave); code != 200 || estado != "aceptado" {
		t.Errorf("the sandbox's status of the invoice accepted before the restart: %d %q", code, estado)
	}
	if code, _ := sandboxStatus(t, again, pending.Clave); code != 200 {
		t.Errorf("the sandbox's status of the invoice received before the restart: %d", code)
	}
	if got := branch.checkUntilVerdict(pending.Clave, ""); got.Estado != "01" {
		t.Errorf("the invoice received before the restart: %+v", got)
	}
	var nc document
	branch.json("POST", "/api/documents/v4", referTo(bodies[2], fe.Clave), 200, &nc)
	got := branch.checkUntilVerdict(nc.Clave, "")
	if got.Estado != "01" {
		t.Fatalf("a credit note about the invoice accepted before the restart: %+v", got)
	}

	// The buyer's e-mails name the issuer (the company's razón comercial),
	// reply to its address and say they have no tax value (the sandbox).
	deadline := time.Now().Add(time.Minute)
	for len(st.Received()) < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	subjects := map[string]bool{}
	for _, m := range st.Received() {
		msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatal(err)
		}
		from, err := mail.ParseAddress(msg.Header.Get("From"))
		if err != nil || from.Name != "Empresa 3101123456" || from.Address != "facturas@plataforma.example" {
			t.Errorf("From %q (%v)", msg.Header.Get("From"), err)
		}
		if rt, err := mail.ParseAddressList(msg.Header.Get("Reply-To")); err != nil || len(rt) != 1 || rt[0].Address != "facturas@example.com" {
			t.Errorf("Reply-To %q (%v)", msg.Header.Get("Reply-To"), err)
		}
		subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		if err != nil || !strings.HasPrefix(subject, "[PRUEBAS] ") || !strings.Contains(subject, " de Empresa 3101123456 por ") {
			t.Errorf("Subject %q (%v)", subject, err)
		}
		subjects[subject] = true
	}
	for _, want := range []string{"Factura Electrónica " + fe.Consecutivo, "Factura Electrónica " + pending.Consecutivo, "Nota de Crédito Electrónica " + nc.Consecutivo} {
		found := false
		for s := range subjects {
			found = found || strings.Contains(s, want)
		}
		if !found {
			t.Errorf("no e-mail of %s among %v", want, subjects)
		}
	}
}

// sandboxStateLine is what `facturad sandbox` says, on its listening
// line, about where it keeps its state.
var sandboxStateLine = regexp.MustCompile(`sandbox listening: .*  state ([^\n]+)\n`)

// TestSandboxCommandRemembersAcrossRestart: `facturad sandbox --data-dir`
// in a process of its own accepts an invoice a service sends it, is killed
// (SIGKILL) and started again on the same folder and address. It still
// answers the invoice's status, and accepts a credit note about it, whose
// answer the service checks against the answer certificate it was given
// at the first start. Without --data-dir it says it keeps its state in
// memory only.
func TestSandboxCommandRemembersAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	sb, trust := startSandboxChild(t, "--data-dir", dir)
	if m := sandboxStateLine.FindStringSubmatch(sb.out.String()); m == nil || m[1] != filepath.Join(dir, "sandbox.db") {
		t.Fatalf("the sandbox does not keep its state in its data folder:\n%s", sb.out)
	}
	svc := startChild(t, nil, append(trust, "--data-dir", t.TempDir(),
		"--hacienda-env", "sandbox", "--hacienda-api-url", sb.api, "--hacienda-token-url", sb.admin,
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)...)
	branch, fe, bodies := acceptedInvoice(t, svc.api, "sbcmd")

	sb.kill()
	u, err := url.Parse(sb.api)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := startSandboxChild(t, "--data-dir", dir, "--listen", u.Host)
	if again.api != sb.api {
		t.Fatalf("the sandbox started again at %s, not %s", again.api, sb.api)
	}
	if code, estado := sandboxStatusAt(t, again.api, again.admin, fe.Clave); code != 200 || estado != "aceptado" {
		t.Errorf("the sandbox's status of the invoice accepted before the restart: %d %q", code, estado)
	}
	var nc document
	branch.json("POST", "/api/documents/v4", referTo(bodies[2], fe.Clave), 200, &nc)
	if got := branch.checkUntilVerdict(nc.Clave, ""); got.Estado != "01" {
		t.Errorf("a credit note about the invoice accepted before the restart: %+v", got)
	}

	memory, _ := startSandboxChild(t)
	if m := sandboxStateLine.FindStringSubmatch(memory.out.String()); m == nil || m[1] != "memory only" {
		t.Errorf("without --data-dir the sandbox does not say it keeps its state in memory only:\n%s", memory.out)
	}
}

// acceptedInvoice creates a company on the service listening at api, as
// the end-to-end admin, and sends it the first body of
// sendRequests(prefix), waiting for its acceptance (01): the company's
// branch user, the invoice and every body (the third is a credit note
// about the first, referTo).
func acceptedInvoice(t *testing.T, api, prefix string) (apiClient, document, [][]byte) {
	t.Helper()
	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, admin, ca, "3101123456")
	bodies := sendRequests(t, prefix)
	var fe document
	branch.json("POST", "/api/documents/v4", bodies[0], 200, &fe)
	if got := branch.checkUntilVerdict(fe.Clave, ""); got.Estado != "01" {
		t.Fatalf("the invoice: %+v, want accepted (01)", got)
	}
	return branch, fe, bodies
}
