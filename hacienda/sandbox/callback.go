package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// callbackTries is how often the tax authority posts a callback: once and
// three retries on an answer other than 200 or a timeout (spec §15.5).
const callbackTries = 4

// callbackClient posts callbacks; a callback endpoint must answer fast.
// It keeps up to 64 idle connections to each callback host, as the load
// balancer in front of a service's replicas does with its connections to
// them: with net/http's default of two, most of a busy service's
// callbacks would each open and close a connection of their own, a cost
// a replica behind a load balancer does not see.
var callbackClient = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return &http.Client{Timeout: 10 * time.Second, Transport: t}
}()

// callBack posts a document's final status to its callbackUrl once the
// status resource shows the verdict, the body being that resource's JSON
// (spec §15.5), and retries three times a second apart on a failure. A
// stuck document is never called back, nor is one whose callback the
// faults lose (counted as dropped); a closing sandbox stops.
func (s *Sandbox) callBack(d *document) {
	if d.faults.stuck {
		return
	}
	if d.faults.noCallback {
		s.stats.callbacksDropped.Add(1)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	// Wait for the verdict as the status resource sees it: the delay is on
	// the sandbox's clock and may be changed meanwhile.
	var body statusBody
	for {
		body = s.statusOf(ctx, d.Key, d)
		if body.IndEstado != "recibido" && body.IndEstado != "procesando" {
			break
		}
		left := s.ProcessingDelay() - s.clock.Now().Sub(d.ReceivedAt)
		s.sleep(ctx, max(left, 100*time.Millisecond))
		if ctx.Err() != nil {
			return
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return
	}
	for try := 0; try < callbackTries && ctx.Err() == nil; try++ {
		if try > 0 {
			s.sleep(ctx, time.Second)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.CallbackURL, bytes.NewReader(raw))
		if err != nil {
			s.log.Warn("sandbox: callback URL unusable", "key", d.Key, "err", err)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		if status, err := postCallback(req); err == nil && status == http.StatusOK {
			s.stats.callbacks.Add(1)
			return
		}
		s.stats.callbackFails.Add(1)
	}
}

// postCallback posts one callback and returns the answer's status. It reads
// the answer to its end (64 KiB at most) before closing it: net/http closes
// a connection whose answer was left unread, and the next callback would
// then open a connection of its own.
func postCallback(req *http.Request) (int, error) {
	resp, err := callbackClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	// An answer cut short still carried its status; it only costs the
	// connection.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
