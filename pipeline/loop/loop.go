// Package loop runs a background job of the service until it is stopped:
// the start, the ticks and the stop that the sweeps (tenant events, the
// archive) share.
package loop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Loop is a job running in a goroutine of its own, started once and
// stopped once. The zero value is ready to use.
type Loop struct {
	// Name prefixes the loop's errors ("eventsweep: already started").
	Name string

	mu   sync.Mutex
	stop context.CancelFunc
	done chan struct{}
}

// Start runs run in a goroutine with a context that ctx's values reach but
// its end does not: only Stop ends the job. A second Start is an error.
func (l *Loop) Start(ctx context.Context, run func(ctx context.Context)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		return errors.New(l.Name + ": already started")
	}
	ctx, l.stop = context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	l.done = done
	go func() {
		defer close(done)
		run(ctx)
	}()
	return nil
}

// Stop cancels the job's context and waits for it to return, or for ctx
// to end first (an error). Stopping a loop never started does nothing.
func (l *Loop) Stop(ctx context.Context) error {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: stop: %w", l.Name, ctx.Err())
	}
}

// Every calls f every d until ctx ends, the first time after d; once ctx
// has ended f is not called again, even when a tick was due.
func Every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if ctx.Err() != nil {
			return
		}
		f()
	}
}
