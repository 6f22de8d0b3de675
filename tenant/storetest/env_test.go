package storetest

import (
	"fmt"
	"testing"
)

// recorder stands in for a test to see how a helper ends it. It keeps
// only the first ending, as a real test ends there.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, a ...any) {
	if r.fatal == "" && r.skip == "" {
		r.fatal = fmt.Sprintf(format, a...)
	}
}
func (r *recorder) Skipf(format string, a ...any) {
	if r.fatal == "" && r.skip == "" {
		r.skip = fmt.Sprintf(format, a...)
	}
}

func TestMissingServices(t *testing.T) {
	tests := []struct {
		name      string
		require   string
		set       string
		get       func(testing.TB) string
		env       string
		wantFatal bool
		wantSkip  bool
	}{
		{"ok/postgres set", "1", "postgres://x", PostgresURL, EnvDatabaseURL, false, false},
		{"ok/redis set", "", "redis://x", RedisURL, EnvRedisURL, false, false},
		{"error/postgres missing and required", "1", "", PostgresURL, EnvDatabaseURL, true, false},
		{"error/redis missing and required", "true", "", RedisURL, EnvRedisURL, true, false},
		{"ok/postgres missing skips", "", "", PostgresURL, EnvDatabaseURL, false, true},
		{"ok/redis missing skips when 0", "0", "", RedisURL, EnvRedisURL, false, true},
		{"error/a misspelt switch fails though the service is set", "ture", "postgres://x", PostgresURL, EnvDatabaseURL, true, false},
		{"error/a misspelt switch fails, not skips", "of", "", RedisURL, EnvRedisURL, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvRequireServices, tt.require)
			t.Setenv(tt.env, tt.set)
			r := &recorder{TB: t}
			got := tt.get(r)
			if got != tt.set {
				t.Errorf("got URL %q, want %q", got, tt.set)
			}
			if (r.fatal != "") != tt.wantFatal || (r.skip != "") != tt.wantSkip {
				t.Errorf("fatal %q, skip %q; want fatal %v, skip %v", r.fatal, r.skip, tt.wantFatal, tt.wantSkip)
			}
		})
	}
}

func TestUniqueName(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		n := UniqueName(t)
		if len(n) != 18 || n[:2] != "t_" || seen[n] {
			t.Fatalf("UniqueName gave %q", n)
		}
		seen[n] = true
	}
}
