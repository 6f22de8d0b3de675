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
