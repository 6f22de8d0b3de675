package main

import "testing"

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

func TestSetMemoryLimitLeavesGOMEMLIMIT(t *testing.T) {
	if got := setMemoryLimit(func(k string) string {
		if k == "GOMEMLIMIT" {
			return "300MiB"
		}
		return ""
	}); got != 0 {
		t.Errorf("set a limit of %d with GOMEMLIMIT set", got)
	}
}
