package gateway

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"
)

// steadyListener keeps accepting through errors that pass: a full table of
// open files (EMFILE, ENFILE), a connection aborted before it was
// accepted, a lack of buffers. fasthttp treats any error that is not a
// timeout as the end of the listener, so one connection flood that used up
// the open-file limit would end the service; here such an error waits
// (5 ms, doubling up to 1 s, as Go's net/http does) and accepts again.
// Only a closed listener ends Accept.
type steadyListener struct {
	net.Listener
	log   *slog.Logger
	sleep func(time.Duration) // time.Sleep; tests replace it

	mu         sync.Mutex
	lastLog    time.Time
	suppressed int
}

func newSteadyListener(ln net.Listener, log *slog.Logger) *steadyListener {
	return &steadyListener{Listener: ln, log: log, sleep: time.Sleep}
}

// Accept returns the next connection, waiting out transient errors.
func (l *steadyListener) Accept() (net.Conn, error) {
	var wait time.Duration
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			return c, nil
		}
		if errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		if wait == 0 {
			wait = 5 * time.Millisecond
		} else if wait *= 2; wait > time.Second {
			wait = time.Second
		}
		l.report(err, wait)
		l.sleep(wait)
	}
}

// report logs an accept error at most once a second, with how many were
// not logged since.
func (l *steadyListener) report(err error, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.lastLog) < time.Second {
		l.suppressed++
		return
	}
	l.log.Warn("accept failed; accepting again shortly", "err", err,
		"retry_in_ms", wait.Milliseconds(), "errors_not_logged", l.suppressed)
	l.lastLog, l.suppressed = time.Now(), 0
}
