package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"facturad/signer"
)

// Pipeline issues documents and keeps them moving. Build it with New, then
// Start it; it is safe for concurrent use.
type Pipeline struct {
	o       Options
	log     *slog.Logger
	lanes   *lanes
	turns   *turns
	metrics *pipelineMetrics
	// answerCerts keeps the tax authority's signing certificates, parsed
	// and verified, between its answers.
	answerCerts *signer.VerifyCache
	// supplierCerts keeps suppliers' signing certificates, parsed once.
	supplierCerts *signer.VerifyCache

	state atomic.Int32 // stateNew, stateRunning, stateStopped

	// runCtx ends at StopAndCancel: the work in flight is given up (the
	// documents are stored as they stand).
	runCtx    context.Context
	runCancel context.CancelCauseFunc

	retrierStop chan struct{}
	retrierDone chan struct{}
	stopOnce    sync.Once
	// receivedFirst alternates the kind of row the background worker
	// claims first: documents, then receivers' messages, and so on.
	receivedFirst atomic.Uint64
	// lastProbe is when the background worker last looked for due probes
	// of refused credentials (unix nanoseconds of Options.Clock).
	lastProbe atomic.Int64
}

const (
	stateNew int32 = iota
	stateRunning
	stateStopped
)

// New checks the options and returns a Pipeline, not started.
func New(o Options) (*Pipeline, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	ls := newLanes(o.Workers, o.QueueSize, o.MaxInFlight, o.MaxInFlightPerCompany)
	m, err := newMetrics(o.Registerer, ls)
	if err != nil {
		return nil, err
	}
	p := &Pipeline{
		o:             o,
		log:           o.Logger.With("component", "pipeline"),
		lanes:         ls,
		turns:         newTurns(o.Signers),
		metrics:       m,
		answerCerts:   signer.NewVerifyCache(0),
		supplierCerts: signer.NewVerifyCache(0),
		retrierStop:   make(chan struct{}),
		retrierDone:   make(chan struct{}),
	}
	p.runCtx, p.runCancel = context.WithCancelCause(context.Background())
	return p, nil
}

// Start makes the pipeline take documents and starts the background worker
// (unless Options.DisableRetrier). ctx is not kept.
func (p *Pipeline) Start(ctx context.Context) error {
	if !p.state.CompareAndSwap(stateNew, stateRunning) {
		return errors.New("pipeline: already started or stopped")
	}
	if p.o.DisableRetrier {
		close(p.retrierDone)
		return nil
	}
	go p.runRetrier()
	return nil
}

// Stop stops softly: new send calls are refused with ErrStopping, the ones
// admitted to a lane finish, and the background worker finishes the
// documents it claimed. It returns when all that is done, or with ctx's
// error when ctx ends first (the work then goes on; call StopAndCancel).
func (p *Pipeline) Stop(ctx context.Context) error {
	return p.shutdown(ctx, false)
}

// StopAndCancel stops hard: like Stop, but the work in flight is given up
// at once. Documents are stored as they stand: a document whose submission
// was cut stays in 05 and another replica, or the next start, retries it.
func (p *Pipeline) StopAndCancel(ctx context.Context) error {
	return p.shutdown(ctx, true)
}

func (p *Pipeline) shutdown(ctx context.Context, cancel bool) error {
	wasRunning := p.state.Swap(stateStopped) == stateRunning
	if cancel {
		p.runCancel(ErrStopping)
	}
	p.stopOnce.Do(func() {
		close(p.retrierStop)
		if !wasRunning {
			// Never started: nothing to wait for.
			select {
			case <-p.retrierDone:
			default:
				close(p.retrierDone)
			}
		}
	})
	drained := p.lanes.close()
	for _, ch := range []<-chan struct{}{drained, p.retrierDone} {
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("pipeline: stop: %w", context.Cause(ctx))
		}
	}
	return nil
}

// running returns an error unless the pipeline takes work.
func (p *Pipeline) running() error {
	switch p.state.Load() {
	case stateRunning:
		return nil
	case stateNew:
		return ErrNotStarted
	}
	return ErrStopping
}

// workCtx is ctx that also ends at StopAndCancel.
func (p *Pipeline) workCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(p.runCtx, func() { cancel(context.Cause(p.runCtx)) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// detached is a context for the store writes that must happen whatever
// became of the caller's context: it keeps ctx's values, not its end.
func (p *Pipeline) detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), p.o.StoreTimeout)
}
