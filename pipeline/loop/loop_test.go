package loop

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestStartStop(t *testing.T) {
	var l Loop
	l.Name = "test"
	if err := l.Stop(context.Background()); err != nil {
		t.Fatalf("Stop before Start: %v", err)
	}
	started := make(chan struct{})
	var ended atomic.Bool
	parent, cancel := context.WithCancel(context.Background())
	if err := l.Start(parent, func(ctx context.Context) {
		close(started)
		<-ctx.Done()
		ended.Store(true)
	}); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := l.Start(parent, func(context.Context) {}); err == nil || err.Error() != "test: already started" {
		t.Fatalf("second Start: %v", err)
	}
	// The caller's context ending does not stop the job.
	cancel()
	if ended.Load() {
		t.Fatal("the job ended with the context Start was given")
	}
	if err := l.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !ended.Load() {
		t.Fatal("Stop returned before the job did")
	}
}

func TestStopGivesUp(t *testing.T) {
	l := Loop{Name: "stuck"}
	release := make(chan struct{})
	defer close(release)
	if err := l.Start(context.Background(), func(context.Context) { <-release }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stop of a job that does not return: %v", err)
	}
}

func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Millisecond, func() {
			if n.Add(1) == 3 {
				cancel()
			}
		})
	}()
	<-done
	if got := n.Load(); got != 3 {
		t.Fatalf("f ran %d times, want 3 (it stops once ctx ends)", got)
	}
}
