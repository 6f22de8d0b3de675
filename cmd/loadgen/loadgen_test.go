package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func loadArgs(api string, extra ...string) []string {
	return append([]string{"--url", "http://" + api,
		"--admin-user", testAdminUser, "--admin-password", testAdminPass, "--admin-token", testAdminToken,
		"--progress", "0", "--max-time", "2m"}, extra...)
}

// loadProxy is a reverse proxy in front of a running service that counts
// the calls by method and path (numeric segments as {id}), and the most
// that were in flight at once, in all and by path; it can hold each call
// for a while first, to make calls overlap or the service seem slow.
type loadProxy struct {
	URL   string
	delay time.Duration

	mu          sync.Mutex
	calls       map[string]int
	inFlight    map[string]int
	maxInFlight map[string]int // "" in all
}

func newLoadProxy(t *testing.T, api string, delay time.Duration) *loadProxy {
	t.Helper()
	target, err := url.Parse("http://" + api)
	if err != nil {
		t.Fatal(err)
	}
	p := &loadProxy{delay: delay, calls: map[string]int{}, inFlight: map[string]int{}, maxInFlight: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		segs := strings.Split(r.URL.Path, "/")
		for i, s := range segs {
			if s != "" && strings.Trim(s, "0123456789") == "" {
				segs[i] = "{id}"
			}
		}
		key := r.Method + " " + strings.Join(segs, "/")
		p.enter(key)
		defer p.leave(key)
		time.Sleep(p.delay)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func (p *loadProxy) enter(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[key]++
	for _, k := range []string{"", key} {
		p.inFlight[k]++
		p.maxInFlight[k] = max(p.maxInFlight[k], p.inFlight[k])
	}
}

func (p *loadProxy) leave(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inFlight[""]--
	p.inFlight[key]--
}

// counts returns copies of the call counts and of the most in flight.
func (p *loadProxy) counts() (calls, maxInFlight map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	calls, maxInFlight = map[string]int{}, map[string]int{}
	for k, v := range p.calls {
		calls[k] = v
	}
	for k, v := range p.maxInFlight {
		maxInFlight[k] = v
	}
	return calls, maxInFlight
}

const (
	loadCreatePath = "POST /api/companies/v4"
	loadReadPath   = "GET /api/companies/{id}/branches/v4"
)

// TestLoadgenSend sends 20 documents through the running service with the
// command, checks each until the tax authority accepts it, and reads the
// counts back from the printed report.
func TestLoadgenSend(t *testing.T) {
	api := startService(t).api

	var out, errs bytes.Buffer
	args := loadArgs(api, "--companies", "2", "--workers", "4", "--count", "20", "--check", "--check-timeout", "20s")
	if err := run(context.Background(), args, &out, &errs, func(string) string { return "" }); err != nil {
		t.Fatalf("loadgen: %v\n%s%s", err, out.String(), errs.String())
	}
	report := out.String()
	for _, want := range []string{
		"mode:        send, 2 companies, 4 workers, stopped by count\n",
		"warm-up:     2 calls (not measured)\n",
		"requests:    20 (ok 20, errors 0) in ",
		"estados:     04=20\n",
		"errors:      none\n",
		", final 01=20, not final 0, check errors none\n",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if m := regexp.MustCompile(`throughput:  ([0-9.]+) sends/s`).FindStringSubmatch(report); m == nil || m[1] == "0.0" {
		t.Errorf("no throughput in the report:\n%s", report)
	}
	for _, secret := range []string{testAdminPass, testAdminToken} {
		if strings.Contains(report+errs.String(), secret) {
			t.Errorf("the output shows a secret")
		}
	}
}

// TestLoadgenRead repeats the authenticated branch listing for a fixed
// count and checks the report's figures.
func TestLoadgenRead(t *testing.T) {
	api := startService(t).api

	o := loadOptions{
		URLs: []string{"http://" + api}, AdminUser: testAdminUser, AdminPassword: testAdminPass, AdminToken: testAdminToken,
		Mode: "read", Companies: 3, Workers: 5, Count: 50, Warmup: 1, MaxTime: time.Minute,
		CheckTimeout: time.Second, RequestTimeout: 10 * time.Second, RunID: "readtest",
	}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	r, err := loadgen(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 50 || r.OK != 50 || len(r.Errors) != 0 || r.Warmup != 3 || r.StoppedBy != "count" {
		t.Fatalf("report: %+v", r)
	}
	if r.Latency.P50 <= 0 || r.Latency.P50 > r.Latency.P99 || r.Latency.P99 > r.Latency.Max || r.Throughput() <= 0 {
		t.Errorf("latencies: %+v, throughput %f", r.Latency, r.Throughput())
	}

	// A wrong admin password stops the run at setup, with the status.
	o.AdminPassword = "wrong-password"
	if _, err := loadgen(context.Background(), o, io.Discard); err == nil || !strings.Contains(err.Error(), "status 401") {
		t.Errorf("wrong admin password: %v", err)
	}
}

// TestLoadgenSetupBounded checks that no phase of a run, the company
// creation and the warm-up included, has more calls in flight than
// --workers: each call is held 30 ms by a proxy so that they overlap.
func TestLoadgenSetupBounded(t *testing.T) {
	api := startService(t).api
	proxy := newLoadProxy(t, api, 30*time.Millisecond)

	for _, workers := range []int{1, 3} {
		o := loadOptions{
			URLs: []string{proxy.URL}, AdminUser: testAdminUser, AdminPassword: testAdminPass, AdminToken: testAdminToken,
			Mode: "read", Companies: 7, Workers: workers, Count: 6, Warmup: 2, MaxTime: time.Minute,
			CheckTimeout: time.Second, RequestTimeout: 10 * time.Second, RunID: "bounded",
		}
		before, _ := proxy.counts()
		if _, err := loadgen(context.Background(), o, io.Discard); err != nil {
			t.Fatal(err)
		}
		calls, inFlight := proxy.counts()
		if got := calls[loadCreatePath] - before[loadCreatePath]; got != 7 {
			t.Errorf("workers %d: %d companies created, want 7", workers, got)
		}
		if got := calls[loadReadPath] - before[loadReadPath]; got != 7*2+6 {
			t.Errorf("workers %d: %d reads, want %d", workers, got, 7*2+6)
		}
		if inFlight[""] != workers || inFlight[loadCreatePath] != workers || inFlight[loadReadPath] != workers {
			t.Errorf("workers %d: most calls in flight %v, want %d in all and for each path", workers, inFlight, workers)
		}
		proxy.mu.Lock()
		clear(proxy.maxInFlight)
		proxy.mu.Unlock()
	}
}

// TestLoadgenOpenLoop runs the open loop against a service made slow by a
// proxy that holds each call 40 ms. With one worker and a call due every
// 10 ms, every call after the first finds the worker busy, and each waits
// 30 ms longer than the one before: timed from its due time, the tenth
// call takes about 400 ms, where timing from the moment it was made
// would show 40 ms for all. With a worker for every call none is late,
// and the duration bounds the calls to those due within it.
func TestLoadgenOpenLoop(t *testing.T) {
	api := startService(t).api
	proxy := newLoadProxy(t, api, 40*time.Millisecond)

	tests := []struct {
		name           string
		workers        int
		rate           float64
		count          int
		duration       time.Duration
		wantRequests   int
		wantLate       int
		wantStoppedBy  string
		minP50, minMax time.Duration
	}{
		{"one worker falls behind", 1, 100, 10, 0, 10, 9, "count", 120 * time.Millisecond, 300 * time.Millisecond},
		// More workers than calls: none can find every worker busy, however
		// slow the machine makes the service.
		{"a worker for every call", 32, 50, 0, 400 * time.Millisecond, 20, 0, "duration", 40 * time.Millisecond, 40 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := loadOptions{
				URLs: []string{proxy.URL}, AdminUser: testAdminUser, AdminPassword: testAdminPass, AdminToken: testAdminToken,
				Mode: "read", Companies: 2, Workers: tt.workers, Rate: tt.rate, Count: tt.count, Duration: tt.duration,
				Warmup: 1, MaxTime: time.Minute, CheckTimeout: time.Second, RequestTimeout: 10 * time.Second,
				RunID: "open" + strconv.Itoa(tt.workers),
			}
			if err := o.validate(); err != nil {
				t.Fatal(err)
			}
			r, err := loadgen(context.Background(), o, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests != tt.wantRequests || r.OK != tt.wantRequests || r.Late != tt.wantLate || r.StoppedBy != tt.wantStoppedBy {
				t.Errorf("requests %d (ok %d), late %d, stopped by %s; want %d, %d late, stopped by %s",
					r.Requests, r.OK, r.Late, r.StoppedBy, tt.wantRequests, tt.wantLate, tt.wantStoppedBy)
			}
			if r.Latency.P50 < tt.minP50 || r.Latency.Max < tt.minMax {
				t.Errorf("latency %s, want p50 at least %s and max at least %s", r.Latency, tt.minP50, tt.minMax)
			}
			var out bytes.Buffer
			r.print(&out)
			if want := fmt.Sprintf("arrivals:    open loop at %g/s, latency from each call's due time; %d late", tt.rate, tt.wantLate); !strings.Contains(out.String(), want) {
				t.Errorf("report lacks %q:\n%s", want, out.String())
			}
		})
	}
}

// TestLoadgenURLs spreads a run over two replicas (two proxies in front
// of one service): the setup goes to the first only, each company is
// warmed on both, and the measured calls alternate between them.
func TestLoadgenURLs(t *testing.T) {
	api := startService(t).api
	a, b := newLoadProxy(t, api, 0), newLoadProxy(t, api, 0)

	var out, errs bytes.Buffer
	args := []string{"--url", a.URL, "--url", b.URL, "--mode", "read", "--companies", "3", "--workers", "4", "--count", "21",
		"--admin-user", testAdminUser, "--admin-password", testAdminPass, "--admin-token", testAdminToken, "--progress", "0", "--max-time", "2m"}
	// The environment's URL, a remote one, is only the default: --url replaces it.
	env := func(k string) string { return map[string]string{"FACTURAD_LOADGEN_URL": "http://192.0.2.1:8080"}[k] }
	if err := run(context.Background(), args, &out, &errs, env); err != nil {
		t.Fatalf("loadgen: %v\n%s%s", err, out.String(), errs.String())
	}
	for _, want := range []string{"targets:     2 URLs, called in turn", "warm-up:     6 calls", "requests:    21 (ok 21, errors 0)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	callsA, _ := a.counts()
	callsB, _ := b.counts()
	if callsA[loadCreatePath] != 3 || callsB[loadCreatePath] != 0 {
		t.Errorf("companies created through each URL: %d and %d, want 3 and 0", callsA[loadCreatePath], callsB[loadCreatePath])
	}
	// 3 warm-up calls each, then the 21 measured calls in turn: 11 and 10.
	if callsA[loadReadPath] != 3+11 || callsB[loadReadPath] != 3+10 {
		t.Errorf("reads through each URL: %d and %d, want 14 and 13", callsA[loadReadPath], callsB[loadReadPath])
	}
}

// TestLoadgenJSON writes the summary as JSON to a file and to standard
// output, and reads it back; a --json path that cannot be written stops
// the run before it starts.
func TestLoadgenJSON(t *testing.T) {
	api := startService(t).api
	dir := t.TempDir()
	file := filepath.Join(dir, "run.json")
	tests := []struct {
		name      string
		extra     []string
		json      func(stdout, stderr string) []byte
		wantRate  float64
		wantError string
	}{
		{"file", []string{"--json", file}, func(string, string) []byte {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}, 0, ""},
		{"stdout", []string{"--json", "-", "--rate", "500"}, func(stdout, _ string) []byte { return []byte(stdout) }, 500, ""},
		{"unwritable", []string{"--json", filepath.Join(dir, "missing", "run.json")}, nil, 0, "--json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			args := loadArgs(api, append([]string{"--mode", "read", "--companies", "2", "--workers", "3", "--count", "12"}, tt.extra...)...)
			err := run(context.Background(), args, &out, &errs, func(string) string { return "" })
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) || strings.Contains(errs.String(), "companies created") {
					t.Fatalf("error %v, want one about %q before the setup\n%s", err, tt.wantError, errs.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("loadgen: %v\n%s%s", err, out.String(), errs.String())
			}
			if !strings.Contains(out.String()+errs.String(), "requests:    12 (ok 12, errors 0)") {
				t.Errorf("no text report:\n%s%s", out.String(), errs.String())
			}
			checkLoadJSON(t, tt.json(out.String(), errs.String()), tt.wantRate)
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left beside the summary: %v", entries)
	}
}

// checkLoadJSON checks a summary of 12 reads by 3 workers at rate.
func checkLoadJSON(t *testing.T, b []byte, rate float64) {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatalf("summary: %v\n%s", err, b)
	}
	for _, k := range []string{"mode", "urls", "workers", "rate_per_s", "stopped_by", "duration_s", "requests", "ok", "sends",
		"throughput_per_s", "late_arrivals", "latency_ms", "statuses", "errors", "loadgen_cpu_s", "service_cpu_s",
		"service_cpu_per_request_ms", "machine_busy_s", "machine_busy_pct", "cores", "rsa_sign_cpu_ms", "rsa_ratio", "aux_processes"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	var s loadSummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	l := s.LatencyMS
	if s.Mode != "read" || s.Workers != 3 || s.Rate != rate || s.Requests != 12 || s.OK != 12 || s.Sends != 0 ||
		s.StoppedBy != "count" || !maps.Equal(s.Statuses, map[string]int{"200": 12}) || len(s.Errors) != 0 ||
		s.DurationS <= 0 || s.Throughput <= 0 || s.ServiceCPUS != nil || s.ServiceCPUPerRequestMS != nil {
		t.Errorf("summary: %s", b)
	}
	if l.P50 <= 0 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.P999 || l.P999 > l.Max {
		t.Errorf("latencies: %+v", l)
	}
}

// TestLoadgenRSAReference measures the raw RSA signature after a run of
// sends when the service's process is known and sets the service's CPU per document against it;
// without --server-pid, or with --rsa-reference=false, it is not measured.
func TestLoadgenRSAReference(t *testing.T) {
	svc := startService(t)
	api, pid := svc.api, strconv.Itoa(svc.pid)
	tests := []struct {
		name  string
		extra []string
		want  bool
	}{
		{"with the service's process", []string{"--server-pid", pid, "--settle", "0"}, true},
		{"turned off", []string{"--server-pid", pid, "--rsa-reference=false", "--settle", "0"}, false},
		{"service's process unknown", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			args := loadArgs(api, append([]string{"--companies", "2", "--workers", "4", "--count", "20", "--json", "-"}, tt.extra...)...)
			if err := run(context.Background(), args, &out, &errs, func(string) string { return "" }); err != nil {
				t.Fatalf("loadgen: %v\n%s%s", err, out.String(), errs.String())
			}
			var s loadSummary
			if err := json.Unmarshal(out.Bytes(), &s); err != nil {
				t.Fatalf("summary: %v\n%s", err, out.String())
			}
			text := errs.String()
			if !tt.want {
				if s.RSASignCPUMS != nil || s.RSARatio != nil || strings.Contains(text, "raw RSA-2048") {
					t.Errorf("RSA reference measured when it should not be:\n%s%s", out.String(), text)
				}
				return
			}
			// A signature takes about a millisecond; the race detector and a
			// busy machine may make it slower, never 50 µs or 200 ms.
			if s.RSASignCPUMS == nil || *s.RSASignCPUMS < 0.05 || *s.RSASignCPUMS > 200 || s.RSARatio == nil || s.ServiceCPUPerRequestMS == nil {
				t.Fatalf("summary: %s", out.String())
			}
			// The ratio is taken with the signature measured during the run
			// when a batch was (a short run may end before the first).
			rsa := *s.RSASignCPUMS
			if s.RSASignCPUDuringMS != nil {
				rsa = *s.RSASignCPUDuringMS
				if want := fmt.Sprintf("rsa:         raw RSA-2048 sign CPU %.3f ms during the run", rsa); !strings.Contains(text, want) {
					t.Errorf("report lacks %q:\n%s", want, text)
				}
			}
			if got, want := *s.RSARatio, rsa / *s.ServiceCPUPerRequestMS; math.Abs(got-want) > 1e-9*want {
				t.Errorf("ratio %g, want %g", got, want)
			}
			if s.RSARatioAfter == nil || math.Abs(*s.RSARatioAfter - *s.RSASignCPUMS / *s.ServiceCPUPerRequestMS) > 1e-9 {
				t.Errorf("ratio after the run %v, want %g", s.RSARatioAfter, *s.RSASignCPUMS / *s.ServiceCPUPerRequestMS)
			}
			if want := fmt.Sprintf("rsa:         raw RSA-2048 sign CPU %.3f ms after the run; ratio (RSA ÷ service CPU per document) %.3f\n",
				*s.RSASignCPUMS, *s.RSARatioAfter); !strings.Contains(text, want) {
				t.Errorf("report lacks %q:\n%s", want, text)
			}
		})
	}
}

// The report warns when the two raw RSA references are far apart, and
// only then.
func TestLoadgenRSAReferencesDisagree(t *testing.T) {
	tests := []struct {
		name          string
		during, after time.Duration
		warn          bool
	}{
		{"alike", 900 * time.Microsecond, 970 * time.Microsecond, false},
		{"during lower by a third", 650 * time.Microsecond, 970 * time.Microsecond, false},
		{"during a third of after", 272 * time.Microsecond, 970 * time.Microsecond, true},
		{"during twice after", 2 * time.Millisecond, time.Millisecond, true},
		{"after unknown", 272 * time.Microsecond, -1, false},
		{"during unknown", -1, 970 * time.Microsecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := loadReport{Requests: 100, ServerCPU: 250 * time.Millisecond, RSASignDuring: tt.during, RSASign: tt.after}
			var out bytes.Buffer
			r.printCPU(&out)
			if got := strings.Contains(out.String(), "rsa:         warning:"); got != tt.warn {
				t.Errorf("warning %v, want %v:\n%s", got, tt.warn, out.String())
			}
			if got := r.summary().RSAReferencesDisagree; got != tt.warn {
				t.Errorf("rsa_references_disagree %v, want %v", got, tt.warn)
			}
		})
	}
}

// TestLoadgenURLFlag checks how --url and FACTURAD_LOADGEN_URL combine.
func TestLoadgenURLFlag(t *testing.T) {
	tests := []struct {
		name string
		env  string
		args []string
		want []string
	}{
		{"default", "", nil, []string{"http://127.0.0.1:8080"}},
		{"environment", "http://127.0.0.1:9000", nil, []string{"http://127.0.0.1:9000"}},
		{"flag replaces environment", "http://127.0.0.1:9000", []string{"--url", "http://[::1]:1"}, []string{"http://[::1]:1"}},
		{"repeated", "http://127.0.0.1:9000", []string{"--url", "http://127.0.0.1:1", "--url", "http://127.0.0.1:2"},
			[]string{"http://127.0.0.1:1", "http://127.0.0.1:2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseLoadgenArgs(tt.args, io.Discard, io.Discard, func(k string) string {
				if k == "FACTURAD_LOADGEN_URL" {
					return tt.env
				}
				return ""
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.URLs, tt.want) {
				t.Errorf("urls %q, want %q", o.URLs, tt.want)
			}
		})
	}
}

// TestCommandLine: --help lists every flag once with its default and the
// environment variable it is read from, on stdout; a mistake on the
// command line is one line naming it, with nothing written beside it.
func TestCommandLine(t *testing.T) {
	t.Run("ok/help", func(t *testing.T) {
		var stdout, stderr strings.Builder
		err := run(context.Background(), []string{"--help"}, &stdout, &stderr, func(string) string { return "" })
		if !errors.Is(err, flag.ErrHelp) || stderr.Len() > 0 {
			t.Fatalf("err %v, stderr %q", err, stderr.String())
		}
		help := stdout.String()
		if !strings.HasPrefix(help, "loadgen: load a running facturad service and report its throughput\nusage: loadgen [flags]\n") {
			t.Errorf("help does not start with what loadgen does and its usage:\n%s", help)
		}
		for _, want := range []string{
			"  --url\n      base URL of the running service; repeat it for several replicas, which the calls go to in turn\n" +
				"      (default http://127.0.0.1:8080; env FACTURAD_LOADGEN_URL)\n",
			"  --admin-user\n", "(default \"admin\"; env FACTURAD_ADMIN_USER)\n",
			"(default unset; env FACTURAD_ADMIN_PASSWORD)\n", "(default unset; env FACTURAD_ADMIN_TOKEN)\n",
			"  --workers\n", "(default 8)\n", "  --run-id\n", "(default: random)\n", "  --settle\n", "(default 1m0s)\n",
		} {
			if !strings.Contains(help, want) {
				t.Errorf("help lacks %q:\n%s", want, help)
			}
		}
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		names := 0
		for _, l := range strings.Split(help, "\n") {
			if name, ok := strings.CutPrefix(l, "  --"); ok {
				names++
				fs.Bool(name, false, "") // panics on a flag listed twice
			}
		}
		if names != 24 {
			t.Errorf("%d flags listed, want 24:\n%s", names, help)
		}
	})
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"bad value", []string{"--workers", "many"}, `invalid value "many" for --workers: `},
		{"unknown flag", []string{"--worker", "3"}, "unknown flag --worker (did you mean --workers?); `loadgen --help` lists the flags"},
		{"argument", []string{"--count", "1", "stray"}, `unexpected arguments ["stray"]`},
	} {
		t.Run("error/"+tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			err := run(context.Background(), tt.args, &stdout, &stderr, func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %v, want one line saying %q", err, tt.want)
			}
			if stdout.Len() > 0 || stderr.Len() > 0 {
				t.Errorf("written beside the error: stdout %q, stderr %q", stdout.String(), stderr.String())
			}
		})
	}
}

