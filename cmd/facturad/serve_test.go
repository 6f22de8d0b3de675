package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/tenant/storetest"
)

// syncBuffer is a bytes.Buffer safe for one writer and a polling reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listenLine = regexp.MustCompile(`api https?://(\S+)\s+admin http://(\S+)`)

// startService runs `facturad serve` on the embedded default in dataDir
// and returns its output, API and admin addresses, and a stop function that
// waits for the service to return (and may be called again).
func startService(t *testing.T, dataDir string, extra ...string) (out *syncBuffer, api, admin string, stop func() error) {
	t.Helper()
	out = new(syncBuffer)
	api, admin, stop = startServiceTo(t, dataDir, out, io.Discard, out, extra...)
	return out, api, admin, stop
}

// startServiceTo is startService writing to stdout and stderr, of which
// out receives what stdout is given (the same buffer, or what is read
// from the pipe or terminal stdout writes to).
func startServiceTo(t *testing.T, dataDir string, stdout, stderr io.Writer, out *syncBuffer, extra ...string) (api, admin string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "warn"}, extra...)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, stdout, stderr, func(string) string { return "" }) }()
	deadline := time.After(30 * time.Second)
	for {
		if m := listenLine.FindStringSubmatch(out.String()); m != nil {
			api, admin = m[1], m[2]
			break
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("service exited before listening: %v\n%s", err, out.String())
		case <-deadline:
			cancel()
			t.Fatalf("service did not start:\n%s", out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	var once sync.Once
	var stopErr error
	stop = func() error { // a deferred stop after an explicit one returns at once
		once.Do(func() {
			cancel()
			stopErr = <-done
		})
		return stopErr
	}
	return api, admin, stop
}

func TestServeEmbeddedDefault(t *testing.T) {
	dir := t.TempDir()
	out, _, admin, stop := startService(t, dir)
	// The output is a buffer, not a terminal: the admin is announced, its
	// generated secrets are not (TestBootstrapSecretsOnlyToATerminal).
	if !strings.Contains(out.String(), "bootstrap admin created: usuario admin") ||
		strings.Contains(out.String(), "apiToken:") || strings.Contains(out.String(), "contrasena:") {
		t.Errorf("first start, output not a terminal:\n%s", out.String())
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get("http://" + admin + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}

	// A second start on the same data keeps the admin and prints no secret.
	out, _, _, stop = startService(t, dir)
	if strings.Contains(out.String(), "bootstrap admin created") || strings.Contains(out.String(), "contrasena") {
		t.Errorf("second start printed credentials again:\n%s", out.String())
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

func TestServeConfiguredAdmin(t *testing.T) {
	out, api, _, stop := startService(t, t.TempDir(),
		"--admin-user", "ops", "--admin-password", "a-long-password-123", "--admin-token", "tok-0123456789abcdef0123456789abcdef")
	defer stop()
	if strings.Contains(out.String(), "a-long-password-123") || strings.Contains(out.String(), "tok-0123456789") {
		t.Errorf("configured secrets were printed:\n%s", out.String())
	}
	req, _ := http.NewRequest("GET", "http://"+api+"/api/companies/v4?Name=x", nil)
	req.Header.Set("AuthToken", "tok-0123456789abcdef0123456789abcdef")
	req.SetBasicAuth("ops", "a-long-password-123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("configured admin: status %d", resp.StatusCode)
	}
	req.SetBasicAuth("ops", "wrong")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong password: status %d, want 401", resp.StatusCode)
	}
}

func TestSandboxSubcommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := new(syncBuffer)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"sandbox", "--listen", "127.0.0.1:0", "--log-level", "warn"}, out, io.Discard, func(string) string { return "" })
	}()
	re := regexp.MustCompile(`token (http://\S+)`)
	var tokenURL string
	for i := 0; i < 3000 && tokenURL == ""; i++ {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			tokenURL = m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if tokenURL == "" {
		cancel()
		t.Fatalf("sandbox did not start: %s", out.String())
	}
	resp, err := http.PostForm(tokenURL, map[string][]string{
		"grant_type": {"password"}, "client_id": {"api-stag"}, "username": {"cpj-3-101-123456@stag.comprobanteselectronicos.go.cr"}, "password": {"p"},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("token grant: status %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("sandbox stop: %v", err)
	}
}

// TestServeWithRedis starts the service with the Redis auth cache, as a
// replica of a scaled-out deployment would, and authenticates twice (cold,
// then warm through Redis).
func TestServeWithRedis(t *testing.T) {
	url := storetest.RedisURL(t)
	_, api, _, stop := startService(t, t.TempDir(), "--redis-url", url,
		"--admin-user", "ops", "--admin-password", "a-long-password-123", "--admin-token", "tok-0123456789abcdef0123456789abcdef")
	defer stop()
	for i := 0; i < 2; i++ {
		req, _ := http.NewRequest("GET", "http://"+api+"/api/companies/v4?Name=x", nil)
		req.Header.Set("AuthToken", "tok-0123456789abcdef0123456789abcdef")
		req.SetBasicAuth("ops", "a-long-password-123")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
	}
}

// metricsText returns the admin listener's /metrics.
func metricsText(t *testing.T, admin string) string {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The one replica (it holds the lease alone) exports the state gauges from
// its first refresh, and the pool statistics of what it uses.
func TestServeExportsStateMetrics(t *testing.T) {
	url := storetest.RedisURL(t)
	_, _, admin, stop := startService(t, t.TempDir(), "--redis-url", url, "--state-metrics-interval", "50ms")
	defer stop()
	want := []string{
		"facturad_state_reporter 1",
		`facturad_documents{ambiente="pruebas",estado="00",kind="document",waiting="caller"} 0`,
		`facturad_documents{ambiente="pruebas",estado="00",kind="document",waiting="service"} 0`,
		`facturad_documents{ambiente="pruebas",estado="04",kind="document",waiting="caller"} 0`,
		`facturad_documents{ambiente="pruebas",estado="04",kind="document",waiting="service"} 0`,
		`facturad_documents{ambiente="pruebas",estado="05",kind="document",waiting="caller"} 0`,
		`facturad_documents{ambiente="pruebas",estado="05",kind="document",waiting="service"} 0`,
		`facturad_documents{ambiente="produccion",estado="05",kind="received",waiting="service"} 0`,
		`facturad_documents{ambiente="pruebas",estado="00",kind="received",waiting="caller"} 0`,
		`facturad_oldest_unsettled_document_age_seconds{kind="document"} 0`,
		`facturad_oldest_unsettled_document_age_seconds{kind="received"} 0`,
		`facturad_certificates_expiring{within="30d"} 0`,
		"facturad_state_last_refresh_timestamp_seconds ",
		"facturad_redis_pool_total_conns ",
		"facturad_pipeline_capacity ",
		"facturad_pipeline_in_flight 0",
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		text := metricsText(t, admin)
		var missing []string
		for _, w := range want {
			if !strings.Contains(text, "\n"+w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %q", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// With Redis unreachable the service still takes traffic: /readyz is 200
// and says it is degraded, naming Redis, without its address.
func TestServeReadyDegradedWithoutRedis(t *testing.T) {
	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, _, admin, stop := startService(t, t.TempDir(), "--redis-url", "redis://:s3cret@"+addr+"/0")
	defer stop()
	resp, err := http.Get("http://" + admin + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"degraded"`) ||
		!strings.Contains(string(body), `"redis":"down: `) || !strings.Contains(string(body), `"store":"ok"`) {
		t.Errorf("/readyz with Redis down: %d %s", resp.StatusCode, body)
	}
	if strings.Contains(string(body), addr) || strings.Contains(string(body), "s3cret") {
		t.Errorf("/readyz quotes the Redis address or password: %s", body)
	}
}

// readyz returns /readyz's status and body.
func readyz(t *testing.T, admin string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// waitReadyz polls /readyz until it answers status with a body holding
// every one of want, and fails with the last answer after ten seconds.
func waitReadyz(t *testing.T, admin string, status int, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, body := readyz(t, admin)
		ok := got == status
		for _, w := range want {
			ok = ok && strings.Contains(body, w)
		}
		if ok {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %s, want %d with %q", got, body, status, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// On PostgreSQL and Redis, each reached through a proxy the test cuts and
// restores while the service runs: Redis gone leaves the replica ready but
// degraded; the store gone makes it not ready (503, naming the store,
// without its address); each coming back makes it ready again.
func TestServeReadinessFollowsTheStoreAndRedis(t *testing.T) {
	dbURL, db := proxyURL(t, postgresSchema(t))
	redisURL, rdb := proxyURL(t, storetest.RedisURL(t))
	_, _, admin, stop := startService(t, t.TempDir(), "--database-url", dbURL, "--redis-url", redisURL, "--master-key", masterKey(t))
	defer stop()
	waitReadyz(t, admin, http.StatusOK, `"status":"ready"`, `"store":"ok"`, `"redis":"ok"`)

	rdb.Cut()
	waitReadyz(t, admin, http.StatusOK, `"status":"degraded"`, `"store":"ok"`, `"redis":"down: `)
	rdb.Restore()
	waitReadyz(t, admin, http.StatusOK, `"status":"ready"`, `"redis":"ok"`)

	db.Cut()
	body := waitReadyz(t, admin, http.StatusServiceUnavailable,
		`"status":"not ready"`, `"code":"not_ready"`, `"message":"Not ready: store down."`, `"store":"down: `, `"redis":"ok"`)
	secrets := []string{db.Addr(), rdb.Addr()}
	if u, err := url.Parse(dbURL); err == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			secrets = append(secrets, pw)
		}
	}
	for _, secret := range secrets {
		if strings.Contains(body, secret) {
			t.Errorf("/readyz with the store down quotes %q: %s", secret, body)
		}
	}
	resp, err := http.Get("http://" + admin + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Retry-After") == "" {
		t.Errorf("503 /readyz without Retry-After")
	}
	// Liveness does not follow the store: restarting the process would not
	// bring the database back.
	if resp, err := http.Get("http://" + admin + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz with the store down: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	db.Restore()
	waitReadyz(t, admin, http.StatusOK, `"status":"ready"`, `"store":"ok"`)
	if err := stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
}

// Configured admin secrets that are too short stop the start before
// anything: the error names the setting, no listener is bound (the API
// port here is busy, and that is not what the start complains of) and no
// store is made.
func TestServeRefusesShortAdminSecrets(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tt := range []struct{ env, value, want string }{
		{"FACTURAD_ADMIN_PASSWORD", "short-pass", "FACTURAD_ADMIN_PASSWORD: must have at least 12 characters"},
		{"FACTURAD_ADMIN_TOKEN", "tok-0123456789", "FACTURAD_ADMIN_TOKEN: must have at least 32 characters"},
	} {
		t.Run("error/"+tt.env, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			var stdout, stderr strings.Builder
			err := run(context.Background(), []string{"serve", "--listen", busy.Addr().String(), "--admin-listen", "127.0.0.1:0", "--data-dir", dir},
				&stdout, &stderr, env(map[string]string{tt.env: tt.value}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "address already in use") || strings.Contains(err.Error(), tt.value) {
				t.Errorf("err = %v", err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the data folder was made: %v", err)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
}

// A clean stop ends the log with one info line, "stopped", and how long
// the stop took: without it, a stop that finished and a process killed in
// the middle of one leave the same log.
func TestServeLogsStoppedLast(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, logs syncBuffer
	args := []string{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--drain-delay", "0s", "--log-level", "info"}
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, &out, &logs, func(string) string { return "" }) }()
	for deadline := time.Now().Add(30 * time.Second); !listenLine.MatchString(out.String()); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the service did not start:\n%s\n%s", out.String(), logs.String())
		}
	}
	if strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Fatalf("stopped logged before the stop:\n%s", logs.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stop: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var last struct {
		Level  string   `json:"level"`
		Msg    string   `json:"msg"`
		TookMS *float64 `json:"took_ms"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("last log line %q: %v", lines[len(lines)-1], err)
	}
	if last.Level != "INFO" || last.Msg != "stopped" || last.TookMS == nil || *last.TookMS < 0 {
		t.Errorf("last log line %q, want an info line stopped with took_ms:\n%s", lines[len(lines)-1], logs.String())
	}
}
