package storetest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"facturad/tenant"
)

// The listing benchmark: a store seeded in bulk (by each adapter's own SQL)
// with at least a million documents, and the pages a caller reads, timed:
// the first page, a page deep in the listing (reached through cursors, as a
// caller reaches it), and filtered pages. A page must cost about the same
// wherever it starts.

// ListBenchRows is how many documents the benchmark seeds:
// FACTURAD_LIST_BENCH_ROWS, default 1,000,000.
func ListBenchRows(tb testing.TB) int {
	if v := os.Getenv("FACTURAD_LIST_BENCH_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			tb.Fatalf("FACTURAD_LIST_BENCH_ROWS=%q: want a number of at least 1000", v)
		}
		return n
	}
	return 1_000_000
}

// ListBenchStart is the issue time of the first seeded document; document g
// (from 1) is issued at ListBenchStart + 30s·g + (7919·g mod 600)s, so
// issue times mostly grow with g, with ties and disorder among neighbours.
var ListBenchStart = time.Date(2025, 1, 1, 6, 0, 0, 0, time.UTC)

// ListBenchCompanies is how many companies the benchmark creates, each
// with ListBenchBranches branches. Document g belongs to company 0 when
// g mod 10 < 6 (60% of them: the company whose listing is measured), else
// to company 1 + (g div 10) mod 7; to its branch g mod 3. Its type is 01
// (70%), 04 (15%), 03 (10%) or 08 (5%) by t = (g + g div 10) mod 20 (t < 14,
// < 17, < 19, else); its state 01 (92%), 04 (4%), 02 (2%), 05 (1%) or 03
// (1%) by e = (g div 10) mod 100 (e < 92, < 96, < 98, < 99, else); its
// receptor one of 5,000 customers, 100000000 + (31·g mod 5000); its
// id_externo pedido-g.
const (
	ListBenchCompanies = 8
	ListBenchBranches  = 3
)

// NewListBenchFixture creates the benchmark's companies and branches and
// returns their ids: companies[i] and branches[i*ListBenchBranches+j].
func NewListBenchFixture(tb testing.TB, s tenant.Store) (companies, branches []int64) {
	tb.Helper()
	ctx := context.Background()
	for i := range ListBenchCompanies {
		id, err := s.NextCompanyID(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		c, b, u := company(id, fmt.Sprintf("Listado %d S.A.", i)), branch("001"), user(fmt.Sprintf("list-%d-001", id))
		if err := s.CreateCompany(ctx, &c, &b, &u); err != nil {
			tb.Fatalf("CreateCompany: %v", err)
		}
		companies = append(companies, id)
		branches = append(branches, b.ID)
		for j := 2; j <= ListBenchBranches; j++ {
			b2, u2 := branch(fmt.Sprintf("%03d", j)), user(fmt.Sprintf("list-%d-%03d", id, j))
			b2.CompanyID = id
			if err := s.CreateBranch(ctx, &b2, &u2); err != nil {
				tb.Fatalf("CreateBranch: %v", err)
			}
			branches = append(branches, b2.ID)
		}
	}
	return companies, branches
}

// BenchList times the listing's pages on a store seeded as described
// above, for the company with 60% of the documents.
func BenchList(b *testing.B, s ListStore, companyID int64, rows int) {
	benchListing(b, func(ctx context.Context, q tenant.ListQuery) ([]tenant.ListKey, error) {
		ds, err := s.ListDocuments(ctx, q)
		keys := make([]tenant.ListKey, len(ds))
		for i, d := range ds {
			keys[i] = d.ListKey()
		}
		return keys, err
	}, companyID, rows)
}

// BenchListReceived times the received documents' listing on a store
// seeded with received documents as described above (their types 01, 02,
// 03 and 09 in the shares of 01, 04, 03 and 08; the 5,000 customers are
// the suppliers, the counterparty of a received document), for the company
// with 60% of them.
func BenchListReceived(b *testing.B, s ReceivedStore, companyID int64, rows int) {
	benchListing(b, func(ctx context.Context, q tenant.ListQuery) ([]tenant.ListKey, error) {
		rs, err := s.ListReceived(ctx, q)
		keys := make([]tenant.ListKey, len(rs))
		for i, r := range rs {
			keys[i] = r.ListKey()
		}
		return keys, err
	}, companyID, rows)
}

// benchListing times the pages a caller reads through list.
func benchListing(b *testing.B, list func(context.Context, tenant.ListQuery) ([]tenant.ListKey, error), companyID int64, rows int) {
	ctx := context.Background()
	const page = 50
	// cursorAt walks q by pages of up to 500 until depth rows are behind
	// it (or the listing ends) and returns the place reached, as a
	// caller's cursor would hold it.
	cursorAt := func(q tenant.ListQuery, depth int) (*tenant.ListKey, int) {
		q.CompanyID = companyID
		seen := 0
		for seen < depth {
			q.Limit = min(tenant.MaxListLimit, depth-seen)
			ks, err := list(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			if len(ks) == 0 {
				break
			}
			seen += len(ks)
			k := ks[len(ks)-1]
			q.After = &k
		}
		return q.After, seen
	}
	big := rows * 6 / 10
	deep, deepN := cursorAt(tenant.ListQuery{}, big/2)
	last, lastN := cursorAt(tenant.ListQuery{}, big-page)
	rejected, rejectedN := cursorAt(tenant.ListQuery{Estado: tenant.StateRejected}, big*2/100/2)
	b.Logf("company %d: cursors after %d, %d (of ~%d) rows, and %d rejected", companyID, deepN, lastN, big, rejectedN)

	month := ListBenchStart.Add(time.Duration(rows/2) * 30 * time.Second)
	cases := []struct {
		name string
		q    tenant.ListQuery
	}{
		{"first page", tenant.ListQuery{}},
		{"deep page", tenant.ListQuery{After: deep}},
		{"last page", tenant.ListQuery{After: last}},
		{"estado 02 first page", tenant.ListQuery{Estado: tenant.StateRejected}},
		{"estado 02 deep page", tenant.ListQuery{Estado: tenant.StateRejected, After: rejected}},
		{"tipo 03 in a month", tenant.ListQuery{Tipo: "03", Desde: month, Hasta: month.AddDate(0, 1, 0)}},
		{"receptor", tenant.ListQuery{Receptor: "100000031"}},
		{"receptor deep page", tenant.ListQuery{Receptor: "100000031", After: deep}},
		{"id externo", tenant.ListQuery{IDExterno: "pedido-" + strconv.Itoa(rows/2/10*10)}},
	}
	for _, c := range cases {
		q := c.q
		q.CompanyID, q.Limit = companyID, page+1
		b.Run(c.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				ks, err := list(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				n = len(ks)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
			b.ReportMetric(float64(n), "rows/page")
		})
	}
}
