package api

import (
	"testing"
	"time"
)

func TestLocalTime(t *testing.T) {
	for _, tt := range []struct {
		in   time.Time
		want string
	}{
		{time.Time{}, "0001-01-01T00:00:00"},
		{time.Date(2026, 11, 27, 14, 3, 0, 0, time.UTC), "2026-11-27T08:03:00"},
	} {
		if got := LocalTime(tt.in); got != tt.want {
			t.Errorf("LocalTime(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
