package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
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

// oneJSONLine decodes the only line in out, failing unless it is one JSON
// object with one msg.
func oneJSONLine(t *testing.T, out string) map[string]any {
	t.Helper()
	line := strings.TrimSpace(out)
	if line == "" || strings.Contains(line, "\n") || strings.Count(line, `"msg":`) != 1 {
		t.Fatalf("not one line with one msg: %q", out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, line)
	}
	return m
}

// The profiler's net/http messages (a panic, a failed handshake: nothing a
// test can cause from outside) come out as one JSON line, as the
// gateway's do.
func TestProfilerLogsTheHTTPServersMessages(t *testing.T) {
	var buf bytes.Buffer
	srv := profilerServer(newLogger(&buf, "info"))
	srv.ErrorLog.Printf("http: panic serving 127.0.0.1:4321: boom\ngoroutine 7 [running]:\n")
	m := oneJSONLine(t, buf.String())
	if m["msg"] != "http server" || m["component"] != "pprof" || m["detail"] != "http: panic serving 127.0.0.1:4321: boom\ngoroutine 7 [running]:" {
		t.Errorf("net/http's message logged as %v", m)
	}
}

// go-redis's own messages (here: a pool that cannot dial) come out through
// the service's logger, not as its plain lines on standard error.
func TestRedisClientLogsThroughTheLogger(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var buf syncBuffer
	rdb, err := openRedis("redis://:s3cret@"+addr+"/0", newLogger(&buf, "info"))
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Fatal("a ping to a closed port answered")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), "redis client") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		m := oneJSONLine(t, line)
		if m["msg"] != "redis client" || !strings.Contains(m["detail"].(string), "dial") {
			t.Errorf("go-redis's message logged as %v", m)
		}
		if strings.Contains(line, "s3cret") {
			t.Errorf("the Redis password in a log line: %s", line)
		}
	}
}
