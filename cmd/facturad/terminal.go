package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal: an *os.File whose descriptor
// is a terminal device (a tty or a pty). Anything else, a pipe, a file,
// /dev/null, a socket or an in-memory buffer, is not. On Kubernetes and
// under most supervisors a container's standard output is a pipe whose
// lines are collected and kept, so a secret written there is a secret in
// the log store.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
