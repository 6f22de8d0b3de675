package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// isTerminal: what is not a terminal device is not a terminal, whatever
// kind of output it is (the terminal itself: terminal_linux_test.go).
func TestIsTerminalNot(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for _, tt := range []struct {
		name string
		w    io.Writer
	}{
		{"pipe", w},
		{"regular file", file},
		{"/dev/null, a character device that is no terminal", devNull},
		{"buffer", new(bytes.Buffer)},
		{"discard", io.Discard},
	} {
		if isTerminal(tt.w) {
			t.Errorf("%s: a terminal", tt.name)
		}
	}
}

// A first start whose output is a pipe, as a container's is, prints no
// generated secret, neither on its output nor in its log; the log says
// that credentials were generated and how to get usable ones, and those
// admin-reset prints log in.
func TestBootstrapSecretsNotToAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, logs := new(syncBuffer), new(syncBuffer)
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(out, r); close(copied) }()
	dir := t.TempDir()
	_, _, stop := startServiceTo(t, dir, w, logs, out)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	<-copied
	if !strings.Contains(out.String(), "bootstrap admin created: usuario admin") {
		t.Errorf("the admin's creation is not announced:\n%s", out)
	}
	for _, s := range []*syncBuffer{out, logs} {
		if printedPassword.MatchString(s.String()) || printedToken.MatchString(s.String()) {
			t.Errorf("a generated secret was written:\n%s", s)
		}
	}
	if !strings.Contains(logs.String(), "generated and not shown") || !strings.Contains(logs.String(), "facturad admin-reset") ||
		!strings.Contains(logs.String(), "Recover admin access") {
		t.Errorf("the log does not say how to get credentials:\n%s", logs)
	}

	// The operator follows the log's advice.
	cr := resetAdmin(t, dir)
	_, api, _, stop := startService(t, dir)
	defer stop()
	if got := adminStatus(t, api, cr); got != http.StatusOK {
		t.Fatalf("the reset admin: status %d, want 200", got)
	}
}