func TestLoadgenOptions(t *testing.T) {
	valid := func() loadOptions {
		return loadOptions{URLs: []string{"http://127.0.0.1:8080"}, AdminUser: "u", AdminPassword: "p", AdminToken: "t",
			Mode: "send", Companies: 1, Workers: 1, Count: 1, MaxTime: time.Minute, CheckTimeout: time.Second,
			RequestTimeout: time.Second, RunID: "x"}
	}
	tests := []struct {
		name   string
		change func(*loadOptions)
		want   string // empty: valid
	}{
		{"ok/count", func(*loadOptions) {}, ""},
		{"ok/duration", func(o *loadOptions) { o.Count, o.Duration = 0, time.Second }, ""},
		{"ok/localhost", func(o *loadOptions) { o.URLs = []string{"http://localhost:8080"} }, ""},
		{"ok/ipv6 loopback", func(o *loadOptions) { o.URLs = []string{"http://[::1]:8080"} }, ""},
		{"ok/remote allowed", func(o *loadOptions) { o.URLs, o.AllowRemote = []string{"https://facturas.example.com"}, true }, ""},
		{"ok/two urls", func(o *loadOptions) { o.URLs = append(o.URLs, "http://127.0.0.2:8080") }, ""},
		{"ok/read", func(o *loadOptions) { o.Mode = "read" }, ""},
		{"ok/open loop", func(o *loadOptions) { o.Rate = 0.5 }, ""},
		{"error/negative rate", func(o *loadOptions) { o.Rate = -1 }, "rate"},
		{"error/rate not a number", func(o *loadOptions) { o.Rate = math.NaN() }, "rate"},
		{"error/rate too high", func(o *loadOptions) { o.Rate = math.Inf(1) }, "rate"},
		{"error/no bound", func(o *loadOptions) { o.Count = 0 }, "no bound"},
		{"error/remote", func(o *loadOptions) { o.URLs = []string{"http://10.1.2.3:8080"} }, "not a loopback address"},
		{"error/remote name", func(o *loadOptions) { o.URLs = []string{"http://facturas.example.com"} }, "not a loopback address"},
		{"error/second url remote", func(o *loadOptions) { o.URLs = append(o.URLs, "http://10.1.2.3:8080") }, "not a loopback address"},
		{"error/no url", func(o *loadOptions) { o.URLs = nil }, "url: give 1"},
		{"error/not http", func(o *loadOptions) { o.URLs = []string{"ftp://127.0.0.1/"} }, "not an http(s) URL"},
		{"error/duration too long", func(o *loadOptions) { o.Duration = 2 * time.Hour }, "duration"},
		{"error/count too big", func(o *loadOptions) { o.Count = loadMaxCount + 1 }, "count"},
		{"error/no workers", func(o *loadOptions) { o.Workers = 0 }, "workers"},
		{"error/no admin", func(o *loadOptions) { o.AdminToken = "" }, "admin credentials"},
		{"error/mode", func(o *loadOptions) { o.Mode = "write" }, "mode"},
		{"error/check of reads", func(o *loadOptions) { o.Mode, o.Check = "read", true }, "check"},
		{"error/run id", func(o *loadOptions) { o.RunID = "a b" }, "run-id"},
		{"ok/aux processes", func(o *loadOptions) { o.AuxProcesses = []string{"postgres", "redis-server"} }, ""},
		{"error/aux name too long", func(o *loadOptions) { o.AuxProcesses = []string{"a-name-of-16-byt"} }, "aux-process"},
		{"error/aux path", func(o *loadOptions) { o.AuxProcesses = []string{"/usr/bin/redis"} }, "aux-process"},
		{"error/aux empty", func(o *loadOptions) { o.AuxProcesses = []string{""} }, "aux-process"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid()
			tt.change(&o)
			err := o.validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one about %q", err, tt.want)
			}
		})
	}

	// The command refuses an unbounded run before touching the network.
	err := run(context.Background(), []string{"--admin-user", "u", "--admin-password", "p", "--admin-token", "t"},
		io.Discard, io.Discard, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "no bound") {
		t.Fatalf("unbounded run: %v", err)
	}
}

