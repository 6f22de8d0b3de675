package tenant

import (
	"testing"
	"time"
)

// TestListQueryPeriod: the bounds both stores compare, clamped to the
// instants they keep.
func TestListQueryPeriod(t *testing.T) {
	cr := time.FixedZone("CR", -6*3600)
	day := time.Date(2028, 2, 29, 0, 0, 0, 0, cr)
	endOf9999 := time.Date(9999, 12, 31, 23, 59, 59, 999999000, cr) // 10000-01-01T05:59:59.999999Z
	before1 := time.Date(0, 12, 31, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name         string
		desde, hasta time.Time
		wantD, wantH time.Time
		empty        bool
	}{
		{name: "none"},
		{name: "an ordinary period, in UTC", desde: day, hasta: day.Add(time.Hour), wantD: day.UTC(), wantH: day.Add(time.Hour).UTC()},
		{name: "desde rounds up, hasta down, to the microsecond", desde: day.Add(1), hasta: day.Add(time.Microsecond + 999),
			wantD: day.Add(time.Microsecond).UTC(), wantH: day.Add(time.Microsecond).UTC()},
		{name: "hasta in year 10000 in UTC bounds nothing", desde: day, hasta: endOf9999, wantD: day.UTC()},
		{name: "hasta at the last instant bounds nothing", hasta: LastListTime},
		{name: "hasta before the last instant bounds", hasta: LastListTime.Add(-time.Microsecond), wantH: LastListTime.Add(-time.Microsecond)},
		{name: "desde before year 1 bounds nothing", desde: before1, hasta: day, wantH: day.UTC()},
		{name: "desde just after the zero time bounds", desde: FirstListTime.Add(time.Microsecond), wantD: FirstListTime.Add(time.Microsecond)},
		{name: "desde past the last instant: empty", desde: endOf9999.Add(-time.Hour), empty: true},
		{name: "hasta before year 1: empty", hasta: before1, empty: true},
		{name: "hasta within the zero time's microsecond: empty", hasta: FirstListTime.Add(500), empty: true},
		{name: "desde after hasta: empty", desde: day.Add(time.Hour), hasta: day, empty: true},
		{name: "desde after hasta by a rounding: empty", desde: day.Add(1), hasta: day.Add(999), empty: true},
		{name: "desde equal to hasta", desde: day, hasta: day, wantD: day.UTC(), wantH: day.UTC()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, h, empty := ListQuery{Desde: tt.desde, Hasta: tt.hasta}.Period()
			if empty != tt.empty || !d.Equal(tt.wantD) || !h.Equal(tt.wantH) {
				t.Errorf("Period() = %v, %v, %v; want %v, %v, %v", d, h, empty, tt.wantD, tt.wantH, tt.empty)
			}
			if !d.IsZero() && d.Location() != time.UTC || !h.IsZero() && h.Location() != time.UTC {
				t.Errorf("bounds not in UTC: %v, %v", d, h)
			}
		})
	}
}
