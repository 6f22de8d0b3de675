package gateway

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// scriptedListener answers Accept from a list of errors, then with a
// connection, then closed.
type scriptedListener struct {
	errs  []error
	conns int
}

func (s *scriptedListener) Accept() (net.Conn, error) {
	if len(s.errs) > 0 {
		err := s.errs[0]
		s.errs = s.errs[1:]
		return nil, err
	}
	if s.conns > 0 {
		s.conns--
		a, _ := net.Pipe()
		return a, nil
	}
	return nil, net.ErrClosed
}
func (s *scriptedListener) Close() error   { return nil }
func (s *scriptedListener) Addr() net.Addr { return &net.TCPAddr{} }

func TestSteadyListenerOutlastsAcceptErrors(t *testing.T) {
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	enfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ENFILE)}
	var errs []error
	for range 12 {
		errs = append(errs, emfile)
	}
	errs = append(errs, enfile, syscall.ECONNABORTED, errors.New("something else"))
	sl := &scriptedListener{errs: errs, conns: 1}
	l := newSteadyListener(sl, slog.New(slog.NewTextHandler(io.Discard, nil)), 0, 0)
	var waits []time.Duration
	l.sleep = func(d time.Duration) { waits = append(waits, d) }

	c, err := l.Accept()
	if err != nil || c == nil {
		t.Fatalf("Accept after %d errors: %v", len(errs), err)
	}
	c.Close()
	if len(waits) != len(errs) {
		t.Fatalf("%d waits for %d errors", len(waits), len(errs))
	}
	if waits[0] != 5*time.Millisecond || waits[1] != 10*time.Millisecond {
		t.Errorf("first waits %v, want 5ms then 10ms", waits[:2])
	}
	for _, w := range waits {
		if w > time.Second {
			t.Errorf("waited %v, more than a second", w)
		}
	}
	if waits[len(waits)-1] != time.Second {
		t.Errorf("last wait %v, want capped at 1s", waits[len(waits)-1])
	}
	// A closed listener ends Accept.
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("closed listener: %v", err)
	}
}

func TestSteadyListenerCapsConnectionsPerAddress(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newSteadyListener(inner, slog.New(slog.NewTextHandler(io.Discard, nil)), 2, 0)
	defer l.Close()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := dial(), dial()
	sa, sb := <-accepted, <-accepted
	third := dial()
	// The third is closed by the listener: a read ends at once.
	third.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := third.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection past the cap was not closed: %v", err)
	}
	select {
	case c := <-accepted:
		t.Fatalf("a connection past the cap was accepted: %v", c.RemoteAddr())
	default:
	}
	// A slot given back (closed twice: counted once) admits the next.
	sa.Close()
	sa.Close()
	a.Close()
	d := dial()
	select {
	case sd := <-accepted:
		sd.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("a connection within the cap was not accepted after a slot freed")
	}
	sb.Close()
	b.Close()
	d.Close()
	third.Close()
}

// dialFrom dials addr from the loopback address ip (127.0.0.x).
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// closedByPeer reports whether the server closed c (a read ends at once).
func closedByPeer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// TestSteadyListenerMakesRoomForAnotherAddress: with the table full of one
// address's idle connections, a connection from another address takes the
// oldest of them; the address holding the most is refused when the table
// is full rather than take from one holding fewer.
func TestSteadyListenerMakesRoomForAnotherAddress(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newSteadyListener(inner, slog.New(slog.NewTextHandler(io.Discard, nil)), 0, 4)
	defer l.Close()
	addr := inner.Addr().String()
	served := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(served)
				return
			}
			served <- c
			// The server waits for a request on it, as fasthttp does.
			go func() { _, _ = c.Read(make([]byte, 1)) }()
		}
	}()
	accepted := func(what string) {
		t.Helper()
		select {
		case <-served:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s was not accepted", what)
		}
	}
	var hog []net.Conn
	for i := range 4 {
		hog = append(hog, dialFrom(t, "127.0.0.2", addr))
		accepted("the hog's connection")
		if i == 0 {
			time.Sleep(20 * time.Millisecond) // the oldest, by a margin
		}
	}
	time.Sleep(20 * time.Millisecond) // every one waits in Read
	other := dialFrom(t, "127.0.0.3", addr)
	defer other.Close()
	accepted("another address's connection into a full table")
	if !closedByPeer(hog[0]) {
		t.Error("the hog's oldest idle connection was not closed to make room")
	}
	for i, c := range hog[1:] {
		_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the hog's connection %d was closed too: %v", i+1, err)
		}
	}
	// The table is full again (3 + 1): the hog may not take the
	// newcomer's place back, nor its own.
	again := dialFrom(t, "127.0.0.2", addr)
	defer again.Close()
	if !closedByPeer(again) {
		t.Error("the address holding the most got a connection from a full table")
	}
	for _, c := range hog {
		c.Close()
	}
}

