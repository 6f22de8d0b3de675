package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCgroupLimit(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1073741824\n", 1 << 30, true},
		{"max\n", 0, false},
		{"9223372036854771712\n", 0, false}, // cgroup v1 without a limit
		{"", 0, false},
		{"0", 0, false},
		{"-1", 0, false},
	} {
		got, ok := cgroupLimit(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("cgroupLimit(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestMemoryLimit: the soft limit is 90% of the first readable control
// group file's limit, none when that file names none, and none whatever
// the files say when GOMEMLIMIT is set.
func TestMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gib, unlimited, missing := file("gib", "1073741824\n"), file("max", "max\n"), filepath.Join(dir, "missing")
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOMEMLIMIT" {
				return v
			}
			return ""
		}
	}
	for _, tt := range []struct {
		name       string
		gomemlimit string
		files      []string
		want       int64
	}{
		{"ok/the container's limit", "", []string{gib}, 1 << 30 * 9 / 10},
		{"ok/v1's file when v2's is missing", "", []string{missing, gib}, 1 << 30 * 9 / 10},
		{"ok/no limit in the first file read", "", []string{unlimited, gib}, 0},
		{"ok/no file", "", []string{missing}, 0},
		{"ok/GOMEMLIMIT set", "300MiB", []string{gib}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := memoryLimit(env(tt.gomemlimit), tt.files); got != tt.want {
				t.Errorf("memoryLimit = %d, want %d", got, tt.want)
			}
		})
	}
}
