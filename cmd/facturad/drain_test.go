package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"facturad/hacienda/sandbox"
	"facturad/signer/certmint"
)

// oneShot is an HTTP client that opens a new connection for every request,
// as a client arriving during a drain would.
var oneShot = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}

// callResult is one API call's outcome, for calls made in goroutines.
type callResult struct {
	status int
	body   []byte
	err    error
	at     time.Time
}

func call(c apiClient, method, path, reqID string, body []byte) callResult {
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return callResult{err: err}
	}
	req.Header.Set("AuthToken", c.token)
	req.SetBasicAuth(c.user, c.pass)
	req.Header.Set("X-Request-Id", reqID)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := oneShot.Do(req)
	if err != nil {
		return callResult{err: err, at: time.Now()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return callResult{status: resp.StatusCode, body: b, err: err, at: time.Now()}
}

// TestDrainOnSIGTERM stops the service in a process of its own with a
// real SIGTERM while sends are in flight (the tax authority answers them
// slowly): for the drain delay /readyz answers 503 while new connections
// and authenticated calls, sends included, are served; then the API port
// refuses connections while the sends in flight still finish with their
// answers; the process ends with status 0 and no part fails to stop.
func TestDrainOnSIGTERM(t *testing.T) {
	notQuick(t, "an end-to-end drill (the Quick start runs one)")
	const (
		drain   = 3 * time.Second
		latency = 6 * time.Second // of every tax-authority answer, once set
	)
	sb := sandbox.NewTestServer(t, sandbox.Options{})
	c := startChild(t, nil, append([]string{"--data-dir", t.TempDir(), "--hacienda-env", "staging",
		"--hacienda-api-url", sb.APIURL, "--hacienda-token-url", sb.TokenURL,
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken,
		"--drain-delay", drain.String(), "--shutdown-timeout", "25s", "--submit-timeout", "20s",
		"--log-level", "info"}, trustSandbox(t, sb)...)...)
	admin := apiClient{t: t, base: "http://" + c.api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, admin, ca, "3101123456")
	fe := sendRequests(t, "drain")[0]
	send := func(i int) []byte {
		return bytes.Replace(fe, []byte(`"drain-0"`), fmt.Appendf(nil, `"drain-%02d"`, i), 1)
	}
	// A first send takes the tax-authority token, at full speed.
	if r := call(branch, "POST", "/api/documents/v4", "warm", send(1)); r.err != nil || r.status != 200 {
		t.Fatalf("first send: %d %v %s", r.status, r.err, r.body)
	}
	if err := sb.SetFaults(sandbox.Faults{Latency: sandbox.Duration(latency)}); err != nil {
		t.Fatal(err)
	}
	before := make(chan callResult, 1)
	go func() { before <- call(branch, "POST", "/api/documents/v4", "sent-before", send(2)) }()
	time.Sleep(time.Second) // the send is waiting for the tax authority

	sigterm := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	readyz := func() int {
		resp, err := oneShot.Get("http://" + c.admin + "/readyz")
		if err != nil {
			t.Fatalf("readyz during the drain: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for readyz() != http.StatusServiceUnavailable {
		if time.Since(sigterm) > 500*time.Millisecond {
			t.Fatal("readyz still ready 500ms after SIGTERM")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The drain window: new connections, authenticated calls and sends
	// are served; readiness fails throughout.
	during := make(chan callResult, 1)
	go func() { during <- call(branch, "POST", "/api/documents/v4", "sent-during", send(3)) }()
	served := 0
	for i := 0; time.Since(sigterm) < drain-500*time.Millisecond; i++ {
		id := fmt.Sprintf("drain-window-%d", i)
		r := call(admin, "GET", "/api/companies/v4", id, nil)
		if r.err != nil || r.status != 200 {
			t.Fatalf("%.1fs after SIGTERM, a new authenticated call: %d %v %s", time.Since(sigterm).Seconds(), r.status, r.err, r.body)
		}
		if got := readyz(); got != http.StatusServiceUnavailable {
			t.Fatalf("%.1fs after SIGTERM readyz %d", time.Since(sigterm).Seconds(), got)
		}
		served++
		time.Sleep(50 * time.Millisecond)
	}

	// Then the API port refuses, while the sends are still in flight.
	var refused time.Time
	for refused.IsZero() {
		conn, err := net.DialTimeout("tcp", c.api, 200*time.Millisecond)
		if err != nil {
			refused = time.Now()
			break
		}
		conn.Close()
		if time.Since(sigterm) > drain+2*time.Second {
			t.Fatalf("the API port still accepts %s after SIGTERM", time.Since(sigterm))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d := refused.Sub(sigterm); d < drain {
		t.Errorf("the API port refused %s after SIGTERM, before the drain delay %s", d, drain)
	}
	for name, ch := range map[string]chan callResult{"sent before SIGTERM": before, "sent during the drain": during} {
		r := <-ch
		if r.err != nil || r.status != 200 {
			t.Fatalf("%s: %d %v %s", name, r.status, r.err, r.body)
		}
		var doc document
		if err := json.Unmarshal(r.body, &doc); err != nil || doc.Estado != "04" || len(doc.Clave) != 50 {
			t.Errorf("%s: answer %s (%v)", name, r.body, err)
		}
		if !r.at.After(refused) {
			t.Errorf("%s: answered at %s, before the port closed: not in flight across the close", name, r.at.Sub(sigterm))
		}
	}

	select {
	case <-c.exited:
	case <-time.After(25 * time.Second):
		t.Fatal("the service did not exit within the shutdown timeout")
	}
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d:\n%s", code, c.errs)
	}
	logs := c.errs.String()
	if strings.Contains(logs, `"msg":"stop"`) {
		t.Errorf("a part failed to stop:\n%s", logs)
	}
	for _, id := range []string{"drain-window-0", "sent-during", "sent-before"} {
		if !hasLine(logs, `"msg":"access"`, `"request_id":"`+id+`"`, `"status":200`) {
			t.Errorf("no access line of %s:\n%s", id, logs)
		}
	}
	t.Logf("%d calls served in the drain window; port closed %s after SIGTERM; exited %s after",
		served, refused.Sub(sigterm).Round(10*time.Millisecond), time.Since(sigterm).Round(10*time.Millisecond))
}

// hasLine reports whether one line of logs has every part.
func hasLine(logs string, parts ...string) bool {
	for _, line := range strings.Split(logs, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestInterruptSkipsTheDrain stops the service in a process of its own
// with a real SIGINT, as Ctrl-C in its terminal sends: it closes its ports
// and exits at once, with status 0 and every part stopped, rather than
// serve on for its drain delay as on SIGTERM (TestDrainOnSIGTERM).
func TestInterruptSkipsTheDrain(t *testing.T) {
	const drain = 20 * time.Second
	c := startChild(t, nil, "--data-dir", t.TempDir(), "--drain-delay", drain.String(), "--shutdown-timeout", "29s", "--log-level", "info")
	sigint := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.exited:
	case <-time.After(drain / 2):
		t.Fatalf("the service still runs %s after SIGINT, with a drain delay of %s:\n%s", drain/2, drain, c.errs)
	}
	took := time.Since(sigint)
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d:\n%s", code, c.errs)
	}
	logs := c.errs.String()
	if !hasLine(logs, `"msg":"stopping"`, `"cause":"interrupt signal received"`, `"drain_ms":0`) {
		t.Errorf("no stopping line saying SIGINT and no drain:\n%s", logs)
	}
	if !hasLine(logs, `"msg":"stopped"`) || strings.Contains(logs, `"msg":"stop"`) {
		t.Errorf("not every part stopped:\n%s", logs)
	}
	if _, err := net.DialTimeout("tcp", c.api, time.Second); err == nil {
		t.Error("the API port still accepts after the exit")
	}
	t.Logf("exited %s after SIGINT", took.Round(10*time.Millisecond))
}