func TestPercentiles(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		n    int // latencies 1 ms to n ms, given in reverse
		want percentiles
	}{
		{0, percentiles{}},
		{1, percentiles{ms, ms, ms, ms, ms}},
		{100, percentiles{50 * ms, 90 * ms, 99 * ms, 100 * ms, 100 * ms}},
		{2000, percentiles{1000 * ms, 1800 * ms, 1980 * ms, 1998 * ms, 2000 * ms}},
	}
	for _, tt := range tests {
		var d []time.Duration
		for i := tt.n; i >= 1; i-- {
			d = append(d, time.Duration(i)*ms)
		}
		if p := percentilesOf(d); p != tt.want {
			t.Errorf("%d latencies: %+v, want %+v", tt.n, p, tt.want)
		}
	}
}

// TestLoadgenAuxProcess reports the CPU time over a run of sends of the
// processes named facturad (the service under test among them); a name no
// process has is reported unavailable without failing the run; and the
// load generator never counts itself.
func TestLoadgenAuxProcess(t *testing.T) {
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if snaps, err := snapshotProcs([]string{strings.TrimSpace(string(comm))}); err != nil {
		t.Fatal(err)
	} else if _, ok := snaps[0][os.Getpid()]; ok {
		t.Fatalf("the load generator counts itself as an other process")
	}
	api := startService(t).api
	const name = "facturad" // the built command's, as /proc/<pid>/comm has it

	var out, errs bytes.Buffer
	args := loadArgs(api, "--companies", "2", "--workers", "4", "--count", "20", "--json", "-",
		"--aux-process", name, "--aux-process", "no-such-proc")
	if err := run(context.Background(), args, &out, &errs, func(string) string { return "" }); err != nil {
		t.Fatalf("loadgen: %v\n%s%s", err, out.String(), errs.String())
	}
	var s loadSummary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("summary: %v\n%s", err, out.String())
	}
	if len(s.AuxProcesses) != 2 {
		t.Fatalf("aux processes: %s", out.String())
	}
	// 20 sends take well over the 10 ms a /proc tick counts.
	a, none := s.AuxProcesses[0], s.AuxProcesses[1]
	if a.Name != name || a.Processes < 1 || a.CPUS == nil || *a.CPUS <= 0 || a.CPUPerRequestMS == nil ||
		math.Abs(*a.CPUPerRequestMS-1000**a.CPUS/20) > 1e-6 || a.Unavailable != "" {
		t.Errorf("%s: %+v", name, a)
	}
	if none.Name != "no-such-proc" || none.CPUS != nil || none.CPUPerRequestMS != nil || none.Unavailable != "no process named no-such-proc" {
		t.Errorf("no-such-proc: %+v", none)
	}
	text := errs.String()
	for _, want := range []string{"aux:         " + name + " ", "aux:         no-such-proc unavailable (no process named no-such-proc)\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	tail := " S 1 1 1 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 1 0 12345 0 0"
	tests := []struct {
		name, line string
		comm       string
		want       procTimes
		wantErr    bool
	}{
		{"plain", "42 (postgres)" + tail, "postgres", procTimes{ppid: 1, start: 12345, own: 3 * time.Second, reaped: 100 * time.Millisecond}, false},
		{"spaces and parentheses", "42 (a (b) c)" + tail, "a (b) c", procTimes{ppid: 1, start: 12345, own: 3 * time.Second, reaped: 100 * time.Millisecond}, false},
		{"cut short", "42 (postgres) S 1 1 1 0 -1 4194560 100 0 0 0 250 50", "", procTimes{}, true},
		{"no name", "42 postgres" + tail, "", procTimes{}, true},
		{"not a number", "42 (postgres)" + strings.Replace(tail, "250", "x", 1), "", procTimes{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comm, got, err := parseProcStat([]byte(tt.line))
			if (err != nil) != tt.wantErr || comm != tt.comm || got != tt.want {
				t.Errorf("got %q %+v %v, want %q %+v (error: %v)", comm, got, err, tt.comm, tt.want, tt.wantErr)
			}
		})
	}
}

