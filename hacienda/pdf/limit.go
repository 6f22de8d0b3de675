package pdf

import (
	"context"
	"fmt"
	"sync"
	"time"

	"facturad/hacienda/msg"
)

// Defaults of NewLimiter's bounds (docs/performance.md has the figures
// they come from).
const (
	// DefaultMaxRenders is how many renders one process draws at once.
	// A render is CPU work of a few to a hundred milliseconds: more at
	// once than the cores only adds memory, and each holds its document,
	// its XML and about a megabyte of its own while it runs.
	DefaultMaxRenders = 4
	// DefaultMaxRendersPerCompany is how many of one company's PDF
	// downloads one process draws at once, so that one company cannot
	// take every slot.
	DefaultMaxRendersPerCompany = 2
	// BusyRetryAfter is the Retry-After of a refused download: a render
	// ends well within it.
	BusyRetryAfter = time.Second
)

// Limiter bounds the renders of one process: at most max at once in all,
// and at most perCompany at once for one company's downloads. Downloads
// (TryRender) are refused past the bounds, since the caller may come back;
// background work (WaitRender: the e-mail, the export, the archive) waits
// for a slot instead, within the same process-wide bound, so no render
// goes unbounded. Make it with NewLimiter; it is safe for concurrent use.
type Limiter struct {
	slots      chan struct{}
	perCompany int

	mu        sync.Mutex
	companies map[int64]int
}

// NewLimiter returns a Limiter of max renders at once, perCompany of them
// for one company's downloads; a bound of 0 or less takes its default
// (DefaultMaxRenders, DefaultMaxRendersPerCompany).
func NewLimiter(max, perCompany int) *Limiter {
	if max <= 0 {
		max = DefaultMaxRenders
	}
	if perCompany <= 0 {
		perCompany = DefaultMaxRendersPerCompany
	}
	return &Limiter{slots: make(chan struct{}, max), perCompany: perCompany, companies: map[int64]int{}}
}

// Max is the process-wide bound; PerCompany the per-company one.
func (l *Limiter) Max() int        { return cap(l.slots) }
func (l *Limiter) PerCompany() int { return l.perCompany }

// InUse is how many renders hold a slot now.
func (l *Limiter) InUse() int { return len(l.slots) }

// TryRender takes a slot for a download of a document of companyID
// without waiting: a *CompanyBusyError (429) when the company has its
// bound of renders running, a *BusyError (503) when the process has. The
// release func frees the slot; call it once.
func (l *Limiter) TryRender(companyID int64) (release func(), err error) {
	l.mu.Lock()
	if l.companies[companyID] >= l.perCompany {
		l.mu.Unlock()
		return nil, &CompanyBusyError{After: BusyRetryAfter}
	}
	select {
	case l.slots <- struct{}{}:
	default:
		l.mu.Unlock()
		return nil, &BusyError{After: BusyRetryAfter}
	}
	l.companies[companyID]++
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			if l.companies[companyID]--; l.companies[companyID] <= 0 {
				delete(l.companies, companyID)
			}
			l.mu.Unlock()
			<-l.slots
		})
	}, nil
}

// WaitRender takes a process-wide slot, waiting until one is free or ctx
// ends (then its error, wrapped). Background work calls it: it is not
// refused, and no company's bound applies to it.
func (l *Limiter) WaitRender(ctx context.Context) (release func(), err error) {
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("pdf: wait for a render slot: %w", context.Cause(ctx))
	}
	var once sync.Once
	return func() { once.Do(func() { <-l.slots }) }, nil
}

// BusyError refuses a download when the process draws its most renders
// at once: 503 with Retry-After, a refusal of load (shed), not a failure.
type BusyError struct{ After time.Duration }

func (e *BusyError) Error() string { return e.Describe().String() }

// Describe is the refusal for the caller.
func (e *BusyError) Describe() msg.Message { return msg.PDFBusy.With() }

// HTTPStatus is 503.
func (e *BusyError) HTTPStatus() int { return 503 }

// RetryAfter is how long to wait before trying again.
func (e *BusyError) RetryAfter() time.Duration { return e.After }

// Shed reports that the service refused the work because of its load.
func (e *BusyError) Shed() bool { return true }

// CompanyBusyError refuses a download when the company has its most
// renders running at once: 429 with Retry-After, the caller's own excess.
type CompanyBusyError struct{ After time.Duration }

func (e *CompanyBusyError) Error() string { return e.Describe().String() }

// Describe is the refusal for the caller.
func (e *CompanyBusyError) Describe() msg.Message { return msg.PDFCompanyBusy.With() }

// HTTPStatus is 429.
func (e *CompanyBusyError) HTTPStatus() int { return 429 }

// RetryAfter is how long to wait before trying again.
func (e *CompanyBusyError) RetryAfter() time.Duration { return e.After }
