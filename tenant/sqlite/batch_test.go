package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"facturad/tenant"
)

// openBatchStore is a Store with a scratch table k(v UNIQUE) for the
// batcher's tests, and a hook recording each batch's size.
func openBatchStore(t *testing.T) (*Store, func() []int) {
	t.Helper()
	ctx := context.Background()
	s := openTempStore(t)
	if _, err := s.write.ExecContext(ctx, `CREATE TABLE k (v TEXT NOT NULL UNIQUE)`); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sizes []int
	s.batch.sizes = func(n int) { mu.Lock(); sizes = append(sizes, n); mu.Unlock() }
	return s, func() []int { mu.Lock(); defer mu.Unlock(); return slices.Clone(sizes) }
}

func insertK(v string) func(ctx context.Context, tx *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO k (v) VALUES (?)`, v)
		return mapErr(err)
	}
}

// hold occupies the batcher with a write that waits for release, so that
// the writes queued meanwhile make up the next batch together.
func hold(t *testing.T, b *batcher) (release func()) {
	t.Helper()
	started, gate := make(chan struct{}), make(chan struct{})
	go func() {
		_ = b.do(context.Background(), func(context.Context, *sql.Tx) error {
			close(started)
			<-gate
			return nil
		})
	}()
	<-started
	return func() { close(gate) }
}

// queued waits until n writes wait in the batcher's queue.
func queued(t *testing.T, b *batcher, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(b.ops) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", len(b.ops), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestGroupCommitIsolatesFailures(t *testing.T) {
	s, sizes := openBatchStore(t)
	release := hold(t, s.batch)
	values := []string{"a", "b", "a", "c"} // the second "a" breaks the unique rule
	errs := make([]error, len(values))
	var wg sync.WaitGroup
	for i, v := range values {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.batch.do(context.Background(), insertK(v)) }()
		queued(t, s.batch, i+1) // in this order, so that the first "a" comes first
	}
	release()
	wg.Wait()

	if got := sizes(); !slices.Equal(got, []int{1, 4}) {
		t.Errorf("batch sizes %v, want [1 4]: the four writes were not committed together", got)
	}
	for i, err := range errs {
		if want := i == 2; errors.Is(err, tenant.ErrConflict) != want || (err != nil) != want {
			t.Errorf("write %d (%s): %v, want conflict %v", i, values[i], err, want)
		}
	}
	var got []string
	rows, err := s.write.Query(`SELECT v FROM k ORDER BY v`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("stored %v, want %v: a failed write undid others, or was kept", got, want)
	}
}

func TestGroupCommitWriteGoneBeforeItsTurn(t *testing.T) {
	s, _ := openBatchStore(t)
	release := hold(t, s.batch)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.batch.do(ctx, insertK("gone")) }()
	queued(t, s.batch, 1)
	cancel()
	// The caller returns while the batcher is still busy with the held
	// write: it does not wait for its turn to be skipped.
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("write whose caller left: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a caller that left waited for its write's turn")
	}
	release()
	if err := s.batch.do(context.Background(), insertK("after")); err != nil {
		t.Fatal(err) // the batcher goes on past the skipped write
	}
	var n int
	if err := s.write.QueryRow(`SELECT count(*) FROM k`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d rows stored, want 1: the skipped write was made, or the next one was not", n)
	}
}

func TestGroupCommitClosed(t *testing.T) {
	s, _ := openBatchStore(t)
	release := hold(t, s.batch)
	done := make(chan error, 1)
	go func() { done <- s.batch.do(context.Background(), insertK("late")) }()
	queued(t, s.batch, 1)
	closed := make(chan struct{})
	go func() { s.batch.close(); close(closed) }()
	<-s.batch.quit
	release()
	<-closed
	if err := <-done; !errors.Is(err, errStoreClosed) {
		t.Fatalf("write queued at close: %v, want errStoreClosed", err)
	}
	if err := s.batch.do(context.Background(), insertK("after")); !errors.Is(err, errStoreClosed) {
		t.Fatalf("write after close: %v, want errStoreClosed", err)
	}
}

// TestGroupCommitWaitsForCompany: after a batch of several writes, a batch
// that finds fewer than the target queued waits for more; after a lone
// write it commits at once. The wait here is an hour, so that a batch that
// waited when it should not hangs the test and one that did not wait when
// it should commits alone.
func TestGroupCommitWaitsForCompany(t *testing.T) {
	s, _ := openBatchStore(t)
	b := newBatcherWith(s.write.DB, s.wstmts.sp, 3, time.Hour)
	var mu sync.Mutex
	var sizes []int
	b.sizes = func(n int) { mu.Lock(); sizes = append(sizes, n); mu.Unlock() }
	go b.loop()
	t.Cleanup(b.close)

	write := func(v string) chan error {
		done := make(chan error, 1)
		go func() { done <- b.do(context.Background(), insertK(v)) }()
		return done
	}
	wait := func(what string, done chan error) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s has not committed: its batch waits", what)
		}
	}

	release := hold(t, b) // a batch of one
	x := write("x")
	queued(t, b, 1)
	y := write("y")
	queued(t, b, 2)
	release()
	wait("x", x) // after a lone write: no wait, x and y commit together
	wait("y", y)

	z := write("z") // after a batch of two: waits for company
	select {
	case err := <-z:
		t.Fatalf("z committed alone (%v) after a batch of two", err)
	case <-time.After(50 * time.Millisecond):
	}
	w1, w2 := write("w1"), write("w2")
	wait("z", z)
	wait("w1", w1)
	wait("w2", w2)

	mu.Lock()
	defer mu.Unlock()
	if want := []int{1, 2, 3}; !slices.Equal(sizes, want) {
		t.Errorf("batch sizes %v, want %v", sizes, want)
	}
}
