package gateway

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
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
	l := newSteadyListener(sl, slog.New(slog.NewTextHandler(io.Discard, nil)), 0)
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
	l := newSteadyListener(inner, slog.New(slog.NewTextHandler(io.Discard, nil)), 2)
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
