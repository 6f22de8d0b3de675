package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"facturad/signer"
	"facturad/tenant/storetest"
)

// waitMetric waits until /metrics has the sample line want.
func waitMetric(t *testing.T, admin, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		text := metricsText(t, admin)
		if strings.Contains(text, "\n"+want+"\n") {
			return
		}
		if time.Now().After(deadline) {
			var deps []string
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(l, "facturad_dependency_up") {
					deps = append(deps, l)
				}
			}
			t.Fatalf("no %q in /metrics; dependency lines: %v", want, deps)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readyzBody returns /readyz's status code and body, decoded.
func readyzBody(t *testing.T, admin string) (int, map[string]any) {
	t.Helper()
	code, b := readyz(t, admin)
	var body map[string]any
	if err := json.Unmarshal([]byte(b), &body); err != nil {
		t.Fatalf("readyz %d: %s", code, b)
	}
	return code, body
}

func fastProbes(t *testing.T) {
	fast, slow := dependencyProbeInterval, slowProbeInterval
	dependencyProbeInterval, slowProbeInterval = 50*time.Millisecond, 50*time.Millisecond
	t.Cleanup(func() { dependencyProbeInterval, slowProbeInterval = fast, slow })
}

// A fresh replica's /metrics has its build, its dependencies, and every
// counter whose label values are known at 0, before anything happened.
func TestFreshMetrics(t *testing.T) {
	fastProbes(t)
	_, _, admin, stop := startService(t, t.TempDir(), "--redis-url", storetest.RedisURL(t))
	defer stop()
	waitMetric(t, admin, `facturad_dependency_up{dependency="store"} 1`)
	waitMetric(t, admin, `facturad_dependency_up{dependency="redis"} 1`)
	waitMetric(t, admin, `facturad_dependency_up{dependency="hacienda"} 1`) // the built-in sandbox
	text := metricsText(t, admin)
	for _, dep := range []string{"smtp", "archive"} { // not configured
		if strings.Contains(text, `facturad_dependency_up{dependency="`+dep+`"}`) {
			t.Errorf("dependency_up for %s, which is not configured", dep)
		}
	}
	build := regexp.MustCompile(`(?m)^facturad_build_info\{goversion="go[^"]+",revision="[^"]+",signer="([^"]+)",version="[^"]+"\} 1$`).FindStringSubmatch(text)
	if build == nil || build[1] != signer.RSABackend {
		t.Errorf("build_info: %v", build)
	}
	for _, want := range []string{
		`facturad_pipeline_refused_total{reason="lane_full"} 0`,
		`facturad_pipeline_refused_total{reason="all_full"} 0`,
		`facturad_pipeline_refused_total{reason="stopping"} 0`,
		`facturad_pipeline_callbacks_total{outcome="failed"} 0`,
		`facturad_pipeline_credential_stops_total{event="stopped"} 0`,
		`facturad_pipeline_documents_total{estado="05",op="send"} 0`,
		`facturad_pipeline_documents_total{estado="05",op="retry"} 0`,
		`facturad_ratelimit_decisions_total{by="redis"} 0`,
		`facturad_ratelimit_decisions_total{by="fallback"} 0`,
		`facturad_delivery_attempts_total{kind="webhook",outcome="failed"} 0`,
		`facturad_delivery_attempts_total{kind="email",outcome="failed"} 0`,
		`facturad_audit_record_failures_total 0`,
		`facturad_http_requests_total{method="POST",route="/api/documents/v4",status="5xx"} 0`,
		`facturad_webhook_companies{state="failing"} 0`,
	} {
		if !strings.Contains(text, "\n"+want+"\n") {
			t.Errorf("a fresh /metrics lacks %s", want)
		}
	}
	// Every counter family is there (a family with no series is not
	// served at all).
	for _, family := range []string{
		"facturad_pipeline_refused_total", "facturad_pipeline_callbacks_total", "facturad_pipeline_credential_stops_total",
		"facturad_pipeline_documents_total", "facturad_pipeline_registry_findings_total", "facturad_pipeline_quota_refused_total",
		"facturad_ratelimit_decisions_total", "facturad_delivery_attempts_total", "facturad_delivery_purged_total",
		"facturad_audit_record_failures_total", "facturad_http_requests_total", "facturad_registry_calls_total",
	} {
		if !strings.Contains(text, "# TYPE "+family+" counter\n") {
			t.Errorf("a fresh /metrics has no series of %s", family)
		}
	}
}

// The store failing shows in dependency_up and /readyz (503); Redis
// failing shows in dependency_up and in /readyz's body ("degraded"),
// which stays 200, as the limiter falls back to pacing alone.
func TestDependencyDown(t *testing.T) {
	fastProbes(t)
	dbURL, db := proxyURL(t, postgresSchema(t))
	redisURL, rdb := proxyURL(t, storetest.RedisURL(t))
	_, _, admin, stop := startService(t, t.TempDir(), "--database-url", dbURL, "--redis-url", redisURL, "--master-key", masterKey(t))
	defer stop()
	waitMetric(t, admin, `facturad_dependency_up{dependency="store"} 1`)
	waitMetric(t, admin, `facturad_dependency_up{dependency="redis"} 1`)

	rdb.Cut()
	waitMetric(t, admin, `facturad_dependency_up{dependency="redis"} 0`)
	code, body := readyzBody(t, admin)
	if code != http.StatusOK || body["status"] != "degraded" {
		t.Errorf("readyz with Redis down: %d %v", code, body)
	}
	rdb.Restore()
	waitMetric(t, admin, `facturad_dependency_up{dependency="redis"} 1`)

	db.Cut()
	waitMetric(t, admin, `facturad_dependency_up{dependency="store"} 0`)
	if code, body := readyzBody(t, admin); code != http.StatusServiceUnavailable {
		t.Errorf("readyz with the store down: %d %v", code, body)
	}
	db.Restore()
	waitMetric(t, admin, `facturad_dependency_up{dependency="store"} 1`)
}
