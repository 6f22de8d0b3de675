package delivery

import (
	"testing"
	"time"
)

// TestBackoff: the wait doubles from base at each attempt up to maxWait,
// and the jitter takes at most half of it off, never adding.
func TestBackoff(t *testing.T) {
	const base, maxWait = 5 * time.Second, 6 * time.Hour
	for _, tt := range []struct {
		n    int
		full time.Duration
	}{
		{0, 5 * time.Second},
		{1, 10 * time.Second},
		{3, 40 * time.Second},
		{12, 5 * time.Second << 12}, // 5.7 h
		{13, maxWait},
		{40, maxWait}, // no overflow past the cap
	} {
		low, seen := tt.full, map[time.Duration]bool{}
		for range 200 {
			w := backoff(base, maxWait, tt.n)
			if w > tt.full || w < tt.full/2 {
				t.Fatalf("backoff(n=%d) = %v, want within [%v, %v]", tt.n, w, tt.full/2, tt.full)
			}
			low = min(low, w)
			seen[w] = true
		}
		if len(seen) < 2 || low == tt.full {
			t.Errorf("backoff(n=%d): %d distinct waits, lowest %v: no jitter", tt.n, len(seen), low)
		}
	}
}
