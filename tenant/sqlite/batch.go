package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// maxBatch bounds how many document writes share one transaction, so that
// the write lock is never held for long: at a few hundred microseconds a
// write, a full batch holds it for about 10 ms.
const maxBatch = 32

// A batch that finds fewer than groupTarget writes queued, when the batch
// before it held several (other writers are about), waits up to groupWait
// for more before it commits: each commit costs an fsync and a WAL append
// of its pages whatever it holds, and the writes of concurrent sends
// (three each, a few milliseconds apart) rarely queue at the same instant.
// Measured end to end (docs/performance.md, "Settings chosen by
// measurement"), batches grew from 2.8 to 4.5-5.6 writes. A lone writer
// never waits.
const (
	groupTarget = 8
	groupWait   = time.Millisecond
)

// errStoreClosed is a write queued when the Store was closed.
var errStoreClosed = errors.New("sqlite store closed")

// writeOp is one caller's write: run does its statements in the shared
// transaction and reports the caller's own failure; done receives the
// final outcome (run's error, or the commit's).
type writeOp struct {
	run  func(ctx context.Context, tx *sql.Tx) error
	ctx  context.Context
	done chan error
	// state is opQueued until the batcher takes the write (opTaken) or
	// its caller leaves first (opAbandoned); whoever moves it first wins.
	state atomic.Int32
}

const (
	opQueued int32 = iota
	opTaken
	opAbandoned
)

// batcher commits the document writes of concurrent callers together (group
// commit). One goroutine takes the writes queued while the previous
// transaction committed, runs each inside its own savepoint in one
// transaction and commits once: one WAL append and one fsync for the lot
// instead of one each. A write that fails is rolled back to its savepoint
// alone and its caller gets its error; the others go on. A write that
// finds the file idle after a lone write commits at once; after a batch of
// several, it waits a little for company (groupWait).
// Every caller returns only after the commit that holds its write, so a
// write answered nil is as durable as before (synchronous=FULL).
type batcher struct {
	db      *sql.DB
	sp      savepointStmts
	ops     chan *writeOp
	quit    chan struct{}
	stopped chan struct{} // closed once loop has returned

	closeOnce sync.Once
	sizes     func(n int) // observes each batch's size; may be nil

	target int           // groupTarget
	wait   time.Duration // groupWait
}

func newBatcher(db *sql.DB, sp savepointStmts) *batcher {
	b := newBatcherWith(db, sp, groupTarget, groupWait)
	go b.loop()
	return b
}

// newBatcherWith is a batcher, not yet started, that waits up to wait for
// target writes (tests).
func newBatcherWith(db *sql.DB, sp savepointStmts, target int, wait time.Duration) *batcher {
	return &batcher{db: db, sp: sp, ops: make(chan *writeOp, maxBatch), quit: make(chan struct{}),
		stopped: make(chan struct{}), target: target, wait: wait}
}

// do runs fn in a batch transaction and returns once that transaction has
// committed (nil, or fn's error) or failed. fn runs with a context that
// keeps ctx's values but not its end: interrupting one statement would
// roll back the whole shared transaction. A ctx that ends while the write
// still waits for its batch returns at once, and the write is never made;
// once its batch has taken it, the caller waits for the batch's outcome.
func (b *batcher) do(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return classify(b.queue(ctx, fn))
}

