package sandbox

import (
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
// would leave.
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
				resp, err := callbackClient.Post(srv.URL, "application/json", strings.NewReader("{}"))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
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
