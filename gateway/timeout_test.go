package gateway

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHeaderTimeout: a connection that sends its headers too slowly is
// answered 408 and closed after HeaderTimeout, while a request whose
// headers come at once may take up to ReadTimeout over its body.
func TestHeaderTimeout(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}, HeaderTimeout: 300 * time.Millisecond, ReadTimeout: 5 * time.Second})

	// Over TCP, so that the deadline is the kernel's.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = b.srv.Serve(ln) }()
	slow, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	start := time.Now()
	if _, err := io.WriteString(slow, "GET /api/companies/v4 HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	// The rest of the headers never comes.
	_ = slow.SetReadDeadline(time.Now().Add(5 * time.Second))
	answer, _ := io.ReadAll(slow)
	if waited := time.Since(start); waited >= 4*time.Second {
		t.Fatalf("a connection with unfinished headers was held %v", waited)
	}
	if !strings.Contains(string(answer), " 408 ") {
		t.Fatalf("unfinished headers answered %q, want a 408", firstLine(answer))
	}

	// Headers at once, the body slowly but within ReadTimeout: served.
	c, err := b.apiLn.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"usuario": "x"}`
	if _, err := io.WriteString(c, "POST /api/resellers/v4 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond) // twice HeaderTimeout
	if _, err := io.WriteString(c, body); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("a slow body within ReadTimeout got no answer: %v", err)
	}
	// Unauthenticated: 401, but read and answered, not timed out.
	if !strings.Contains(line, " 401 ") {
		t.Fatalf("slow body answered %q, want 401 (read in full, then refused)", line)
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\r\n")
	return s
}
