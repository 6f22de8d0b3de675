package gateway

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
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
//
// It also caps the connections open at once from one client address
// (maxPerIP; 0 means no cap): a connection past it is closed at once.
// fasthttp's own MaxConnsPerIP races a connection's Close during shutdown
// with its Read, so the cap is kept here instead.
type steadyListener struct {
	net.Listener
	log      *slog.Logger
	sleep    func(time.Duration) // time.Sleep; tests replace it
	maxPerIP int

	perIPMu sync.Mutex
	perIP   map[string]int

	mu         sync.Mutex
	lastLog    time.Time
	suppressed int
}

func newSteadyListener(ln net.Listener, log *slog.Logger, maxPerIP int) *steadyListener {
	return &steadyListener{Listener: ln, log: log, sleep: time.Sleep, maxPerIP: maxPerIP, perIP: map[string]int{}}
}

// Accept returns the next connection, waiting out transient errors.
func (l *steadyListener) Accept() (net.Conn, error) {
	var wait time.Duration
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			if cc, ok := l.admit(c); ok {
				return cc, nil
			}
			continue
		}
		if closedListener(err) {
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

// admit counts c against its address, or closes it when the address has
// maxPerIP connections open already.
func (l *steadyListener) admit(c net.Conn) (net.Conn, bool) {
	if l.maxPerIP <= 0 {
		return c, true
	}
	ip := c.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(ip); err == nil {
		ip = host
	}
	l.perIPMu.Lock()
	if l.perIP[ip] >= l.maxPerIP {
		l.perIPMu.Unlock()
		c.Close()
		l.report(errTooManyFromAddress, 0)
		return nil, false
	}
	l.perIP[ip]++
	l.perIPMu.Unlock()
	return &countedConn{Conn: c, release: func() {
		l.perIPMu.Lock()
		if l.perIP[ip]--; l.perIP[ip] <= 0 {
			delete(l.perIP, ip)
		}
		l.perIPMu.Unlock()
	}}, true
}

var errTooManyFromAddress = errors.New("too many connections from one client address; closed")

// countedConn gives its address's slot back once, on the first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// closedListener reports whether an Accept error means the listener is
// closed: net.ErrClosed, or (from listeners that do not wrap it, such as
// in-memory ones) io.EOF or the same words.
func closedListener(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) ||
		strings.Contains(err.Error(), "use of closed network connection")
}
