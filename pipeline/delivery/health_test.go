package delivery

import (
	"testing"
	"time"
)

// endpointHealth counts each webhook once, by its latest attempt, and
// each company once, failing when one of its webhooks is; it forgets
// those not attempted within the window.
func TestEndpointHealthCounts(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	h := newEndpointHealth(30*time.Minute, func() time.Time { return now })
	h.record(1, 10, true)
	h.record(1, 10, false) // recovered: its latest attempt counts
	h.record(2, 20, true)
	h.record(2, 20, true)
	h.record(3, 30, false)
	// Company 40's three webhooks are dead: three failing webhooks, one
	// failing company.
	h.record(4, 40, true)
	h.record(5, 40, true)
	h.record(6, 40, true)
	if c := h.counts(); c != (healthCounts{healthy: 2, failing: 4, healthyCompanies: 2, failingCompanies: 2}) {
		t.Fatalf("counts %+v", c)
	}
	h.record(7, 30, true) // one failing webhook makes its company failing
	if c := h.counts(); c.healthyCompanies != 1 || c.failingCompanies != 3 {
		t.Fatalf("counts %+v, want 1 healthy company and 3 failing", c)
	}
	now = now.Add(20 * time.Minute)
	h.record(3, 30, true)
	now = now.Add(15 * time.Minute) // the others last attempted 35 minutes ago
	if c := h.counts(); c != (healthCounts{failing: 1, failingCompanies: 1}) {
		t.Fatalf("counts %+v, want one failing webhook of one company", c)
	}
	if len(h.seen) != 1 {
		t.Fatalf("%d webhooks remembered, want 1", len(h.seen))
	}
}
