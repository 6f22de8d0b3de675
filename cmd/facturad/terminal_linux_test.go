package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair with Linux's /dev/ptmx: what is
// written to tty is read from the master. It skips the test where the
// system has none to give.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("the pseudo-terminal's number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

func TestIsTerminalPTY(t *testing.T) {
	_, tty := openPTY(t)
	if !isTerminal(tty) {
		t.Fatal("a pseudo-terminal is not a terminal")
	}
}

// A first start on a terminal shows the generated credentials there, once,
// and they log in; the log says nothing of them.
func TestBootstrapSecretsToATerminal(t *testing.T) {
	master, tty := openPTY(t)
	out, logs := new(syncBuffer), new(syncBuffer)
	go func() {
		// The terminal ends lines with \r\n; the printed lines are read
		// as the other tests read them.
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				_, _ = out.Write(bytes.ReplaceAll(buf[:n], []byte("\r\n"), []byte("\n")))
			}
			if err != nil {
				return
			}
		}
	}()
	api, _, stop := startServiceTo(t, t.TempDir(), tty, logs, out)
	defer stop()
	// The credentials follow the line startServiceTo waited for, in the
	// same write; the terminal may hand them over in a later read.
	for deadline := time.Now().Add(10 * time.Second); !printedToken.MatchString(out.String()); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no credentials on the terminal:\n%s", out)
		}
	}
	cr := printedAdmin(t, out.String())
	if got := adminStatus(t, api, cr); got != http.StatusOK {
		t.Fatalf("the printed admin: status %d, want 200", got)
	}
	if strings.Contains(logs.String(), "admin-reset") || strings.Contains(logs.String(), cr.Contrasena) {
		t.Errorf("the log speaks of the credentials shown on the terminal:\n%s", logs)
	}
}
