package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// lanes bound the work of each branch: at most workers documents of a
// branch run at once and at most queue more wait for a turn. A lane exists
// while it has work (created on first use, retired when its last document
// leaves), so idle branches cost nothing. The callers' own goroutines do
// the work: a waiting caller is a queue slot, so the backlog is bounded by
// workers+queue per branch and never grows past it.
type lanes struct {
	workers, queue int
	maxTotal       int // admitted documents over every branch
	perCompany     int // admitted documents of one company, every branch (0: no bound)

	mu        sync.Mutex
	m         map[int64]*lane
	companies map[int64]int // admitted documents per company; absent at 0
	total     int           // documents admitted and not yet done, every branch
	drained   chan struct{} // closed when total drops to 0 while closing
	closing   bool
}

type lane struct {
	sem      chan struct{} // a token per running document
	admitted int           // running + waiting
}

func newLanes(workers, queue, maxTotal, perCompany int) *lanes {
	return &lanes{workers: workers, queue: queue, maxTotal: maxTotal, perCompany: perCompany,
		m: map[int64]*lane{}, companies: map[int64]int{}}
}

// errLaneFull is returned by acquire when the branch's lane is full;
// errCompanyFull when the company's branches together hold as many
// documents as one company may; errAllFull when the lanes together hold as
// many documents as allowed.
var (
	errLaneFull    = errors.New("lane full")
	errCompanyFull = errors.New("company's lanes full")
	errAllFull     = errors.New("every lane full")
)

// acquire admits one document of the company's branch and waits for its
// turn. It returns a release function to call when the document is done. A
// full lane is errLaneFull, a company at its bound errCompanyFull; a
// closing pipeline ErrStopping.
func (ls *lanes) acquire(ctx context.Context, company, branch int64) (func(), error) {
	ls.mu.Lock()
	if ls.closing {
		ls.mu.Unlock()
		return nil, ErrStopping
	}
	if ls.maxTotal > 0 && ls.total >= ls.maxTotal {
		ls.mu.Unlock()
		return nil, errAllFull
	}
	if ls.perCompany > 0 && ls.companies[company] >= ls.perCompany {
		ls.mu.Unlock()
		return nil, errCompanyFull
	}
	l, ok := ls.m[branch]
	if !ok {
		l = &lane{sem: make(chan struct{}, ls.workers)}
		ls.m[branch] = l
	}
	if l.admitted >= ls.workers+ls.queue {
		ls.mu.Unlock()
		return nil, errLaneFull
	}
	l.admitted++
	ls.companies[company]++
	ls.total++
	ls.mu.Unlock()

	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		ls.leave(company, branch, l)
		return nil, fmt.Errorf("wait for a turn in the branch's lane: %w", context.Cause(ctx))
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-l.sem
			ls.leave(company, branch, l)
		})
	}, nil
}

func (ls *lanes) leave(company, branch int64, l *lane) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l.admitted--
	ls.total--
	if l.admitted == 0 {
		delete(ls.m, branch)
	}
	if ls.companies[company]--; ls.companies[company] <= 0 {
		delete(ls.companies, company)
	}
	if ls.total == 0 && ls.drained != nil {
		close(ls.drained)
		ls.drained = nil
	}
}

// close refuses new documents and returns a channel closed when the
// admitted ones are done.
func (ls *lanes) close() <-chan struct{} {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.closing = true
	ch := make(chan struct{})
	if ls.total == 0 {
		close(ch)
		return ch
	}
	if ls.drained == nil {
		ls.drained = ch
	} else {
		ch = ls.drained
	}
	return ch
}

// stats returns the number of live lanes and admitted documents.
func (ls *lanes) stats() (lanes, admitted int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.m), ls.total
}
