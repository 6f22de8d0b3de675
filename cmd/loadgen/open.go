package main

import (
	"context"
	"sync"
	"time"
)

// The open loop of `loadgen --rate`: calls arrive on a fixed
// schedule, as from many independent clients, instead of each worker
// calling again when its last call returns. A closed loop slows down with
// the service and so never sees the queue a slow moment builds; here a
// call due while every worker is busy waits for one, and that wait is part
// of its latency (no coordinated omission).

// arrival is one measured call of the open loop: its index and when it was
// due.
type arrival struct {
	i  int
	at time.Time
}

// openLoop makes the measured calls at o.Rate a second from o.Workers
// workers: call i is due at runStart + i/o.Rate whatever became of the
// calls before it, and is made by the first free worker. It returns once
// a bound has stopped the arrivals and the calls made have returned.
func (lr *loadRun) openLoop(ctx context.Context, runStart time.Time) {
	// A token for each free worker: a worker is free from the start, and
	// again once its call has returned, whenever its goroutine runs.
	free := make(chan struct{}, lr.o.Workers)
	for range lr.o.Workers {
		free <- struct{}{}
	}
	jobs := make(chan arrival, lr.o.Workers) // never full: each job holds a token
	var wg sync.WaitGroup
	for w := 0; w < lr.o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var wt workerTimes
			defer wt.addTo(lr.tally)
			for a := range jobs {
				lr.serve(ctx, a.i, a.at, &wt)
				free <- struct{}{}
			}
		}()
	}
	lr.dispatch(ctx, runStart, free, jobs)
	close(jobs)
	wg.Wait()
}

// dispatch hands each call to a worker at its due time until a bound
// stops the arrivals. A call that finds no free worker is counted late
// and handed over as soon as one is free; so are the calls that fell due
// meanwhile, which found no free worker either.
func (lr *loadRun) dispatch(ctx context.Context, runStart time.Time, free <-chan struct{}, jobs chan<- arrival) {
	interval := float64(time.Second) / lr.o.Rate
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var waitedUntil time.Time // when the last wait for a free worker ended
	for i := 0; ; i++ {
		at := runStart.Add(time.Duration(float64(i) * interval))
		if !lr.arrives(ctx, i, at) {
			return
		}
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				lr.stoppedBy.CompareAndSwap(nil, "max-time")
				return
			case <-timer.C:
			}
		}
		a := arrival{i: i, at: at}
		if at.After(waitedUntil) {
			select {
			case <-free:
				jobs <- a
				continue
			default:
			}
		}
		lr.late.Add(1)
		select {
		case <-free:
			waitedUntil = time.Now()
			jobs <- a
		case <-ctx.Done():
			lr.stoppedBy.CompareAndSwap(nil, "max-time")
			return
		}
	}
}

// arrives reports whether call i, due at at, is within the bounds of the
// run; if not, the first bound reached is noted in stoppedBy.
func (lr *loadRun) arrives(ctx context.Context, i int, at time.Time) bool {
	switch {
	case ctx.Err() != nil:
		lr.stoppedBy.CompareAndSwap(nil, "max-time")
	case lr.o.Count > 0 && i >= lr.o.Count:
		lr.stoppedBy.CompareAndSwap(nil, "count")
	case !lr.deadline.IsZero() && !at.Before(lr.deadline):
		lr.stoppedBy.CompareAndSwap(nil, "duration")
	default:
		return true
	}
	return false
}
