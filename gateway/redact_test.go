package gateway

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestFasthttpLoggerRedactsRequestBytes(t *testing.T) {
	const token, basic = "SECRET-TOKEN-123", "dXNlcjpTRUNSRVRQQVNT"
	tests := []struct {
		name   string
		format string
		args   []any
		keep   string
	}{
		{
			name:   "ok/headers quoted after contents",
			format: "error when serving connection %q<->%q: %v",
			args: []any{"127.0.0.1:8080", "127.0.0.1:5555", errors.New(`error when reading request headers: invalid header. Buffer size=120, contents: "GET / HTTP/1.1\r\nAuthToken: ` +
				token + `\r\nAuthorization: Basic ` + basic + `\r\n"`)},
			keep: "error when reading request headers: invalid header",
		},
		{
			name:   "ok/request quoted without a marker",
			format: "error when serving connection %q<->%q: %v",
			args:   []any{"127.0.0.1:8080", "127.0.0.1:5555", errors.New(`cannot find http request method in "X AuthToken: ` + token + `"`)},
			keep:   "cannot find http request method in",
		},
		{
			name:   "ok/plain message kept whole",
			format: "the server is overloaded: %d connections",
			args:   []any{5000},
			keep:   "the server is overloaded: 5000 connections",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf syncBuffer
			fasthttpLogger{slog.New(slog.NewTextHandler(&buf, nil))}.Printf(tt.format, tt.args...)
			out := buf.String()
			if strings.Contains(out, token) || strings.Contains(out, basic) {
				t.Fatalf("credentials logged: %s", out)
			}
			if !strings.Contains(out, tt.keep) {
				t.Errorf("the cause was lost: %s", out)
			}
		})
	}
}

// TestMalformedRequestLogsNoCredentials sends a request fasthttp cannot
// parse, with credentials in its headers, and checks the server's log.
func TestMalformedRequestLogsNoCredentials(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}})
	conn, err := b.apiLn.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const token = "SECRET-TOKEN-abcdef0123456789"
	_, err = conn.Write([]byte("POST /api/companies/v4 HTTP/1.1\r\nHost: x\r\nAuthToken: " + token +
		"\r\nAuthorization: Basic dXNlcjpwYXNz\r\nContent-Length: abc\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	reply := make([]byte, 4096)
	n, _ := conn.Read(reply)
	if !strings.HasPrefix(string(reply[:n]), "HTTP/1.1 400") {
		t.Errorf("answer to a malformed request: %q", reply[:n])
	}
	// fasthttp logs the failure after answering; give it a moment.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(b.logs.String(), "http server") {
		time.Sleep(10 * time.Millisecond)
	}
	logs := b.logs.String()
	if strings.Contains(logs, token) || strings.Contains(logs, "dXNlcjpwYXNz") {
		t.Fatalf("credentials in the log: %s", logs)
	}
}
