package requestid

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestHandlerAddsTheContextsRequestID(t *testing.T) {
	withID := NewContext(context.Background(), "req-42")
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		want string // the request_id of the line; "" for none
	}{
		{"ok/context carries an id", func(l *slog.Logger) { l.WarnContext(withID, "x") }, "req-42"},
		{"ok/through With", func(l *slog.Logger) { l.With("clave", "506").InfoContext(withID, "x") }, "req-42"},
		{"ok/no context", func(l *slog.Logger) { l.Warn("x") }, ""},
		{"ok/context without an id", func(l *slog.Logger) { l.WarnContext(context.Background(), "x") }, ""},
		{"ok/the line's own id wins", func(l *slog.Logger) { l.WarnContext(withID, "x", Key, "own") }, "own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(slog.New(NewHandler(slog.NewJSONHandler(&buf, nil))))
			if n := strings.Count(buf.String(), `"`+Key+`"`); n > 1 {
				t.Fatalf("%d %s keys: %s", n, Key, buf.String())
			}
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("%v: %s", err, buf.String())
			}
			got, _ := line[Key].(string)
			if got != tt.want {
				t.Errorf("request_id %q, want %q: %s", got, tt.want, buf.String())
			}
		})
	}
}

func TestHandlerKeepsTheLevel(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(NewHandler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx := NewContext(context.Background(), "req-1")
	if l.Enabled(ctx, slog.LevelInfo) {
		t.Error("info enabled under a warn handler")
	}
	l.InfoContext(ctx, "dropped")
	if buf.Len() != 0 {
		t.Errorf("info line written: %s", buf.String())
	}
}

func TestFromContext(t *testing.T) {
	if got := FromContext(context.Background()); got != "" {
		t.Errorf("empty context gave %q", got)
	}
	if got := FromContext(NewContext(context.Background(), "a")); got != "a" {
		t.Errorf("got %q", got)
	}
}
