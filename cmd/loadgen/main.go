// Command loadgen loads a running facturad service and reports what it
// served: it creates companies with minted test certificates on the
// service, then sends documents (or repeats an authenticated read) from
// concurrent workers for a bounded count or time, and prints the
// throughput, the latency percentiles and the failures. The workers call
// again as soon as their last call returns (a closed loop) or take calls
// that arrive at a fixed rate (an open loop, open.go), on one or several
// replicas in turn. Given the service's process ids, it also reports the
// service's CPU time per call and sets it against one raw RSA-2048
// signature measured in the same run (cpu.go).
//
// It only targets loopback addresses unless --allow-remote is given, and it
// never runs without a bound: a count or a duration is required, and a hard
// time limit stops it in any case.
//
// Usage:
//
//	loadgen [flags]
//
// `loadgen --help` lists the flags, their defaults and the environment
// variables some of them are read from.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // --help was asked for and written to stdout
		}
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}
