package testenv

import (
	"fmt"
	"testing"
)

func TestParseSwitch(t *testing.T) {
	tests := []struct {
		name string
		v    string
		on   bool
		bad  bool
	}{
		{"ok/1", "1", true, false},
		{"ok/true", "true", true, false},
		{"ok/TRUE", "TRUE", true, false},
		{"ok/yes", "yes", true, false},
		{"ok/spaced yes", " Yes ", true, false},
		{"ok/empty", "", false, false},
		{"ok/0", "0", false, false},
		{"ok/false", "false", false, false},
		{"ok/no", "no", false, false},
		{"error/misspelt", "ture", false, true},
		{"error/2", "2", false, true},
		{"error/on", "on", false, true},
		{"error/off", "off", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			on, err := ParseSwitch(tt.v)
			if (err != nil) != tt.bad || on != tt.on {
				t.Fatalf("ParseSwitch(%q) = %v, %v; want %v, error %v", tt.v, on, err, tt.on, tt.bad)
			}
		})
	}
}

// recorder stands in for a test to see whether a helper failed it.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Fatalf(format string, a ...any) { r.fatal = fmt.Sprintf(format, a...) }

func TestRequireServices(t *testing.T) {
	tests := []struct {
		name  string
		v     string
		want  bool
		fatal bool
	}{
		{"ok/required", "true", true, false},
		{"ok/not required", "0", false, false},
		{"error/unreadable fails the test", "maybe", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(RequireServicesVar, tt.v)
			r := &recorder{TB: t}
			if got := RequireServices(r); got != tt.want || (r.fatal != "") != tt.fatal {
				t.Fatalf("RequireServices = %v, fatal %q; want %v, fatal %v", got, r.fatal, tt.want, tt.fatal)
			}
		})
	}
}
