package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// net/http's own messages (a panic in a handler, a failed TLS handshake:
// nothing a test can cause from outside) go through the server's ErrorLog
// to the sandbox's logger: one JSON line with one msg, the text under
// detail, instead of a plain line on standard error.
func TestListenLogsTheHTTPServersMessages(t *testing.T) {
	var buf bytes.Buffer
	s, err := Listen("127.0.0.1:0", Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	s.srv.ErrorLog.Printf("http: panic serving 127.0.0.1:4321: boom\ngoroutine 7 [running]:\n")
	line := strings.TrimSpace(buf.String())
	if strings.Count(line, "\n") != 0 || strings.Count(line, `"msg":`) != 1 {
		t.Fatalf("not one line with one msg: %q", line)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, line)
	}
	if m["msg"] != "http server" || m["level"] != "WARN" || m["detail"] != "http: panic serving 127.0.0.1:4321: boom\ngoroutine 7 [running]:" {
		t.Errorf("net/http's message logged as %s", line)
	}
}
