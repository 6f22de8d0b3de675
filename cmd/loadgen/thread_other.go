//go:build !linux

package main

import (
	"errors"
	"time"
)

// threadCPU is the CPU time of the calling thread, which only Linux tells
// (RUSAGE_THREAD): elsewhere the reference is measured after the run
// alone.
func threadCPU() (time.Duration, error) {
	return 0, errors.New("a thread's CPU time is read on Linux only")
}
