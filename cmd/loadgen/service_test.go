package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests load the real service: the facturad command, built once
// without the race detector, run in a process of its own on free local
// ports, on the embedded store and the built-in sandbox.

// The bootstrap admin every test service is started with.
const (
	testAdminUser  = "ops"
	testAdminPass  = "a-long-password-123"
	testAdminToken = "tok-0123456789abcdef0123456789abcdef"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBinDir != "" {
		os.RemoveAll(builtBinDir)
	}
	os.Exit(code)
}

// serviceBinary builds the facturad command once.
var serviceBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "loadgen-test-")
	if err != nil {
		return "", err
	}
	builtBinDir = dir
	bin := filepath.Join(dir, "facturad")
	out, err := exec.Command("go", "build", "-o", bin, "facturad/cmd/facturad").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// builtBinDir is removed when the tests end.
var builtBinDir string

// syncBuffer is a strings.Builder safe for a writer and a polling reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listenLine = regexp.MustCompile(`api https?://(\S+)\s+admin http://(\S+)`)

// service is a facturad serve under test.
type service struct {
	api string // host:port of its API
	pid int
}

// startService runs `facturad serve` on a fresh embedded store with the
// test admin and extra flags, waits until it listens, and kills it when
// the test ends. No FACTURAD_ variable of the test's environment reaches
// it.
func startService(t *testing.T, extra ...string) service {
	t.Helper()
	bin, err := serviceBinary()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--log-level", "warn",
		"--admin-user", testAdminUser, "--admin-password", testAdminPass, "--admin-token", testAdminToken}, extra...)
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FACTURAD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out := new(syncBuffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.After(60 * time.Second)
	for {
		if m := listenLine.FindStringSubmatch(out.String()); m != nil {
			return service{api: m[1], pid: cmd.Process.Pid}
		}
		select {
		case <-exited:
			t.Fatalf("service exited before listening:\n%s", out)
		case <-deadline:
			t.Fatalf("service did not start:\n%s", out)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