// TestProcsCPU counts the CPU time of a server's processes over a run as
// they come and go: a parent that waits for its children gets their whole
// time in its reaped time when they exit.
func TestProcsCPU(t *testing.T) {
	s := time.Second
	parent := func(own, reaped time.Duration) procTimes {
		return procTimes{ppid: 1, start: 10, own: own, reaped: reaped}
	}
	child := func(start uint64, own time.Duration) procTimes { return procTimes{ppid: 100, start: start, own: own} }
	tests := []struct {
		name          string
		before, after procSnapshot
		want          time.Duration
	}{
		{"grew", procSnapshot{100: parent(1*s, 0)}, procSnapshot{100: parent(3*s, 1*s)}, 3 * s},
		{"started during the run", procSnapshot{100: parent(1*s, 0)}, procSnapshot{100: parent(1*s, 0), 200: child(50, 2*s)}, 2 * s},
		// The child had used 1 s; it used 2 s more and was waited for.
		{"exited, waited for by its parent", procSnapshot{100: parent(1*s, 0), 200: child(50, 1*s)}, procSnapshot{100: parent(1*s, 3*s)}, 2 * s},
		{"exited, parent another program", procSnapshot{200: {ppid: 7, start: 50, own: 1 * s}}, procSnapshot{}, 0},
		{"exited with its parent", procSnapshot{100: parent(1*s, 0), 200: child(50, 1*s)}, procSnapshot{}, 0},
		{"pid reused", procSnapshot{200: {ppid: 7, start: 50, own: 4 * s}}, procSnapshot{200: {ppid: 7, start: 90, own: 1 * s}}, 1 * s},
		{"parent's pid reused", procSnapshot{100: parent(1*s, 0), 200: child(50, 1*s)},
			procSnapshot{100: {ppid: 1, start: 99, own: 2 * s}}, 2 * s},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := procsCPU(tt.before, tt.after); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestLoadgenSettle checks that, after the last send, loadgen waits for the
// service to settle the documents' verdicts (the background worker asks
// for them seconds after each submission) before it reads the service's
// CPU time, and that --settle 0 does not wait.
func TestLoadgenSettle(t *testing.T) {
	// The built-in sandbox takes a second to judge a document.
	svc := startService(t, "--sandbox-processing-delay", "1s")
	api, pid := svc.api, strconv.Itoa(svc.pid)
	for _, tt := range []struct {
		settle string
		waits  bool
	}{{"1m", true}, {"0", false}} {
		t.Run("settle="+tt.settle, func(t *testing.T) {
			var out, errs bytes.Buffer
			args := loadArgs(api, "--companies", "1", "--workers", "2", "--count", "6", "--json", "-",
				"--server-pid", pid, "--rsa-reference=false", "--settle", tt.settle)
			if err := run(context.Background(), args, &out, &errs, func(string) string { return "" }); err != nil {
				t.Fatalf("loadgen: %v\n%s%s", err, out.String(), errs.String())
			}
			var s loadSummary
			if err := json.Unmarshal(out.Bytes(), &s); err != nil {
				t.Fatalf("summary: %v\n%s", err, out.String())
			}
			if s.SettleTimedOut {
				t.Fatalf("the service did not settle within the limit:\n%s", errs.String())
			}
			// The first verdict is asked for at least a second and a half
			// after each submission: a wait for the service to settle is
			// at least that long.
			if got := s.SettledS >= 1; got != tt.waits {
				t.Errorf("busy for %.2fs after the last call, want a wait %v:\n%s", s.SettledS, tt.waits, errs.String())
			}
		})
	}
}

// TestRSASampler: the reference measured during a run takes batches at its
// pace and reports a signature's CPU time.
func TestRSASampler(t *testing.T) {
	s := startRSASampler(10 * time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	per, n, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	// A signature takes about a millisecond; the race detector and a busy
	// machine may make it slower, never 50 µs or 200 ms.
	if n < 1 || per < 50*time.Microsecond || per > 200*time.Millisecond {
		t.Errorf("%d batches, %s a signature", n, per)
	}
}
