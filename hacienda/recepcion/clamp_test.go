package recepcion

import (
	"net/http"
	"testing"
	"time"
)

// Numbers read from the tax authority are clamped: an absurd Retry-After
// or token lifetime must neither overflow into a negative wait nor a renew
// time in the past.
func TestRetryAfterClamped(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   time.Duration
	}{
		{"ok/absent", "", 0},
		{"ok/seconds", "7", 7 * time.Second},
		{"ok/zero", "0", 0},
		{"clamped/an hour and more", "3601", MaxRetryAfter},
		{"clamped/past int64 seconds as a duration", "9223372036854775807", MaxRetryAfter},
		{"clamped/past uint64", "99999999999999999999999", 0},
		{"ignored/negative", "-5", 0},
		{"ignored/garbage", "soon", 0},
		{"clamped/a date far ahead", time.Now().Add(1000 * time.Hour).UTC().Format(http.TimeFormat), MaxRetryAfter},
		{"ignored/a date in the past", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.header != "" {
				h.Set("Retry-After", tt.header)
			}
			got := RetryAfter(h)
			if got < 0 || got > MaxRetryAfter {
				t.Fatalf("RetryAfter(%q) = %v, outside [0, %v]", tt.header, got, MaxRetryAfter)
			}
			if got != tt.want {
				t.Errorf("RetryAfter(%q) = %v, want %v", tt.header, got, tt.want)
			}
		})
	}
}

func TestClampLifetime(t *testing.T) {
	tests := []struct {
		name      string
		secs, def int64
		want      int64
	}{
		{"ok/documented access", 300, defaultAccessLifetime, 300},
		{"ok/documented refresh", 36000, 0, 36000},
		{"default/missing", 0, defaultAccessLifetime, defaultAccessLifetime},
		{"default/negative", -1, defaultAccessLifetime, defaultAccessLifetime},
		{"clamped/tiny", 1, defaultAccessLifetime, minLifetime},
		{"clamped/huge", 1 << 62, defaultAccessLifetime, maxLifetime},
		{"clamped/max int64", 9223372036854775807, 0, maxLifetime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clampLifetime(tt.secs, tt.def)
			if got != tt.want {
				t.Errorf("clampLifetime(%d, %d) = %d, want %d", tt.secs, tt.def, got, tt.want)
			}
			// Whatever comes back, the renew arithmetic stays in the future.
			if got > 0 {
				if d := time.Duration(got) * time.Second; d <= 0 {
					t.Errorf("lifetime %d s overflows a duration", got)
				}
			}
		})
	}
}
