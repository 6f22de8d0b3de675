package main

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"facturad/signer/certmint"
)

// TestCallbacksSettleWithoutPolling runs the service with a public URL on
// the built-in sandbox, which calls back when a document is settled with
// its signed verdict: every document reaches its verdict from its callback,
// with no status call at all (the service trusts the built-in sandbox's
// answer certificate, so the signed verdict is applied as it stands).
func TestCallbacksSettleWithoutPolling(t *testing.T) {
	api := "127.0.0.1:" + strconv.Itoa(freePort(t))
	// The sandbox takes longer than the first poll would wait (3 s), so a
	// poll that callbacks did not put off would ask before the verdict.
	_, _, admin, stop := startService(t, t.TempDir(), "--listen", api, "--public-url", "http://"+api, "--sandbox-processing-delay", "5s",
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
	defer stop()
	adm := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, adm, ca, "3101123456")

	var claves []string
	for i, body := range sendRequests(t, "callback") {
		if i > 0 {
			body = referTo(body, claves[0]) // the notes refer to the FE sent first
		}
		var sent document
		branch.json("POST", "/api/documents/v4", body, 200, &sent)
		claves = append(claves, sent.Clave)
	}
	// Reading a document never asks the tax authority: wait for the
	// callbacks to settle every one.
	deadline := time.Now().Add(60 * time.Second)
	for _, clave := range claves {
		for {
			var d document
			branch.json("GET", "/api/documents/"+clave+"/v4", nil, 200, &d)
			if d.Estado == "01" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("document %s is still %s without a callback", clave, d.Estado)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Each document was settled by its callback's signed verdict: had a
	// poll settled it first, its callback would have found it settled.
	if got := metricSum(t, "http://"+admin+"/metrics", `facturad_pipeline_callbacks_total{outcome="applied"}`); got != float64(len(claves)) {
		t.Fatalf("%v callbacks applied a signed verdict for %d documents, want one each", got, len(claves))
	}
	if got := metricSum(t, "http://"+admin+"/metrics", `facturad_hacienda_calls_total{op="status"`); got != 0 {
		t.Fatalf("%v status calls for %d documents settled by callback, want none", got, len(claves))
	}
	// The same counter counts the submissions: a zero above is a count.
	if got := metricSum(t, "http://"+admin+"/metrics", `facturad_hacienda_calls_total{op="submit"`); got != float64(len(claves)) {
		t.Fatalf("%v submissions counted for %d documents sent, want one each", got, len(claves))
	}
	// A callback with a wrong token is not found and asks nothing.
	req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/hacienda/callback/"+claves[0]+"/forged", strings.NewReader(`{"ind-estado":"rechazado"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("forged callback: %d, want 404", resp.StatusCode)
	}
	if got := metricSum(t, "http://"+admin+"/metrics", `facturad_pipeline_callbacks_total{outcome="refused"}`); got != 1 {
		t.Errorf("refused callbacks: %v, want 1", got)
	}
	if got := metricSum(t, "http://"+admin+"/metrics", `facturad_hacienda_calls_total{op="status"`); got != 0 {
		t.Errorf("a forged callback made the service ask: %v status calls", got)
	}
}

// freePort is a TCP port free on the loopback interface a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// metricSum adds the values of the series whose line starts with prefix.
func metricSum(t *testing.T, url, prefix string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}
