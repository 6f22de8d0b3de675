package client

import (
	"context"
	"time"
)

// WithClock makes the client time its retries by now and sleep instead of
// the real clock, so that a test sees the waits it asks for without
// spending them.
func WithClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) { c.now, c.sleep = now, sleep }
}
