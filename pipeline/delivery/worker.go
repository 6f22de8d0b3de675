package delivery

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// worker is what the Deliverer and the Mailer share: their lifecycle and
// the loop that claims work while workers are free and serves each claimed
// item in its own goroutine, so that a slow item holds only its own
// worker. A claim that finds less than it asked for is followed by a wait
// of poll; the backlog gauges are read at the start and every 15 seconds.
type worker[T any] struct {
	name    string // in the error of a second start: "deliverer", "mailer"
	kind    string // the metrics' kind label: "webhook", "email"
	noun    string // what is claimed, in log lines: "webhook", "e-mail"
	workers int
	poll    time.Duration
	clock   func() time.Time
	log     *slog.Logger
	metrics *metrics
	// claim claims up to n items due at now.
	claim func(ctx context.Context, now time.Time, n int) ([]T, error)
	// serve works on one claimed item until it is done or ctx ends.
	serve func(T)
	// backlog reads how many items wait and since when the oldest does.
	backlog func(ctx context.Context) (pending int, oldest time.Time, err error)
	// prune, when set, deletes one batch of settled items past their
	// retention and reports whether there may be more; it runs every
	// pruneEvery, or after a second while there are more.
	prune      func(ctx context.Context) (more bool)
	pruneEvery time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{}
}

// start runs the loop until stop; ctx's values are kept, not its end.
func (w *worker[T]) start(ctx context.Context) error {
	if w.done != nil {
		return errors.New("delivery: " + w.name + " already started")
	}
	w.ctx, w.cancel = context.WithCancel(context.WithoutCancel(ctx))
	w.done = make(chan struct{})
	if w.prune != nil {
		w.wg.Go(w.pruneLoop)
	}
	go w.run()
	return nil
}

// pruneLoop runs prune until the worker stops: bounded work per pass, a
// short wait between passes while they find full batches.
func (w *worker[T]) pruneLoop() {
	wait := w.pruneEvery
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = w.pruneEvery
		if w.prune(w.ctx) {
			wait = min(time.Second, w.pruneEvery)
		}
	}
}

// stop ends the loop, cancelling the work in flight, and waits for it or
// for ctx.
func (w *worker[T]) stop(ctx context.Context) error {
	if w.done == nil {
		return nil
	}
	w.cancel()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (w *worker[T]) run() {
	defer close(w.done)
	defer w.wg.Wait()
	free := make(chan struct{}, w.workers)
	for range w.workers {
		free <- struct{}{}
	}
	backlog := time.NewTicker(15 * time.Second)
	defer backlog.Stop()
	w.readBacklog()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-free:
		}
		n := 1
		for len(free) > 0 {
			<-free
			n++
		}
		items, err := w.claim(w.ctx, w.clock(), n)
		if err != nil && w.ctx.Err() == nil {
			w.log.Warn("claim "+w.noun+"s", "err", err)
		}
		for _, it := range items {
			w.wg.Go(func() {
				defer func() { free <- struct{}{} }()
				w.serve(it)
			})
		}
		for range n - len(items) {
			free <- struct{}{}
		}
		if len(items) == n && err == nil {
			continue // every worker busy: claim again as soon as one is free
		}
		select {
		case <-w.ctx.Done():
			return
		case <-backlog.C:
			w.readBacklog()
		case <-time.After(w.poll):
		}
	}
}

// readBacklog updates the backlog gauges.
func (w *worker[T]) readBacklog() {
	ctx, cancel := context.WithTimeout(w.ctx, 5*time.Second)
	defer cancel()
	n, oldest, err := w.backlog(ctx)
	if err != nil {
		if w.ctx.Err() == nil {
			w.log.Warn("read the "+w.noun+" backlog", "err", err)
		}
		return
	}
	w.metrics.setBacklog(w.kind, n, oldest, w.clock())
}
