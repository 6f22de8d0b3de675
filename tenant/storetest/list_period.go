package storetest

import (
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/tenant"
)

// The period edges: a listing's desde and hasta at the ends of the
// calendar the stores keep (tenant.FirstListTime, tenant.LastListTime) and
// beyond them, around a leap day, and the wrong way round. Each case
// lists exactly the rows whose issue time is in the period, both ends
// included, compared as instants; a bound beyond what a store keeps
// bounds nothing on its side, and nothing at all on the other.

// cr is a Costa Rica local time, as the gateway reads desde and hasta.
func cr(y int, m time.Month, d, h, mi, s, us int) time.Time {
	return time.Date(y, m, d, h, mi, s, us*1000, hacienda.CostaRica)
}

// endOfDay is the last instant of the Costa Rica day y-m-d, as the gateway
// reads a hasta given as a date alone.
func endOfDay(y int, m time.Month, d int) time.Time { return cr(y, m, d, 23, 59, 59, 999999) }

// periodEdgeTimes are the issue times of the period fixtures: the first
// and last instants a store keeps, the two days around a leap day to the
// microsecond, and an ordinary day.
func periodEdgeTimes() []time.Time {
	return []time.Time{
		tenant.FirstListTime.Add(time.Microsecond), // the first instant itself is the zero time: none
		cr(1, 1, 1, 0, 0, 0, 0),                    // 06:00 UTC
		cr(2028, 2, 28, 23, 59, 59, 999999),
		cr(2028, 2, 29, 0, 0, 0, 0),
		cr(2028, 2, 29, 12, 0, 0, 0),
		endOfDay(2028, 2, 29),
		cr(2028, 3, 1, 0, 0, 0, 0),
		listBase,
		cr(9999, 12, 31, 0, 0, 0, 0),
		tenant.LastListTime, // 17:59:59.999999 in Costa Rica
	}
}

// periodCase is one period and its name.
type periodCase struct {
	name         string
	desde, hasta time.Time
}

func periodCases() []periodCase {
	before := time.Date(0, 12, 31, 10, 0, 0, 0, time.UTC) // 0001-01-01T00:00 at UTC+14
	return []periodCase{
		{"hasta 9999-12-31 the whole day", time.Time{}, endOfDay(9999, 12, 31)},
		{"hasta the last instant kept", time.Time{}, tenant.LastListTime},
		{"hasta just before the last instant kept", time.Time{}, tenant.LastListTime.Add(-time.Microsecond)},
		{"hasta past year 9999 in UTC", time.Time{}, time.Date(9999, 12, 31, 23, 59, 59, 0, time.FixedZone("", -12*3600))},
		{"desde 0001-01-01 in Costa Rica", cr(1, 1, 1, 0, 0, 0, 0), time.Time{}},
		{"desde the first instant an issue time is kept at", tenant.FirstListTime.Add(time.Microsecond), time.Time{}},
		{"desde just after it", tenant.FirstListTime.Add(2 * time.Microsecond), time.Time{}},
		{"desde before year 1 in UTC", before, time.Time{}},
		{"desde 0001-01-01 hasta 9999-12-31", cr(1, 1, 1, 0, 0, 0, 0), endOfDay(9999, 12, 31)},
		{"desde before year 1 hasta past year 9999", before, endOfDay(9999, 12, 31)},
		{"desde far in the past hasta an ordinary day", before, endOfDay(2026, 3, 1)},
		{"the day 9999-12-31", cr(9999, 12, 31, 0, 0, 0, 0), endOfDay(9999, 12, 31)},
		{"desde after the last instant kept", cr(9999, 12, 31, 23, 0, 0, 0), time.Time{}},
		{"desde and hasta after the last instant kept", cr(9999, 12, 31, 23, 0, 0, 0), endOfDay(9999, 12, 31)},
		{"hasta before the first instant kept", time.Time{}, before},
		{"desde after hasta", cr(2028, 3, 1, 0, 0, 0, 0), endOfDay(2028, 2, 28)},
		{"desde after hasta at the edges", cr(9999, 12, 31, 0, 0, 0, 0), cr(1, 1, 1, 0, 0, 0, 0)},
		{"the leap day 2028-02-29", cr(2028, 2, 29, 0, 0, 0, 0), endOfDay(2028, 2, 29)},
		{"the day after the leap day", cr(2028, 3, 1, 0, 0, 0, 0), endOfDay(2028, 3, 1)},
		{"the day before the leap day", cr(2028, 2, 28, 0, 0, 0, 0), endOfDay(2028, 2, 28)},
		{"a leap day's last microsecond", endOfDay(2028, 2, 29), endOfDay(2028, 2, 29)},
	}
}

// inPeriod tells whether at is in the period (zero: no bound), both ends
// included, compared as instants.
func inPeriod(at, desde, hasta time.Time) bool {
	return (desde.IsZero() || !at.Before(desde)) && (hasta.IsZero() || !at.After(hasta))
}

// checkPeriodEdges walks the company's listing with each periodCases
// period, by pages of 1, 3 and the most, and checks that each walk meets
// the rows of all in the period, in the listing's order. The cases must
// include, between them, a period that keeps every row, one that keeps
// none and one that keeps some, or they would check little.
func (l listing[T]) checkPeriodEdges(t *testing.T, companyID int64, all []T) {
	t.Helper()
	var every, none, some bool
	for _, c := range periodCases() {
		var want []T
		for _, r := range all {
			if inPeriod(r.ListKey().At, c.desde, c.hasta) {
				want = append(want, r)
			}
		}
		every = every || len(want) == len(all)
		none = none || len(want) == 0
		some = some || (len(want) > 0 && len(want) < len(all))
		t.Run(c.name, func(t *testing.T) {
			l.checkWalk(t, tenant.ListQuery{CompanyID: companyID, Desde: c.desde, Hasta: c.hasta}, want, 1, 3, tenant.MaxListLimit)
		})
	}
	if !every || !none || !some {
		t.Errorf("the period cases keep every row: %v, none: %v, some: %v; want all three", every, none, some)
	}
}

func testListPeriodEdges(t *testing.T, s ListStore) {
	f := newDocFixture(t, s)
	var specs []listDoc
	for i, at := range periodEdgeTimes() {
		specs = append(specs, listDoc{branch: i % 2, tipo: "01", estado: tenant.StateAccepted, at: at})
	}
	specs = append(specs, listDoc{tipo: "04", estado: tenant.StatePending, minute: -1}) // listed when numbered
	docs := seedList(t, s, f, "edges", specs)
	for i, at := range periodEdgeTimes() {
		if got := docs[i].ListKey().At; !got.Equal(at) {
			t.Fatalf("document %d is listed at %v, want its issue time %v", i, got, at)
		}
	}
	documentListing(s).checkPeriodEdges(t, f.Company.ID, docs)
}

func testReceivedListPeriodEdges(t *testing.T, s ReceivedStore) {
	f := newDocFixture(t, s)
	var specs []receivedSpec
	for i, at := range periodEdgeTimes() {
		specs = append(specs, receivedSpec{branch: i % 2, tipo: "01", estado: tenant.StateAccepted, emisor: "3101123456", mensaje: "1", at: at})
	}
	specs = append(specs, receivedSpec{tipo: "01", estado: tenant.StatePending, emisor: "3101123456", mensaje: "1", minute: -1})
	rs := seedReceived(t, s, f, "edges", specs)
	receivedListing(s).checkPeriodEdges(t, f.Company.ID, rs)
}
