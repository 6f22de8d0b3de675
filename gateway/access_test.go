package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"facturad/gateway/requestid"
)

// accessLines decodes the access lines of a JSON log.
func accessLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if m["msg"] == "access" {
			out = append(out, m)
		}
	}
	return out
}

func TestAccessLog(t *testing.T) {
	tests := []struct {
		name   string
		sample float64
		send   func(t *testing.T, b *testBundle) reply
		want   map[string]any // fields of the one access line; nil for no line
		absent []string       // fields the line must not have
	}{
		{
			name: "ok/matched route, branch user", sample: 1,
			send: func(t *testing.T, b *testBundle) reply {
				return b.do(t, "GET", "/api/companies/2/branches/v4", &fakeBranch, "", nil, "X-Request-Id", "req-matched")
			},
			want: map[string]any{"level": "INFO", "method": "GET", "route": "/api/companies/{companyId}/branches/v4", "status": 200.0,
				"request_id": "req-matched", "user": "b1", "company": 2.0, "branch": 3.0, "bytes_in": 0.0},
		},
		{
			name: "ok/admin has no company", sample: 1,
			send: func(t *testing.T, b *testBundle) reply {
				return b.do(t, "GET", "/api/companies/v4", &fakeUser, "", nil, "X-Request-Id", "req-admin")
			},
			want:   map[string]any{"route": "/api/companies/v4", "status": 200.0, "request_id": "req-admin", "user": "u1"},
			absent: []string{"company", "branch"},
		},
		{
			name: "ok/admin under a company: the path's ids", sample: 1,
			send: func(t *testing.T, b *testBundle) reply {
				return b.do(t, "GET", "/api/companies/5/branches/6/users/v4", &fakeUser, "", nil, "X-Request-Id", "req-admin-co")
			},
			want: map[string]any{"route": "/api/companies/{companyId}/branches/{branchId}/users/v4", "request_id": "req-admin-co",
				"user": "u1", "company": 5.0, "branch": 6.0},
		},
		{
			name: "ok/admin under a company, no branch", sample: 1,
			send: func(t *testing.T, b *testBundle) reply {
				return b.do(t, "GET", "/api/companies/7/branches/v4", &fakeUser, "", nil, "X-Request-Id", "req-admin-br")
			},
			want:   map[string]any{"route": "/api/companies/{companyId}/branches/v4", "user": "u1", "company": 7.0},
			absent: []string{"branch"},
		},
		{
			name: "ok/not an id in the path", sample: 0,
			send: func(t *testing.T, b *testBundle) reply {
				return b.do(t, "GET", "/api/companies/abc/v4", &fakeUser, "", nil, "X-Request-Id", "req-abc")
			},
			want:   map[string]any{"route": "/api/companies/{companyId}/v4", "status": 400.0},
			absent: []string{"company", "branch"},
		},
		{
			name: "ok/branch user: its own ids, not the path's", sample: 1,
			send: func(t *testing.T, b *testBundle) reply {
				return b.do(t, "GET", "/api/companies/9/branches/v4", &fakeBranch, "", nil, "X-Request-Id", "req-other")
			},
			want: map[string]any{"user": "b1", "company": 2.0, "branch": 3.0},
		},
		{
			name: "ok/unauthenticated", sample: 0,
			send: func(t *testing.T, b *testBundle) reply {
				return b.do(t, "GET", "/api/companies/v4", nil, "", nil, "X-Request-Id", "req-401")
			},
			want:   map[string]any{"route": "/api/companies/v4", "status": 401.0, "request_id": "req-401"},
			absent: []string{"user", "company"},
		},
		{
			name: "ok/unmatched path", sample: 0,
			send: func(t *testing.T, b *testBundle) reply {
				return b.do(t, "GET", "/nowhere", nil, "", nil, "X-Request-Id", "req-404")
			},
			want: map[string]any{"method": "GET", "route": "unmatched", "status": 404.0, "request_id": "req-404"},
		},
		{
			name: "ok/method not allowed", sample: 0,
			send: func(t *testing.T, b *testBundle) reply {
				return b.do(t, "DELETE", "/api/companies/v4", nil, "", nil, "X-Request-Id", "req-405")
			},
			want: map[string]any{"method": "DELETE", "route": "unmatched", "status": 405.0, "request_id": "req-405"},
		},
		{
			name: "ok/unreadable request, body too large", sample: 0,
			send: func(t *testing.T, b *testBundle) reply {
				return b.do(t, "POST", "/api/companies/2/branches/v4", &fakeUser, "application/json", make([]byte, 100<<10), "X-Request-Id", "req-413")
			},
			want: map[string]any{"method": "POST", "route": "/api/companies/{companyId}/branches/v4", "status": 413.0, "request_id": "req-413"},
		},
		{
			name: "ok/success not sampled", sample: 0,
			send: func(t *testing.T, b *testBundle) reply {
				return b.do(t, "GET", "/api/companies/v4", &fakeUser, "", nil)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, Options{Tenants: &fakeTenants{}, AccessLogSample: tt.sample})
			r := tt.send(t, b)
			lines := accessLines(t, b.logs.String())
			if tt.want == nil {
				if len(lines) != 0 {
					t.Fatalf("status %d logged with sample %v: %v", r.status, tt.sample, lines)
				}
				return
			}
			if len(lines) != 1 {
				t.Fatalf("%d access lines, want 1:\n%s", len(lines), b.logs)
			}
			line := lines[0]
			for k, v := range tt.want {
				if line[k] != v {
					t.Errorf("%s = %#v, want %#v", k, line[k], v)
				}
			}
			for _, k := range tt.absent {
				if _, ok := line[k]; ok {
					t.Errorf("%s = %#v, want none", k, line[k])
				}
			}
			if d, ok := line["duration_ms"].(float64); !ok || d < 0 || d > 10_000 {
				t.Errorf("duration_ms %#v is not milliseconds", line["duration_ms"])
			}
			if out, ok := line["bytes_out"].(float64); !ok || int(out) != len(r.body) {
				t.Errorf("bytes_out %#v, body %d bytes", line["bytes_out"], len(r.body))
			}
			if got := r.header.Get("X-Request-Id"); got != line["request_id"] {
				t.Errorf("logged request_id %v, answered %q", line["request_id"], got)
			}
		})
	}
}

