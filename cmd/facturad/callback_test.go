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

	"facturad/hacienda/sandbox"
	"facturad/signer/certmint"
)

// TestCallbacksSettleWithoutPolling runs the service with a public URL on
// the built-in sandbox, which calls back when a document is settled with
// its signed verdict: every document reaches its verdict from its callback,
// with no status call at all (the service trusts the built-in sandbox's
// answer certificate, so the signed verdict is applied as it stands).
func TestCallbacksSettleWithoutPolling(t *testing.T) {
	notQuick(t, "an end-to-end drill (the Quick start runs one)")
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

// TestLostCallbacksPolled runs the service with a public URL on a sandbox
// that loses every callback: each document is asked about once its
// callback is late (callback_wait), not before, and settles without one.
func TestLostCallbacksPolled(t *testing.T) {
	notQuick(t, "an end-to-end drill (the Quick start runs one)")
	onBothStores(t, func(t *testing.T, storeArgs []string) {
		sb := sandbox.NewTestServer(t, sandbox.Options{ProcessingDelay: 100 * time.Millisecond,
			Faults: sandbox.Faults{CallbackDropRate: 1}})
		const wait = 3 * time.Second
		api := "127.0.0.1:" + strconv.Itoa(freePort(t))
		// A sandbox elsewhere (its faults set here), which may call back
		// over plain HTTP.
		args := append([]string{"--hacienda-env", "sandbox", "--hacienda-api-url", sb.APIURL, "--hacienda-token-url", sb.TokenURL,
			"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken,
			"--listen", api, "--public-url", "http://" + api, "--callback-wait", wait.String()}, trustSandbox(t, sb)...)
		_, _, admin, stop := startService(t, t.TempDir(), append(args, storeArgs...)...)
		defer stop()
		adm := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
		ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
		if err != nil {
			t.Fatal(err)
		}
		branch := createCompany(t, adm, ca, "3101123456")
		const n = 3
		claves := make([]string, n)
		sentAt := make([]time.Time, n)
		for i, body := range sendRequests(t, "lost-callback")[:n] {
			if i > 0 {
				body = referTo(body, claves[0]) // the notes refer to the FE sent first
			}
			var sent document
			sentAt[i] = time.Now()
			branch.json("POST", "/api/documents/v4", body, 200, &sent)
			claves[i] = sent.Clave
		}
		deadline := time.Now().Add(30 * time.Second)
		for i, clave := range claves {
			for {
				var d document
				branch.json("GET", "/api/documents/"+clave+"/v4", nil, 200, &d)
				if d.Estado == "01" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("document %s is still %s %s after its lost callback", clave, d.Estado, time.Since(sentAt[i]))
				}
				time.Sleep(50 * time.Millisecond)
			}
			if took := time.Since(sentAt[i]); took < wait*2/3 {
				t.Errorf("document %s settled %s after its send, before its callback was late (%s)", clave, took, wait*2/3)
			}
		}
		if st := sb.Stats(); st.CallbacksDropped != n || st.Callbacks != 0 {
			t.Errorf("sandbox: %d callbacks dropped and %d posted, want %d dropped", st.CallbacksDropped, st.Callbacks, n)
		}
		if got := metricSum(t, "http://"+admin+"/metrics", `facturad_hacienda_calls_total{op="status"`); got != n {
			t.Errorf("%v status calls for %d documents whose callbacks were lost, want one each", got, n)
		}
	})
}