// TestConnectionTableFairness: two client addresses keep reopening many
// connections (half of them idle slow clients, half making requests),
// more than the table holds, while a third address's requests, each on a
// connection of its own, are all answered.
func TestConnectionTableFairness(t *testing.T) {
	const table = 40
	b := setup(t, Options{Tenants: &fakeTenants{}, MaxConns: table, MaxConnsPerIP: table / 2, IdleTimeout: 30 * time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = b.srv.Serve(ln) }()
	addr := ln.Addr().String()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var opened atomic.Int64
	for _, ip := range []string{"127.0.0.2", "127.0.0.3"} {
		for i := range table {
			wg.Go(func() {
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: time.Second}
				for {
					select {
					case <-stop:
						return
					default:
					}
					c, err := d.Dial("tcp", addr)
					if err != nil {
						continue
					}
					opened.Add(1)
					if i%2 == 0 {
						// A slow client: one byte of a request, then nothing.
						_, _ = c.Write([]byte("G"))
						time.Sleep(time.Duration(50+i*5) * time.Millisecond)
					} else {
						_, _ = io.WriteString(c, "GET /api/companies/v4 HTTP/1.1\r\nHost: x\r\n\r\n")
						_ = c.SetReadDeadline(time.Now().Add(time.Second))
						_, _ = c.Read(make([]byte, 512))
					}
					c.Close()
				}
			})
		}
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	time.Sleep(300 * time.Millisecond) // the table fills

	cl := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.4")}}).DialContext}}
	const requests = 40
	answered := 0
	for i := range requests {
		resp, err := cl.Get("http://" + addr + "/api/companies/v4")
		if err != nil {
			t.Errorf("request %d from a third address: %v", i, err)
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("request %d from a third address: %d, want 401 (served)", i, resp.StatusCode)
			continue
		}
		answered++
	}
	t.Logf("%d of %d requests from a third address answered while two others opened %d connections", answered, requests, opened.Load())
	if opened.Load() < 2*table {
		t.Errorf("the two addresses opened only %d connections: the table was never contested", opened.Load())
	}
}

// gatedConn is a net.Conn whose Read takes its bytes from in and, once it
// has them, tells arrived and waits for proceed before returning them:
// the moment between the underlying read and the table seeing it.
type gatedConn struct {
	remote   net.Addr
	in       chan []byte
	arrived  chan struct{}
	proceed  chan struct{}
	closed   chan struct{}
	closeOne sync.Once
}

func newGatedConn(ip string) *gatedConn {
	return &gatedConn{remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000},
		in: make(chan []byte), arrived: make(chan struct{}), proceed: make(chan struct{}),
		closed: make(chan struct{})}
}