func TestAccessLogSampling(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}, AccessLogSample: 0.5})
	const n = 200
	for range n {
		if r := b.do(t, "GET", "/api/companies/v4", &fakeUser, "", nil); r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
	}
	// 100 expected; below 60 or above 140 has odds under one in 10^8.
	if got := len(accessLines(t, b.logs.String())); got < 60 || got > 140 {
		t.Errorf("%d of %d lines with a sample of 0.5", got, n)
	}
}

func TestOptionsRefuseABadSample(t *testing.T) {
	for _, f := range []float64{-0.1, 1.1} {
		if _, err := New(Options{Tenants: &fakeTenants{}, AccessLogSample: f}); err == nil {
			t.Errorf("AccessLogSample %v accepted", f)
		}
	}
}

// TestHandlersLogUnderTheRequestID: a handler's context carries the
// request id, so a line it logs with it carries the caller's X-Request-Id.
func TestHandlersLogUnderTheRequestID(t *testing.T) {
	var logs syncBuffer
	log := slog.New(requestid.NewHandler(slog.NewJSONHandler(&logs, nil)))
	b := setup(t, Options{Tenants: &fakeTenants{}, Logger: log, Routes: []Route{{
		Method: "POST", Path: "/api/documents/v4",
		Handle: func(ctx context.Context, r *Request) (Reply, error) {
			log.WarnContext(ctx, "something the handler saw")
			return Reply{}, errors.New("store on fire")
		},
	}}})
	r := b.do(t, "POST", "/api/documents/v4", &fakeUser, "application/json", []byte(`{}`), "X-Request-Id", "caller-7")
	if r.status != 500 {
		t.Fatalf("status %d", r.status)
	}
	for _, msg := range []string{"something the handler saw", "request failed", "access"} {
		found := false
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"msg":"`+msg+`"`) {
				found = true
				if strings.Count(line, `"request_id":"caller-7"`) != 1 {
					t.Errorf("%q line without exactly one request id: %s", msg, line)
				}
			}
		}
		if !found {
			t.Errorf("no %q line:\n%s", msg, logs.String())
		}
	}
}

// TestFasthttpLoggerOneMsg: fasthttp's messages keep the line's one msg
// key and go under detail.
func TestFasthttpLoggerOneMsg(t *testing.T) {
	var buf syncBuffer
	fasthttpLogger{slog.New(slog.NewJSONHandler(&buf, nil))}.Printf("the server is overloaded: %d connections", 5000)
	out := buf.String()
	if n := strings.Count(out, `"msg"`); n != 1 {
		t.Fatalf("%d msg keys: %s", n, out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m["msg"] != "http server" || m["detail"] != "the server is overloaded: 5000 connections" {
		t.Errorf("line %v", m)
	}
}
