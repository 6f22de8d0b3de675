package gateway

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
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
// It also keeps the connection table fair between client addresses. An
// address may hold at most maxPerIP connections at once (0: no cap); one
// past it is closed at once. In all at most maxTotal are open (0: no
// cap); when the table is full, a connection from an address that holds
// at least two fewer than the address holding the most takes that
// address's oldest idle connection (one that has sent nothing yet, or
// whose last request was answered and that has sent nothing since), which
// is closed; otherwise the new connection is closed. A connection still
// sending a request, or whose request is being answered, is never taken:
// once a Read has handed the server a request's first bytes the connection
// is busy until its answer is written. So two addresses
// flooding the table can never keep a third out while they have a
// connection idle. fasthttp's own MaxConnsPerIP races a connection's Close
// during shutdown with its Read, so the caps are kept here instead.
type steadyListener struct {
	net.Listener
	log      *slog.Logger
	sleep    func(time.Duration) // time.Sleep; tests replace it
	maxPerIP int
	maxTotal int

	tableMu sync.Mutex
	byAddr  map[string]map[*countedConn]struct{}
	total   int

	mu         sync.Mutex
	lastLog    time.Time
	suppressed int
}

func newSteadyListener(ln net.Listener, log *slog.Logger, maxPerIP, maxTotal int) *steadyListener {
	return &steadyListener{Listener: ln, log: log, sleep: time.Sleep, maxPerIP: maxPerIP, maxTotal: maxTotal,
		byAddr: map[string]map[*countedConn]struct{}{}}
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

// admit counts c against its address and the table, making room by
// closing another address's idle connection when the table is full, or
// closes c when it may not be served.
func (l *steadyListener) admit(c net.Conn) (net.Conn, bool) {
	if l.maxPerIP <= 0 && l.maxTotal <= 0 {
		return c, true
	}
	ip := c.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(ip); err == nil {
		ip = host
	}
	l.tableMu.Lock()
	held := len(l.byAddr[ip])
	if l.maxPerIP > 0 && held >= l.maxPerIP {
		l.tableMu.Unlock()
		c.Close()
		l.report(errTooManyFromAddress, 0)
		return nil, false
	}
	var evict *countedConn
	if l.maxTotal > 0 && l.total >= l.maxTotal {
		if evict = l.idleOfLargest(held); evict == nil {
			l.tableMu.Unlock()
			c.Close()
			l.report(errTableFull, 0)
			return nil, false
		}
		l.forget(evict)
	}
	cc := &countedConn{Conn: c, l: l, addr: ip}
	cc.active.Store(time.Now().UnixNano())
	conns := l.byAddr[ip]
	if conns == nil {
		conns = map[*countedConn]struct{}{}
		l.byAddr[ip] = conns
	}
	conns[cc] = struct{}{}
	l.total++
	l.tableMu.Unlock()
	if evict != nil {
		evict.Close()
	}
	return cc, true
}

// idleOfLargest picks, when an address holding held connections asks for
// one more of a full table, the connection to close for it: the oldest
// idle one of the address holding the most, if that address holds at
// least two more (taking one from it then leaves it no fewer than the
// newcomer). The connection returned is already marked evicted: no Read
// on it hands the server bytes any more. nil when there is none. tableMu
// is held.
func (l *steadyListener) idleOfLargest(held int) *countedConn {
	var (
		top  map[*countedConn]struct{}
		most int
	)
	for _, conns := range l.byAddr {
		if len(conns) > most {
			top, most = conns, len(conns)
		}
	}
	if most < held+2 {
		return nil
	}
	// The oldest idle connection that can still be claimed: one whose
	// Read hands the server bytes at this moment turns busy first and
	// is passed over.
	for {
		var (
			pick   *countedConn
			oldest int64
		)
		for cc := range top {
			if !cc.idle() {
				continue
			}
			if at := cc.active.Load(); pick == nil || at < oldest {
				pick, oldest = cc, at
			}
		}
		if pick == nil || pick.evict() {
			return pick
		}
	}
}

// forget takes cc out of the table. tableMu is held.
func (l *steadyListener) forget(cc *countedConn) {
	conns, ok := l.byAddr[cc.addr]
	if !ok {
		return
	}
	if _, ok := conns[cc]; !ok {
		return
	}
	delete(conns, cc)
	l.total--
	if len(conns) == 0 {
		delete(l.byAddr, cc.addr)
	}
}

func (l *steadyListener) release(cc *countedConn) {
	l.tableMu.Lock()
	l.forget(cc)
	l.tableMu.Unlock()
}

var (
	errTooManyFromAddress = errors.New("too many connections from one client address; closed")
	errTableFull          = errors.New("connection table full and no other address's connection idle; closed")
)

// A connection's state, for the table: connWaiting while nothing of it
// is being read or answered, connBusy from the first bytes of a request
// until its answer is written, connEvicted once the table took it for
// another address (final).
const (
	connWaiting int32 = iota
	connBusy
	connEvicted
)

// countedConn is a connection in the table. It gives its place back once,
// on the first Close, and tells the table whether it is idle (idle);
// active is when it last read or wrote bytes.
//
// Eviction and Read decide on one atomic state, so a connection is either
// evicted before its Read hands over a request's bytes (the Read then
// drops them and fails) or turns busy first (eviction passes it over):
// never both.
type countedConn struct {
	net.Conn
	l    *steadyListener
	addr string
	// state is connWaiting, connBusy or connEvicted.
	state atomic.Int32
	// answered is set when an answer was written since the last Read
	// that returned bytes: the next Read waits for a new request.
	answered atomic.Bool
	active   atomic.Int64 // unix nanoseconds
	once     sync.Once
}

// idle reports whether the connection may be taken for another address:
// it has sent nothing yet, or sent nothing since its last answer.
func (c *countedConn) idle() bool {
	return c.state.Load() == connWaiting
}

// evict marks c evicted if it is idle; false when it turned busy (or was
// already evicted).
func (c *countedConn) evict() bool {
	return c.state.CompareAndSwap(connWaiting, connEvicted)
}

func (c *countedConn) Read(b []byte) (int, error) {
	if c.answered.Swap(false) {
		// The last request was answered: this Read waits for the next.
		c.state.CompareAndSwap(connBusy, connWaiting)
	}
	if c.state.Load() == connEvicted {
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Read(b)
	if n > 0 {
		if !c.state.CompareAndSwap(connWaiting, connBusy) && c.state.Load() == connEvicted {
			// Evicted while the bytes were arriving: the connection is
			// being closed, and nothing read from it is served.
			return 0, net.ErrClosed
		}
		c.active.Store(time.Now().UnixNano())
	}
	return n, err
}

// interim is how fasthttp's interim answer to "Expect: 100-continue"
// begins: the request's body is still to come, so it is not an answer.
// Under TLS the bytes written are records and an interim answer counts as
// one: a body sent after it may then be taken as idle, and its request is
// refused whole (the Read fails), never served.
const interim = "HTTP/1.1 100 "

func (c *countedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 && !strings.HasPrefix(string(b[:min(len(b), len(interim))]), interim) {
		c.answered.Store(true)
	}
	c.active.Store(time.Now().UnixNano())
	return n, err
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

// closedListener reports whether an Accept error means the listener is
// closed: net.ErrClosed, or (from listeners that do not wrap it, such as
// in-memory ones) io.EOF or the same words.
func closedListener(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) ||
		strings.Contains(err.Error(), "use of closed network connection")
}
