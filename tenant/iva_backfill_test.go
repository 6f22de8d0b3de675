package tenant

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// backfillStore counts the breakdown writes of a summary's backfill and
// cancels the context after the cancelAfter-th (0: never).
type backfillStore struct {
	IVAStore
	cancel      context.CancelFunc
	cancelAfter int
	single      int
	batches     [][]IVABreakdownWrite
}

func (b *backfillStore) SaveIVABreakdown(ctx context.Context, _ bool, _ int64, _ []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.single++
	if b.single == b.cancelAfter {
		b.cancel()
	}
	return nil
}

// batchStore is a backfillStore that also writes in batches.
type batchStore struct{ *backfillStore }

func (b batchStore) SaveIVABreakdowns(ctx context.Context, ws []IVABreakdownWrite) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.batches = append(b.batches, ws)
	if len(b.batches) == b.cancelAfter {
		b.cancel()
	}
	return nil
}

func backlogOf(n int) []IVABreakdownWrite {
	out := make([]IVABreakdownWrite, n)
	for i := range out {
		out[i] = IVABreakdownWrite{ID: int64(i + 1), Breakdown: []byte(`{"v":1,"c":[]}`)}
	}
	return out
}

// TestIVABackfill: the breakdowns a summary computed are written in
// batches when the store can, the writes stop at the route's timeout
// rather than failing one by one, and whatever was not stored is logged
// once, with its count.
func TestIVABackfill(t *testing.T) {
	tests := []struct {
		name        string
		batch       bool
		n           int
		cancelAfter int
		wantSingle  int
		wantBatches []int
		wantLog     string // "" for no log line
	}{
		{"ok/batched", true, 1200, 0, 0, []int{500, 500, 200}, ""},
		{"ok/one by one", false, 30, 0, 30, nil, ""},
		{"error/batched, the deadline after the first batch", true, 1200, 1, 0, []int{500}, "not_stored=700"},
		{"error/one by one, the deadline after the 10th write", false, 10000, 10, 10, nil, "not_stored=9990"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			bs := &backfillStore{cancel: cancel, cancelAfter: tt.cancelAfter}
			var st IVAStore = bs
			if tt.batch {
				st = batchStore{bs}
			}
			var logs bytes.Buffer
			s := &Service{log: slog.New(slog.NewTextHandler(&logs, nil))}
			s.backfillIVA(ctx, st, 7, backlogOf(tt.n))
			var sizes []int
			for _, b := range bs.batches {
				sizes = append(sizes, len(b))
			}
			if bs.single != tt.wantSingle || !slices.Equal(sizes, tt.wantBatches) {
				t.Errorf("%d single writes, batches %v; want %d, %v", bs.single, sizes, tt.wantSingle, tt.wantBatches)
			}
			lines := strings.Count(logs.String(), "\n")
			switch {
			case tt.wantLog == "" && lines != 0:
				t.Errorf("logged %q", logs.String())
			case tt.wantLog != "" && (lines != 1 || !strings.Contains(logs.String(), tt.wantLog) || !strings.Contains(logs.String(), "company=7")):
				t.Errorf("logged %d lines %q; want one with %s", lines, logs.String(), tt.wantLog)
			}
		})
	}
}

// TestIVABackfillFailures: a store that refuses every write is logged
// once, with the first error.
func TestIVABackfillFailures(t *testing.T) {
	var logs bytes.Buffer
	s := &Service{log: slog.New(slog.NewTextHandler(&logs, nil))}
	s.backfillIVA(context.Background(), failingSaves{}, 1, backlogOf(50))
	if n := strings.Count(logs.String(), "\n"); n != 1 || !strings.Contains(logs.String(), "not_stored=50") ||
		!strings.Contains(logs.String(), "disk full") {
		t.Errorf("logged %d lines: %q", n, logs.String())
	}
}

type failingSaves struct{ IVAStore }

func (failingSaves) SaveIVABreakdown(context.Context, bool, int64, []byte) error {
	return errors.New("disk full")
}
