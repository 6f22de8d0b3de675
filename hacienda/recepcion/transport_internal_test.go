package recepcion

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// countingConn counts the writes made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// A submission (its signed XML in base64: 12–20 KB of JSON) leaves the
// default client in one write, not in 4 KB pieces.
func TestSubmissionInOneWrite(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()

	c := DefaultHTTPClient()
	tr := c.Transport.(*http.Transport)
	var writes atomic.Int64
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: conn, writes: &writes}, nil
	}
	for _, size := range []int{17 << 10, 24 << 10} {
		writes.Store(0)
		req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(bytes.Repeat([]byte("A"), size)))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := writes.Load(); got != 1 {
			t.Errorf("a body of %d bytes took %d writes, want 1", size, got)
		}
	}
}
