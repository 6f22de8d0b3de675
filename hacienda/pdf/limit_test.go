package pdf_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"facturad/hacienda/pdf"
)

func TestLimiterBounds(t *testing.T) {
	l := pdf.NewLimiter(3, 2)
	if l.Max() != 3 || l.PerCompany() != 2 {
		t.Fatalf("bounds %d, %d", l.Max(), l.PerCompany())
	}
	r1, err := l.TryRender(1)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l.TryRender(1)
	if err != nil {
		t.Fatal(err)
	}
	// The company's bound: 429, and the process still has a slot.
	_, err = l.TryRender(1)
	var company *pdf.CompanyBusyError
	if !errors.As(err, &company) || company.HTTPStatus() != 429 || company.RetryAfter() <= 0 {
		t.Fatalf("third render of one company: %v, want a 429 with Retry-After", err)
	}
	r3, err := l.TryRender(2)
	if err != nil {
		t.Fatalf("another company's render: %v", err)
	}
	// The process's bound: 503, shed, whatever the company.
	_, err = l.TryRender(3)
	var busy *pdf.BusyError
	if !errors.As(err, &busy) || busy.HTTPStatus() != 503 || busy.RetryAfter() <= 0 || !busy.Shed() {
		t.Fatalf("past the process's bound: %v, want a shed 503 with Retry-After", err)
	}
	if l.InUse() != 3 {
		t.Fatalf("in use %d, want 3", l.InUse())
	}
	r1()
	r1() // a second release frees nothing more
	if l.InUse() != 2 {
		t.Fatalf("in use %d after a release, want 2", l.InUse())
	}
	r4, err := l.TryRender(1)
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	for _, r := range []func(){r2, r3, r4} {
		r()
	}
	if l.InUse() != 0 {
		t.Fatalf("in use %d after every release", l.InUse())
	}
}

// TestLimiterWaitRender: background work waits for a process-wide slot
// (no company bound applies), takes it when one is freed, and gives up
// when its context ends.
func TestLimiterWaitRender(t *testing.T) {
	l := pdf.NewLimiter(1, 1)
	release, err := l.TryRender(7)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.WaitRender(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait with every slot held: %v, want the deadline", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := l.WaitRender(context.Background())
		if err == nil {
			defer r()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the wait ended (%v) while the slot was held", err)
	case <-time.After(30 * time.Millisecond):
	}
	release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not take the freed slot")
	}
	// While a background render holds the only slot, a download is shed.
	r, err := l.WaitRender(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r()
	var busy *pdf.BusyError
	if _, err := l.TryRender(8); !errors.As(err, &busy) {
		t.Fatalf("download while background work holds the slot: %v, want *BusyError", err)
	}
}

func TestNewLimiterDefaults(t *testing.T) {
	l := pdf.NewLimiter(0, -1)
	if l.Max() != pdf.DefaultMaxRenders || l.PerCompany() != pdf.DefaultMaxRendersPerCompany {
		t.Fatalf("bounds %d, %d", l.Max(), l.PerCompany())
	}
}
