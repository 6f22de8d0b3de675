package gateway

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/tenant"
)

// TestListingPeriodEdges: desde and hasta at the ends of the calendar, on
// both listings and both stores, answer the documents in the period (the
// same on both stores: hasta=9999-12-31 ends in year 10000 in UTC, which
// the embedded store once compared as text and answered nothing); a year
// outside 0001–9999, or a day the calendar lacks, is a 400 naming the
// parameter.
func TestListingPeriodEdges(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testListingPeriodEdges(t, newListWorld(t, k.open(t))) })
	}
}

func testListingPeriodEdges(t *testing.T, w *listWorld) {
	a := w.createCompany(t, w.admin, "3101123456", "Calendario S.A.")
	// Issued two a minute from 2028-02-28T23:58 (seed puts x-i at minute
	// i/2): x-0..x-3 on the 28th, x-4..x-7 on the leap day 2028-02-29.
	start := time.Date(2028, 2, 28, 23, 58, 0, 0, hacienda.CostaRica)
	w.seed(t, a.id, a.branchID, "d", 8, start)
	w.seedReceived(t, a.id, a.branchID, "3101123456", "r", 8, start)
	all := inListOrder(seededRows("d", 8, start, 0))
	allReceived := inListOrder(seededRows("r", 8, start, 0))
	// on is the rows of prefix issued on day d of February 2028, Costa
	// Rica time, in the listing's order.
	on := func(prefix string, d int) []string {
		var rows []seeded
		for _, r := range seededRows(prefix, 8, start, 0) {
			if r.at.In(hacienda.CostaRica).Day() == d {
				rows = append(rows, r)
			}
		}
		return inListOrder(rows)
	}
	if len(on("d", 28)) == 0 || len(on("d", 29)) == 0 {
		t.Fatal("the fixture does not straddle the leap day")
	}

	tests := []struct {
		name, query string
		docs, recv  []string
	}{
		{"hasta 9999-12-31", "hasta=9999-12-31", all, allReceived},
		{"hasta 9999-12-31T23:59:59", "hasta=9999-12-31T23:59:59", all, allReceived},
		{"hasta 9999-12-31 at UTC-12", "hasta=" + url.QueryEscape("9999-12-31T23:59:59-12:00"), all, allReceived},
		{"desde 0001-01-01, the contract's not set", "desde=0001-01-01", all, allReceived},
		{"desde 0001-01-02 hasta 9999-12-31", "desde=0001-01-02&hasta=9999-12-31", all, allReceived},
		{"desde 9999-12-31", "desde=9999-12-31", nil, nil},
		{"desde 9999-12-31 hasta 9999-12-31", "desde=9999-12-31&hasta=9999-12-31", nil, nil},
		{"hasta 0001-01-02", "hasta=0001-01-02", nil, nil},
		{"the day before the leap day", "desde=2028-02-28&hasta=2028-02-28", on("d", 28), on("r", 28)},
		{"the leap day", "desde=2028-02-29&hasta=2028-02-29", on("d", 29), on("r", 29)},
		{"the leap day from its first instant", "desde=2028-02-29T00:00:00&hasta=9999-12-31", on("d", 29), on("r", 29)},
		{"the day after the leap day", "desde=2028-03-01&hasta=2028-03-01", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, limit := range []string{"1", "3", "500"} {
				got := w.walkAll(t, a.user, tt.query+"&limit="+limit)
				if !slices.Equal(got, tt.docs) {
					t.Errorf("documents, limit %s:\n got %v\nwant %v", limit, got, tt.docs)
				}
				got = w.walkReceived(t, a.user, tt.query+"&limit="+limit, nil)
				if !slices.Equal(got, tt.recv) {
					t.Errorf("received, limit %s:\n got %v\nwant %v", limit, got, tt.recv)
				}
			}
		})
	}

	t.Run("error/years and days outside the calendar name their parameter", func(t *testing.T) {
		for _, tt := range []struct{ query, field string }{
			{"desde=0000-12-31", "desde"},
			{"hasta=0000-12-31T23:59:59", "hasta"},
			{"hasta=10000-01-01", "hasta"},
			{"desde=10000-01-01T00:00:00", "desde"},
			{"hasta=2027-02-29", "hasta"},
			{"desde=2028-02-30", "desde"},
			{"desde=2028-03-01&hasta=2028-02-29", "hasta"},
			{"desde=9999-12-31&hasta=0001-01-02", "hasta"},
		} {
			for _, path := range []string{"/api/documents/v4", "/api/received/v4"} {
				errs := requireA7(t, w.do(t, "GET", path+"?"+tt.query, &a.user, "", nil), 400)
				requireField(t, errs, tt.field)
			}
		}
	})
}

// TestParseQueryTime: the years a listing's date-times may name.
func TestParseQueryTime(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "9999-12-31", want: time.Date(9999, 12, 31, 0, 0, 0, 0, hacienda.CostaRica)},
		{in: "0001-01-02", want: time.Date(1, 1, 2, 0, 0, 0, 0, hacienda.CostaRica)},
		{in: "0001-01-01"}, // the contract's "not set"
		{in: "2028-02-29T12:00:00", want: time.Date(2028, 2, 29, 12, 0, 0, 0, hacienda.CostaRica)},
		{in: "0000-01-01", bad: true},
		{in: "0000-12-31T23:59:59-06:00", bad: true},
		{in: "10000-01-01", bad: true},
		{in: "2027-02-29", bad: true},
		{in: "ayer", bad: true},
	} {
		got, problem := parseQueryTime(tt.in)
		if (problem != nil) != tt.bad || !got.Equal(tt.want) {
			t.Errorf("parseQueryTime(%q) = %v, %v; want %v, bad %v", tt.in, got, problem, tt.want, tt.bad)
		}
	}
	var f tenant.ListQuery
	r := newQueryReader(url.Values{"hasta": {"9999-12-31"}})
	r.period(&f)
	if err := r.err(); err != nil || f.Hasta.In(hacienda.CostaRica).Year() != 9999 ||
		!f.Hasta.Equal(time.Date(9999, 12, 31, 23, 59, 59, 999999000, hacienda.CostaRica)) {
		t.Errorf("hasta=9999-12-31 reads as %v, %v; want the day's last microsecond, in 9999", f.Hasta, err)
	}
}
