package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

func loadArgs(api string, extra ...string) []string {
	return append([]string{"loadgen", "--url", "http://" + api,
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken,
		"--progress", "0", "--max-time", "2m"}, extra...)
}

// TestLoadgenSend sends 20 documents through the running service with the
// subcommand, checks each until the tax authority accepts it, and reads the
// counts back from the printed report.
func TestLoadgenSend(t *testing.T) {
	_, api, _, stop := startService(t, t.TempDir(),
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
	defer stop()

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
	for _, secret := range []string{e2eAdminPass, e2eAdminToken} {
		if strings.Contains(report+errs.String(), secret) {
			t.Errorf("the output shows a secret")
		}
	}
}

// TestLoadgenRead repeats the authenticated branch listing for a fixed
// count and checks the report's figures.
func TestLoadgenRead(t *testing.T) {
	_, api, _, stop := startService(t, t.TempDir(),
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
	defer stop()

	o := loadOptions{
		URL: "http://" + api, AdminUser: e2eAdminUser, AdminPassword: e2eAdminPass, AdminToken: e2eAdminToken,
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

func TestLoadgenOptions(t *testing.T) {
	valid := func() loadOptions {
		return loadOptions{URL: "http://127.0.0.1:8080", AdminUser: "u", AdminPassword: "p", AdminToken: "t",
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
		{"ok/localhost", func(o *loadOptions) { o.URL = "http://localhost:8080" }, ""},
		{"ok/ipv6 loopback", func(o *loadOptions) { o.URL = "http://[::1]:8080" }, ""},
		{"ok/remote allowed", func(o *loadOptions) { o.URL, o.AllowRemote = "https://facturas.example.com", true }, ""},
		{"ok/read", func(o *loadOptions) { o.Mode = "read" }, ""},
		{"error/no bound", func(o *loadOptions) { o.Count = 0 }, "no bound"},
		{"error/remote", func(o *loadOptions) { o.URL = "http://10.1.2.3:8080" }, "not a loopback address"},
		{"error/remote name", func(o *loadOptions) { o.URL = "http://facturas.example.com" }, "not a loopback address"},
		{"error/not http", func(o *loadOptions) { o.URL = "ftp://127.0.0.1/" }, "not an http(s) URL"},
		{"error/duration too long", func(o *loadOptions) { o.Duration = 2 * time.Hour }, "duration"},
		{"error/count too big", func(o *loadOptions) { o.Count = loadMaxCount + 1 }, "count"},
		{"error/no workers", func(o *loadOptions) { o.Workers = 0 }, "workers"},
		{"error/no admin", func(o *loadOptions) { o.AdminToken = "" }, "admin credentials"},
		{"error/mode", func(o *loadOptions) { o.Mode = "write" }, "mode"},
		{"error/check of reads", func(o *loadOptions) { o.Mode, o.Check = "read", true }, "check"},
		{"error/run id", func(o *loadOptions) { o.RunID = "a b" }, "run-id"},
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

	// The subcommand refuses an unbounded run before touching the network.
	err := run(context.Background(), []string{"loadgen", "--admin-user", "u", "--admin-password", "p", "--admin-token", "t"},
		io.Discard, io.Discard, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "no bound") {
		t.Fatalf("unbounded run: %v", err)
	}
}

func TestPercentiles(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	p := percentilesOf(d)
	if p.P50 != 50*time.Millisecond || p.P90 != 90*time.Millisecond || p.P99 != 99*time.Millisecond || p.Max != 100*time.Millisecond {
		t.Fatalf("percentiles: %+v", p)
	}
	if (percentilesOf(nil) != percentiles{}) {
		t.Fatal("percentiles of nothing")
	}
}
