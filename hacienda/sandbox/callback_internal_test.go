package sandbox

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Callbacks reuse their connections to a busy host, as a load balancer
// does: two waves of eight concurrent callbacks open eight connections,
// not the fourteen net/http's default of two idle connections per host
// would leave, nor the sixteen of answers left unread (the service answers
// a callback with a small JSON body).
func TestCallbacksReuseConnections(t *testing.T) {
	var opened atomic.Int64
	var (
		release atomic.Pointer[chan struct{}] // closed to answer the wave
		arrived sync.WaitGroup
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer := *release.Load()
		arrived.Done()
		<-answer
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"mensaje_api":"ok"}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	const callbacks = 8
	for wave := range 2 {
		answer := make(chan struct{})
		release.Store(&answer)
		arrived.Add(callbacks)
		var done sync.WaitGroup
		for range callbacks {
			done.Go(func() {
				req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
				if err != nil {
					t.Error(err)
					return
				}
				if status, err := postCallback(req); err != nil || status != http.StatusOK {
					t.Errorf("callback: %d, %v", status, err)
				}
			})
		}
		arrived.Wait() // all eight in flight at once
		close(answer)
		done.Wait()
		if wave == 0 && opened.Load() != callbacks {
			t.Fatalf("first wave opened %d connections, want %d", opened.Load(), callbacks)
		}
	}
	if got := opened.Load(); got != callbacks {
		t.Errorf("two waves opened %d connections, want %d", got, callbacks)
	}
}