func (g *gatedConn) Read(b []byte) (int, error) {
	select {
	case p := <-g.in:
		g.arrived <- struct{}{}
		<-g.proceed
		return copy(b, p), nil
	case <-g.closed:
		return 0, net.ErrClosed
	}
}
func (g *gatedConn) Write(b []byte) (int, error) { return len(b), nil }
func (g *gatedConn) Close() error {
	g.closeOne.Do(func() { close(g.closed) })
	return nil
}
func (g *gatedConn) isClosed() bool {
	select {
	case <-g.closed:
		return true
	default:
		return false
	}
}
func (g *gatedConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (g *gatedConn) RemoteAddr() net.Addr             { return g.remote }
func (g *gatedConn) SetDeadline(time.Time) error      { return nil }
func (g *gatedConn) SetReadDeadline(time.Time) error  { return nil }
func (g *gatedConn) SetWriteDeadline(time.Time) error { return nil }

// readResult is what one Read on a table connection returned.
type readResult struct {
	n   int
	err error
}

// startRead runs a Read on c as the server does, returning its result.
func startRead(c net.Conn) <-chan readResult {
	done := make(chan readResult, 1)
	go func() {
		n, err := c.Read(make([]byte, 64))
		done <- readResult{n, err}
	}()
	return done
}

// fullTable is a listener whose table (two places) holds two connections
// of 127.0.0.2, both admitted; a third from 127.0.0.3 takes one of them
// if one is idle.
func fullTable(t *testing.T) (l *steadyListener, first, second *gatedConn, cFirst, cSecond net.Conn) {
	t.Helper()
	l = newSteadyListener(&scriptedListener{}, slog.New(slog.NewTextHandler(io.Discard, nil)), 0, 2)
	first, second = newGatedConn("127.0.0.2"), newGatedConn("127.0.0.2")
	var ok bool
	if cFirst, ok = l.admit(first); !ok {
		t.Fatal("first connection refused")
	}
	time.Sleep(time.Millisecond) // first is the oldest
	if cSecond, ok = l.admit(second); !ok {
		t.Fatal("second connection refused")
	}
	return l, first, second, cFirst, cSecond
}

// TestEvictedConnectionServesNothing: a connection evicted after its
// request's bytes left the socket but before Read returned them never
// hands them to the server: the Read fails as closed.
func TestEvictedConnectionServesNothing(t *testing.T) {
	l, first, second, cFirst, _ := fullTable(t)
	read := startRead(cFirst)
	first.in <- []byte("GET /api/companies/v4 HTTP/1.1\r\n\r\n")
	<-first.arrived // the underlying Read has the bytes; the table not yet
	newcomer := newGatedConn("127.0.0.3")
	if _, ok := l.admit(newcomer); !ok {
		t.Fatal("the newcomer was refused though the other address held an idle connection")
	}
	if !first.isClosed() {
		t.Fatal("the oldest idle connection was not the one evicted")
	}
	if second.isClosed() {
		t.Error("the younger connection was evicted too")
	}
	first.proceed <- struct{}{}
	r := <-read
	if r.n != 0 || !errors.Is(r.err, net.ErrClosed) {
		t.Fatalf("Read on an evicted connection returned %d bytes, %v; want 0, net.ErrClosed", r.n, r.err)
	}
	if r := <-startRead(cFirst); r.n != 0 || !errors.Is(r.err, net.ErrClosed) {
		t.Errorf("a later Read on the evicted connection: %d, %v", r.n, r.err)
	}
}

// TestBusyConnectionIsNotEvicted: once a Read handed the server a
// request's first bytes the connection is not idle, while the rest of the
// request is sent and while it is answered; after its answer, waiting for
// the next request, it is idle again.
func TestBusyConnectionIsNotEvicted(t *testing.T) {
	l, first, second, cFirst, cSecond := fullTable(t)
	// The second connection is being answered.
	read := startRead(cSecond)
	second.in <- []byte("GET /api/companies/v4 HTTP/1.1\r\n\r\n")
	<-second.arrived
	second.proceed <- struct{}{}
	<-read
	read = startRead(cFirst)
	first.in <- []byte("POST /api/companies/v4/documents HTTP/1.1\r\n")
	<-first.arrived
	first.proceed <- struct{}{}
	if r := <-read; r.n == 0 || r.err != nil {
		t.Fatalf("first bytes of a request: %d, %v", r.n, r.err)
	}
	// The server waits in Read for the rest of the request.
	read = startRead(cFirst)
	if _, ok := l.admit(newGatedConn("127.0.0.3")); ok {
		t.Fatal("a connection was taken for the newcomer though none was idle")
	}
	if first.isClosed() || second.isClosed() {
		t.Fatal("a connection still sending its request was evicted")
	}
	// The rest arrives (the table passes over it again in the gap), the
	// answer is written.
	first.in <- []byte("Content-Length: 0\r\n\r\n")
	<-first.arrived
	if _, ok := l.admit(newGatedConn("127.0.0.3")); ok {
		t.Fatal("a connection was taken while its request was being read")
	}
	first.proceed <- struct{}{}
	if r := <-read; r.n == 0 || r.err != nil {
		t.Fatalf("rest of the request: %d, %v", r.n, r.err)
	}
	if _, err := cFirst.Write([]byte("HTTP/1.1 100 Continue\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	read = startRead(cFirst)
	if _, ok := l.admit(newGatedConn("127.0.0.3")); ok {
		t.Fatal("a connection was taken after an interim answer, with its body to come")
	}
	first.in <- []byte("{}")
	<-first.arrived
	first.proceed <- struct{}{}
	<-read
	if _, err := cFirst.Write([]byte("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	// Answered: the next Read waits for a new request, and the oldest
	// idle connection is this one.
	read = startRead(cFirst)
	deadline := time.Now().Add(5 * time.Second)
	for !first.isClosed() {
		if time.Now().After(deadline) {
			t.Fatal("an answered connection waiting for its next request was never taken")
		}
		if _, ok := l.admit(newGatedConn("127.0.0.3")); ok {
			break
		}
		time.Sleep(time.Millisecond) // the Read has not started yet
	}
	if r := <-read; r.n != 0 || !errors.Is(r.err, net.ErrClosed) {
		t.Errorf("Read on the evicted connection: %d, %v", r.n, r.err)
	}
	if second.isClosed() {
		t.Error("the second connection, being answered, was taken")
	}
}
