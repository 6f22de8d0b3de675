//go:build unix

package storetest

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time the process has used so far, user and system,
// every thread together (the benchmark loop, the garbage collector and the
// driver's goroutines).
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// ReportCPU starts counting and returns the function that adds a
// cpu-ns/op metric to b: the process's CPU time over the loop divided by
// the iterations. Use it as `defer storetest.ReportCPU(b)()`. On a shared
// machine wall time includes waiting for a core; CPU time does not. It
// counts this process only: a database server's time is not in it.
func ReportCPU(b *testing.B) func() {
	start, ok := processCPU()
	return func() {
		end, ok2 := processCPU()
		if ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
