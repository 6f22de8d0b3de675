package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// child is the service running in a process of its own.
type child struct {
	cmd       *exec.Cmd
	out, errs *syncBuffer
	// api and admin are where the service listens (for a sandbox, its
	// reception API's and token endpoint's URLs).
	api, admin string
	exited     chan struct{}
}

// serveArgs are the arguments of a service on free local ports, then args.
func serveArgs(args ...string) []string {
	return append([]string{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--log-level", "warn"}, args...)
}

// startChild starts the service in a child process (this test binary run
// as the command, see TestMain) with args and the extra environment, and
// waits until it listens.
func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], serveArgs(args...)...)
	cmd.Env = append(append(os.Environ(), asServiceEnv+"=1"), env...)
	return launch(t, cmd)
}

// launch starts cmd, a service, kills it when the test ends, and waits
// until it says where it listens.
func launch(t *testing.T, cmd *exec.Cmd) *child {
	t.Helper()
	return launchUntil(t, cmd, listenLine)
}

// launchUntil is launch for a command that says where it listens with a
// line matching listening, whose two groups are the child's api and admin.
func launchUntil(t *testing.T, cmd *exec.Cmd, listening *regexp.Regexp) *child {
	t.Helper()
	c := spawn(t, cmd)
	c.waitListening(t, listening)
	return c
}

// spawn starts cmd and kills it when the test ends, without waiting for
// anything: children spawned one after the other start together.
func spawn(t *testing.T, cmd *exec.Cmd) *child {
	t.Helper()
	c := &child{cmd: cmd, out: new(syncBuffer), errs: new(syncBuffer), exited: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.errs
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	t.Cleanup(c.kill)
	return c
}

// waitListening waits until the child prints a line matching listening,
// whose two groups are its api and admin addresses.
func (c *child) waitListening(t *testing.T, listening *regexp.Regexp) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		if m := listening.FindStringSubmatch(c.out.String()); m != nil {
			c.api, c.admin = m[1], m[2]
			return
		}
		select {
		case <-c.exited:
			t.Fatalf("service exited before listening:\n%s\n%s", c.out, c.errs)
		case <-deadline:
			t.Fatalf("service did not start:\n%s\n%s", c.out, c.errs)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// kill sends SIGKILL and waits for the process to end.
func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
}

// waitFor waits until the child's standard error has line.
func (c *child) waitFor(t *testing.T, line string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for !strings.Contains(c.errs.String(), line) {
		select {
		case <-c.exited:
			t.Fatalf("service exited before %q:\n%s", line, c.errs)
		case <-deadline:
			t.Fatalf("no %q within %v:\n%s", line, within, c.errs)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
