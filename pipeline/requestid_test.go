package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/gateway/requestid"
	"facturad/hacienda"
	"facturad/hacienda/sandbox"
)

// logBuffer is a log sink safe for the pipeline's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSendLogsCarryTheRequestID: what a send logs while the tax authority
// fails it carries the request id of the call's context, so that the line
// can be matched to the caller's X-Request-Id.
func TestSendLogsCarryTheRequestID(t *testing.T) {
	var logs logBuffer
	log := slog.New(requestid.NewHandler(slog.NewJSONHandler(&logs, nil)))
	b := setup(t, setupOptions{pipeline: func(o *Options) {
		o.Logger = log
		o.SubmitTimeout = 500 * time.Millisecond
	}})
	if err := b.sb.SetFaults(sandbox.Faults{ErrorRates: map[int]float64{500: 1}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(requestid.NewContext(context.Background(), "caller-9"), 30*time.Second)
	defer cancel()
	out, err := b.sendRaw(ctx, b.branch, body(t, request(string(hacienda.TypeFE), "rid-1")))
	if err != nil {
		t.Fatal(err)
	}
	if out.Estado == "" {
		t.Fatalf("send: %s", describe(out))
	}
	warned := 0
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if m["level"] == "WARN" || m["level"] == "ERROR" {
			warned++
			if m[requestid.Key] != "caller-9" || m["clave"] == nil {
				t.Errorf("a warning of the send without its request id or clave: %s", line)
			}
		}
	}
	if warned == 0 {
		t.Fatalf("the failed submission logged no warning:\n%s", logs.String())
	}
}
