package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"facturad/gateway/requestid"
)

// lateness resolves to a duration when logged, as a LogValuer may.
type lateness time.Duration

func (l lateness) LogValue() slog.Value { return slog.DurationValue(time.Duration(l)) }

// A duration given to the service's logger, however it gets there (a
// plain argument, slog.Duration, With, a group, a LogValuer, under a
// request's context), is written as a number with its unit in the key,
// never as Go's nanoseconds.
func TestLoggerWritesDurationsWithTheirUnit(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf, "debug")
	ctx := requestid.NewContext(context.Background(), "req-1")
	cases := []struct {
		log  func()
		path []string // keys down to the value
		want float64
		ns   time.Duration
	}{
		{func() { log.Info("plain", "wait", 1500*time.Millisecond) }, []string{"wait_ms"}, 1500, 1500 * time.Millisecond},
		{func() { log.Info("seconds", "ttl_s", 90*time.Second) }, []string{"ttl_s"}, 90, 90 * time.Second},
		{func() { log.Info("ms", "took_ms", 2500*time.Microsecond) }, []string{"took_ms"}, 2.5, 2500 * time.Microsecond},
		{func() { log.LogAttrs(ctx, slog.LevelWarn, "attr", slog.Duration("pause", 3*time.Second)) }, []string{"pause_ms"}, 3000, 3 * time.Second},
		{func() { log.With("backoff", 7*time.Second).Info("with") }, []string{"backoff_ms"}, 7000, 7 * time.Second},
		{func() { log.WithGroup("retry").InfoContext(ctx, "group", "after", time.Minute) }, []string{"retry", "after_ms"}, 60000, time.Minute},
		{func() { log.Info("valuer", "late", lateness(250*time.Millisecond)) }, []string{"late_ms"}, 250, 250 * time.Millisecond},
	}
	for _, c := range cases {
		buf.Reset()
		c.log()
		line := strings.TrimSpace(buf.String())
		if strings.Contains(line, strconv.FormatInt(int64(c.ns), 10)) {
			t.Errorf("a duration in nanoseconds: %s", line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not one JSON line: %v: %s", err, line)
		}
		var v any = m
		for _, k := range c.path {
			obj, ok := v.(map[string]any)
			if !ok {
				break
			}
			v = obj[k]
		}
		if got, ok := v.(float64); !ok || got != c.want {
			t.Errorf("%s: %v at %s, want %v: %s", m["msg"], v, strings.Join(c.path, "."), c.want, line)
		}
	}
}
