package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The garbage collector's memory limit when GOMEMLIMIT is not set: this
// share of the memory limit of the control group the process runs in (a
// container's), leaving the rest for what the Go heap does not count.
// GOGC 400 lets the heap grow to five times what was live at the last
// collection, and a collection that finds the slow password hashes'
// 19 MiB buffers live sets that goal high: without a limit, a container
// could be killed for memory it did not need.
const memoryLimitShare = 0.9

// cgroupMemoryFiles hold the memory limit of the process's control group:
// cgroup v2's, then v1's.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// setMemoryLimit sets the collector's soft memory limit from the control
// group's (see memoryLimit), and returns it (0 when it set none).
func setMemoryLimit(getenv func(string) string) int64 {
	soft := memoryLimit(getenv, cgroupMemoryFiles)
	if soft > 0 {
		debug.SetMemoryLimit(soft)
	}
	return soft
}

// memoryLimit is the soft memory limit to set: memoryLimitShare of the
// limit in the first of files that can be read, or 0 when GOMEMLIMIT is
// set or that file names no limit.
func memoryLimit(getenv func(string) string, files []string) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return 0
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if limit, ok := cgroupLimit(string(b)); ok {
			return int64(float64(limit) * memoryLimitShare)
		}
		return 0
	}
	return 0
}

// cgroupLimit reads a control group's memory limit file: a number of bytes,
// or "max" (v2) or a number beyond any machine's memory (v1) for none.
func cgroupLimit(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n >= 1<<50 {
		return 0, false
	}
	return n, true
}
