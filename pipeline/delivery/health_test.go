package delivery

import (
	"testing"
	"time"
)

// endpointHealth counts each webhook once, by its latest attempt, and
// forgets those not attempted within the window.
func TestEndpointHealthCounts(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	h := newEndpointHealth(30*time.Minute, func() time.Time { return now })
	h.record(1, true)
	h.record(1, false) // recovered: its latest attempt counts
	h.record(2, true)
	h.record(2, true)
	h.record(3, false)
	if healthy, failing := h.counts(); healthy != 2 || failing != 1 {
		t.Fatalf("healthy %d failing %d, want 2 and 1", healthy, failing)
	}
	now = now.Add(20 * time.Minute)
	h.record(3, true)
	now = now.Add(15 * time.Minute) // 1 and 2 last attempted 35 minutes ago
	if healthy, failing := h.counts(); healthy != 0 || failing != 1 {
		t.Fatalf("healthy %d failing %d, want 0 and 1", healthy, failing)
	}
	if len(h.seen) != 1 {
		t.Fatalf("%d webhooks remembered, want 1", len(h.seen))
	}
}
