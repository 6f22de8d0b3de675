package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestConnectionFlood starts the service with an open-file limit of 1,024
// and holds 2,000 idle connections to its API from one address (127.0.0.2),
// as a slow-header flood would. Meanwhile a client from another address
// (127.0.0.1) must be served, and afterwards the process must be alive:
// accept errors never end it, and the per-address cap keeps the flood from
// using up the descriptors.
func TestConnectionFlood(t *testing.T) {
	notQuick(t, "a load drill")
	const limit, flood = 1024, 2000
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to lower the child's open-file limit")
	}
	var own syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &own); err != nil || own.Cur < flood+256 {
		t.Skipf("this process may open only %d files; the flood needs %d", own.Cur, flood+256)
	}
	c := startLimitedChild(t, limit, "--data-dir", t.TempDir())

	local := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 2 * time.Second}
	var conns []net.Conn
	defer func() {
		for _, cn := range conns {
			cn.Close()
		}
	}()
	refused := 0
	for range flood {
		cn, err := local.Dial("tcp", c.api)
		if err != nil {
			refused++
			continue
		}
		// One byte of a request line, then nothing: an idle, slow client.
		_, _ = cn.Write([]byte("G"))
		conns = append(conns, cn)
	}
	t.Logf("flood: %d connections open, %d refused by the kernel", len(conns), refused)

	// Served from another address while the flood holds.
	client := &http.Client{Timeout: 5 * time.Second}
	served := 0
	for i := range 50 {
		resp, err := client.Get("http://" + c.api + "/api/companies/v4")
		if err != nil {
			t.Errorf("request %d from another address: %v", i, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			served++
		}
	}
	if served != 50 {
		t.Errorf("%d of 50 requests from another address answered 401 during the flood", served)
	}
	select {
	case <-c.exited:
		t.Fatalf("the service exited during the flood:\n%s", c.errs)
	default:
	}
	if strings.Contains(c.errs.String(), "panic") {
		t.Errorf("the service logged a panic:\n%s", c.errs)
	}
	// And after: the flood's connections go away, the service still serves.
	for _, cn := range conns {
		cn.Close()
	}
	conns = nil
	resp, err := client.Get("http://" + c.api + "/api/companies/v4")
	if err != nil {
		t.Fatalf("after the flood: %v", err)
	}
	resp.Body.Close()
	t.Logf("served %d of 50 requests during a flood of %d idle connections at an open-file limit of %d", served, flood, limit)
}

// startLimitedChild starts the service as startChild does, with its soft
// and hard open-file limits lowered to limit (sh's ulimit sets both).
func startLimitedChild(t *testing.T, limit int, args ...string) *child {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, limit), os.Args[0]}, serveArgs(args...)...)...)
	cmd.Env = append(os.Environ(), asServiceEnv+"=1")
	return launch(t, cmd)
}