// queue queues fn and waits for its batch's outcome (do).
func (b *batcher) queue(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	op := &writeOp{run: fn, ctx: ctx, done: make(chan error, 1)}
	select {
	case b.ops <- op:
	case <-b.quit:
		return errStoreClosed
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	select {
	case err := <-op.done:
		return err
	case <-ctx.Done():
		if op.state.CompareAndSwap(opQueued, opAbandoned) {
			return context.Cause(ctx)
		}
		return <-op.done // taken: its batch answers
	case <-b.stopped:
		// Closed: the op was answered before the loop returned, or it
		// never will be.
		select {
		case err := <-op.done:
			return err
		default:
			return errStoreClosed
		}
	}
}

func (b *batcher) loop() {
	defer close(b.stopped)
	batch := make([]*writeOp, 0, maxBatch)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	last := 0 // the previous batch's size
	for {
		select {
		case <-b.quit: // before any queued write
			b.failQueued()
			return
		default:
		}
		select {
		case op := <-b.ops:
			batch = append(batch[:0], op)
		case <-b.quit:
			b.failQueued()
			return
		}
	gather:
		for len(batch) < maxBatch {
			select {
			case op := <-b.ops:
				batch = append(batch, op)
			default:
				break gather
			}
		}
		if len(batch) < b.target && last > 1 {
			timer.Reset(b.wait)
		wait:
			for len(batch) < b.target {
				select {
				case op := <-b.ops:
					batch = append(batch, op)
				case <-timer.C:
					break wait
				case <-b.quit:
					break wait // committed below; the queue is failed next round
				}
			}
			timer.Stop()
		}
		last = len(batch)
		b.commit(batch)
		clear(batch)
	}
}

// failQueued answers the writes still queued at Close.
func (b *batcher) failQueued() {
	for {
		select {
		case op := <-b.ops:
			op.done <- errStoreClosed
		default:
			return
		}
	}
}

// commit runs one batch and answers each of its callers.
func (b *batcher) commit(batch []*writeOp) {
	live := batch[:0]
	for _, op := range batch {
		if !op.state.CompareAndSwap(opQueued, opTaken) {
			continue // its caller left before its turn: nothing written
		}
		live = append(live, op)
	}
	if len(live) == 0 {
		return
	}
	if b.sizes != nil {
		b.sizes(len(live))
	}
	errs, err := b.run(live)
	for i, op := range live {
		switch {
		case err != nil && errs[i] != nil:
			// The transaction failed: a write's own failure may have come
			// from another write of the batch, now undone too (a unique
			// rule), so only the transaction's failure is believed.
			op.done <- fmt.Errorf("%w (the write had failed too: %v)", err, errs[i])
		case errs[i] != nil:
			op.done <- errs[i]
		default:
			op.done <- err
		}
	}
}

// run runs the writes in one transaction: each in its own savepoint when
// there are several. errs holds each write's own failure; err is the
// transaction's (begin, savepoint, commit), which fails every write
// (commit says how).
func (b *batcher) run(ops []*writeOp) (errs []error, err error) {
	errs = make([]error, len(ops))
	ctx := context.Background()
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return errs, fmt.Errorf("begin: %w", mapErr(err))
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	if len(ops) == 1 {
		if errs[0] = ops[0].run(context.WithoutCancel(ops[0].ctx), tx); errs[0] != nil {
			return errs, ignoreDone(tx.Rollback())
		}
	} else {
		for i, op := range ops {
			if errs[i], err = b.inSavepoint(tx, op); err != nil {
				return errs, err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return errs, fmt.Errorf("commit: %w", mapErr(err))
	}
	return errs, nil
}

// inSavepoint runs op inside a savepoint of tx, rolling back to it when op
// fails. opErr is op's failure; err a failure of the savepoint itself,
// after which the transaction cannot go on.
func (b *batcher) inSavepoint(tx *sql.Tx, op *writeOp) (opErr, err error) {
	ctx := context.Background()
	if _, err := tx.StmtContext(ctx, b.sp.savepoint).ExecContext(ctx); err != nil {
		return nil, fmt.Errorf("savepoint: %w", mapErr(err))
	}
	if opErr = op.run(context.WithoutCancel(op.ctx), tx); opErr != nil {
		if _, err := tx.StmtContext(ctx, b.sp.rollbackTo).ExecContext(ctx); err != nil {
			return opErr, fmt.Errorf("rollback to savepoint: %w", mapErr(err))
		}
	}
	if _, err := tx.StmtContext(ctx, b.sp.release).ExecContext(ctx); err != nil {
		return opErr, fmt.Errorf("release savepoint: %w", mapErr(err))
	}
	return opErr, nil
}

// savepointStmts are a write's savepoint statements, prepared once on the
// write connection (writeStmts) rather than parsed for every write.
type savepointStmts struct {
	savepoint, rollbackTo, release *sql.Stmt
}

// close stops the batcher once the batch being committed is done; writes
// queued after are refused.
func (b *batcher) close() {
	b.closeOnce.Do(func() { close(b.quit) })
	<-b.stopped
}
