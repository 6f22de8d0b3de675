package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"facturad/tenant"
)

// ListStore is what the listing suite needs: the document store and its
// listing.
type ListStore interface {
	DocumentStore
	tenant.DocumentLister
}

// RunDocumentList checks every behaviour of tenant.DocumentLister as
// subtests. open must return a fresh, empty, migrated store for each call
// and arrange its cleanup with t.Cleanup.
func RunDocumentList(t *testing.T, open func(t *testing.T) ListStore) {
	contract[ListStore]{
		{"ok/newest first by issue time then id", testListOrder},
		{"ok/filters alone and together", testListFilters},
		{"ok/pages walk every document once", testListPages},
		{"ok/periods at the edges of the calendar", testListPeriodEdges},
		{"ok/rows carry no xml", testListNoXML},
		{"ok/another company's documents are never listed", testListIsolation},
		{"ok/a walk while documents are added has no duplicate and no gap", testListConcurrentWalk},
		{"error/invalid query", testListInvalid},
	}.run(t, open)
}

// listBase is the instant the listing fixtures are issued around.
var listBase = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// listDoc is one fixture document's varying fields.
type listDoc struct {
	branch   int // 0 or 1
	tipo     string
	estado   tenant.State
	receptor string
	minute   int       // the issue time, in minutes after listBase; -1: none
	at       time.Time // when set, the issue time instead of minute
}

// seedList reserves the documents of specs in the fixture's branches and
// returns them as stored.
func seedList(t *testing.T, s ListStore, f docFixture, prefix string, specs []listDoc) []tenant.Document {
	t.Helper()
	ctx := context.Background()
	out := make([]tenant.Document, 0, len(specs))
	for i, sp := range specs {
		b := f.Branch
		if sp.branch == 1 {
			b = f.Branch2
		}
		d := minimalDocument(b, fmt.Sprintf("%s-%d", prefix, i), sp.tipo, "00001")
		d.Place(sp.estado)
		d.EmisorTipo, d.EmisorNumero = "02", f.Company.NumeroIdentificacion
		if sp.receptor != "" {
			d.ReceptorTipo, d.ReceptorNumero = "01", sp.receptor
		}
		if sp.tipo == "08" {
			// A purchase invoice: the seller issues it to the company.
			d.EmisorTipo, d.EmisorNumero, d.ReceptorTipo, d.ReceptorNumero = d.ReceptorTipo, d.ReceptorNumero, d.EmisorTipo, d.EmisorNumero
		}
		switch {
		case !sp.at.IsZero():
			d.FechaEmision = sp.at
		case sp.minute >= 0:
			d.FechaEmision = listBase.Add(time.Duration(sp.minute) * time.Minute)
		}
		if err := s.ReserveDocument(ctx, &d); err != nil {
			t.Fatalf("ReserveDocument %d: %v", i, err)
		}
		out = append(out, d)
	}
	return out
}

// listed is a row of a listing: an issued or a received document. Its
// list key is its place in the listing and holds its id.
type listed interface {
	ListKey() tenant.ListKey
}

// listOrder sorts rows as a listing returns them.
func listOrder[T listed](rs []T) []T {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b T) int {
		ka, kb := a.ListKey(), b.ListKey()
		if c := kb.At.Compare(ka.At); c != 0 {
			return c
		}
		return int(kb.ID - ka.ID)
	})
	return rs
}

func ids[T listed](rs []T) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ListKey().ID
	}
	return out
}

// listing is a store's listing call under test (ListDocuments,
// ListReceived), with the checks both listings share.
type listing[T listed] struct {
	name string // the call, in messages
	list func(ctx context.Context, q tenant.ListQuery) ([]T, error)
	noun string // what a row is, in messages
}

// documentListing is the listing of s's issued documents.
func documentListing(s ListStore) listing[tenant.Document] {
	return listing[tenant.Document]{"ListDocuments", s.ListDocuments, "document"}
}

// walk lists every page of q, limit rows at a time, calling between (when
// not nil) after each page, and returns the rows.
func (l listing[T]) walk(t *testing.T, q tenant.ListQuery, limit int, between func()) []T {
	t.Helper()
	var all []T
	q.Limit = limit
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("the walk does not end")
		}
		page, err := l.list(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		if len(page) > limit {
			t.Fatalf("page of %d rows, limit %d", len(page), limit)
		}
		all = append(all, page...)
		if len(page) < limit {
			return all
		}
		k := page[len(page)-1].ListKey()
		q.After = &k
		if between != nil {
			between()
		}
	}
}

// checkOrder lists the company's rows in one page and checks that they
// come as listOrder sorts all.
func (l listing[T]) checkOrder(t *testing.T, companyID int64, all []T) []T {
	t.Helper()
	got, err := l.list(context.Background(), tenant.ListQuery{CompanyID: companyID, Limit: tenant.MaxListLimit})
	if err != nil {
		t.Fatalf("%s: %v", l.name, err)
	}
	if want := ids(listOrder(all)); !slices.Equal(ids(got), want) {
		t.Fatalf("order:\n got %v\nwant %v", ids(got), want)
	}
	return got
}

// checkWalk walks q by pages of each limit and checks that the walk meets
// exactly want, in the listing's order.
func (l listing[T]) checkWalk(t *testing.T, q tenant.ListQuery, want []T, limits ...int) {
	t.Helper()
	for _, limit := range limits {
		if got := l.walk(t, q, limit, nil); !slices.Equal(ids(got), ids(listOrder(want))) {
			t.Errorf("limit %d:\n got %v\nwant %v", limit, ids(got), ids(listOrder(want)))
		}
	}
}

// listFilter is a query of the filter checks and the rows it keeps.
type listFilter[T listed] struct {
	name string
	q    tenant.ListQuery
	keep func(T) bool
}

// checkFilters walks the company's listing with each filter, by pages of
// 1, 3 and the most: each walk meets the rows of all that the filter
// keeps, in the listing's order. Every filter but the one named none must
// keep some row, or it would check nothing.
func (l listing[T]) checkFilters(t *testing.T, companyID int64, all []T, filters []listFilter[T], none string) {
	t.Helper()
	for _, tt := range filters {
		t.Run(tt.name, func(t *testing.T) {
			var want []T
			for _, r := range all {
				if tt.keep(r) {
					want = append(want, r)
				}
			}
			if len(want) == 0 && tt.name != none {
				t.Fatalf("the fixture has no %s for this filter", l.noun)
			}
			q := tt.q
			q.CompanyID = companyID
			l.checkWalk(t, q, want, 1, 3, tenant.MaxListLimit)
		})
	}
}

// checkPages walks the company's listing by pages of several sizes, those
// around the number of rows included: each walk meets every row once.
func (l listing[T]) checkPages(t *testing.T, companyID int64, all []T) {
	t.Helper()
	l.checkWalk(t, tenant.ListQuery{CompanyID: companyID}, all, 1, 2, 7, 59, 60, 61)
}

// checkConcurrentWalk walks the company's listing page by page while three
// writers add rows (add(w, i) adds writer w's i-th), waiting for a write
// between pages, so that every page is read after some row was added:
// every row of before, there when the walk began, is met exactly once,
// nothing is met twice, and the walk keeps the listing's order.
func (l listing[T]) checkConcurrentWalk(t *testing.T, companyID int64, before []T, add func(w, i int) error) {
	t.Helper()
	stop := make(chan struct{})
	var added atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := add(w, i); err != nil {
					errs <- err
					return
				}
				added.Add(1)
			}
		})
	}
	// Let the writers start before the walk.
	for added.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	got := l.walk(t, tenant.ListQuery{CompanyID: companyID}, 7, func() {
		n := added.Load()
		for deadline := time.Now().Add(5 * time.Second); added.Load() == n && time.Now().Before(deadline); {
			time.Sleep(100 * time.Microsecond)
		}
	})
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("adding during the walk: %v", err)
	}
	seen := map[int64]int{}
	for _, id := range ids(got) {
		seen[id]++
		if seen[id] == 2 {
			t.Errorf("%s %d listed twice", l.noun, id)
		}
	}
	for _, id := range ids(before) {
		if seen[id] == 0 {
			t.Errorf("%s %d, there before the walk, was not listed", l.noun, id)
		}
	}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1].ListKey(), got[i].ListKey()
		if b.At.After(a.At) || (b.At.Equal(a.At) && b.ID >= a.ID) {
			t.Errorf("rows %d and %d out of order: %+v then %+v", i-1, i, a, b)
		}
	}
	if added.Load() < 25 {
		t.Errorf("only %d rows were added during the walk", added.Load())
	}
}

// checkIsolation walks company a's listing, which must hold exactly
// wantA (its rows, of which companyOf tells the company), and that of
// company empty, which has no rows and lists none under any of queries.
func (l listing[T]) checkIsolation(t *testing.T, a int64, wantA []T, companyOf func(T) int64, empty int64, queries []tenant.ListQuery) {
	t.Helper()
	got := l.walk(t, tenant.ListQuery{CompanyID: a}, 7, nil)
	if !slices.Equal(ids(got), ids(listOrder(wantA))) {
		t.Errorf("company A lists %v, want %v", ids(got), ids(listOrder(wantA)))
	}
	for _, r := range got {
		if c := companyOf(r); c != a {
			t.Errorf("company A's listing holds %s %d of company %d", l.noun, r.ListKey().ID, c)
		}
	}
	// A company without rows lists none, whatever the filter.
	for _, q := range queries {
		q.CompanyID = empty
		if got := l.walk(t, q, 5, nil); len(got) != 0 {
			t.Errorf("an empty company lists %v for %+v", ids(got), q)
		}
	}
}

// checkInvalid checks that a query without a company, a limit out of
// range or a cursor without an id is refused.
func (l listing[T]) checkInvalid(t *testing.T, companyID int64) {
	t.Helper()
	for _, q := range []tenant.ListQuery{
		{CompanyID: 0, Limit: 10},
		{CompanyID: companyID, Limit: 0},
		{CompanyID: companyID, Limit: tenant.MaxListLimit + 2},
		{CompanyID: companyID, Limit: 10, After: &tenant.ListKey{At: listBase, ID: 0}},
	} {
		if got, err := l.list(context.Background(), q); err == nil {
			t.Errorf("%s(%+v) = %d rows, want an error", l.name, q, len(got))
		}
	}
}

// listSpecs is a company's documents: two branches, every state, several
// types and receptors, issue times with ties, and documents without an
// issue time.
func listSpecs() []listDoc {
	tipos := []string{"01", "04", "03", "08", "01", "02"}
	estados := []tenant.State{tenant.StateAccepted, tenant.StateAccepted, tenant.StateRejected, tenant.StateSent, tenant.StateNotSentYet, tenant.StatePending, tenant.StateError}
	receptores := []string{"114480790", "3101123456", "", "114480790", "205550666"}
	var specs []listDoc
	for i := range 60 {
		minute := (i * 7) % 23 // many documents share a minute
		if i%17 == 5 {
			minute = -1
		}
		specs = append(specs, listDoc{
			branch:   i % 2,
			tipo:     tipos[i%len(tipos)],
			estado:   estados[i%len(estados)],
			receptor: receptores[i%len(receptores)],
			minute:   minute,
		})
	}
	return specs
}

func testListOrder(t *testing.T, s ListStore) {
	f := newDocFixture(t, s)
	docs := seedList(t, s, f, "order", listSpecs())
	got := documentListing(s).checkOrder(t, f.Company.ID, docs)
	// Documents without an issue time take the time they were numbered.
	for _, d := range got {
		if d.FechaEmision.IsZero() && !d.ListKey().At.Equal(d.CreatedAt) {
			t.Errorf("document %d without an issue time is listed at %v, not its creation %v", d.ID, d.ListKey().At, d.CreatedAt)
		}
	}
}

func testListFilters(t *testing.T, s ListStore) {
	f := newDocFixture(t, s)
	docs := seedList(t, s, f, "filter", listSpecs())
	counterparty := func(d tenant.Document) string {
		if d.Tipo == "08" {
			return d.EmisorNumero
		}
		return d.ReceptorNumero
	}
	documentListing(s).checkFilters(t, f.Company.ID, docs, []listFilter[tenant.Document]{
		{"estado", tenant.ListQuery{Estado: tenant.StateRejected}, func(d tenant.Document) bool { return d.Estado == tenant.StateRejected }},
		{"tipo", tenant.ListQuery{Tipo: "01"}, func(d tenant.Document) bool { return d.Tipo == "01" }},
		{"receptor, the seller of a purchase invoice too", tenant.ListQuery{Receptor: "114480790"}, func(d tenant.Document) bool { return counterparty(d) == "114480790" }},
		{"id externo", tenant.ListQuery{IDExterno: "filter-7"}, func(d tenant.Document) bool { return d.IDExterno == "filter-7" }},
		{"desde", tenant.ListQuery{Desde: listBase.Add(10 * time.Minute)}, func(d tenant.Document) bool {
			return !d.ListKey().At.Before(listBase.Add(10 * time.Minute))
		}},
		{"hasta, included", tenant.ListQuery{Hasta: listBase.Add(7 * time.Minute)}, func(d tenant.Document) bool {
			return !d.ListKey().At.After(listBase.Add(7 * time.Minute))
		}},
		{"desde hasta estado tipo receptor", tenant.ListQuery{
			Desde: listBase.Add(2 * time.Minute), Hasta: listBase.Add(20 * time.Minute),
			Estado: tenant.StateAccepted, Tipo: "01", Receptor: "114480790",
		}, func(d tenant.Document) bool {
			at := d.ListKey().At
			return !at.Before(listBase.Add(2*time.Minute)) && !at.After(listBase.Add(20*time.Minute)) &&
				d.Estado == tenant.StateAccepted && d.Tipo == "01" && counterparty(d) == "114480790"
		}},
		{"nothing matches", tenant.ListQuery{Estado: tenant.StateAccepted, Tipo: "09"}, func(tenant.Document) bool { return false }},
	}, "nothing matches")
}

func testListPages(t *testing.T, s ListStore) {
	f := newDocFixture(t, s)
	docs := seedList(t, s, f, "pages", listSpecs())
	documentListing(s).checkPages(t, f.Company.ID, docs)
}

func testListNoXML(t *testing.T, s ListStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := fullDocument(f.Branch, "with-xml", 1)
	if err := s.ReserveDocument(ctx, &d); err != nil {
		t.Fatalf("ReserveDocument: %v", err)
	}
	got, err := s.ListDocuments(ctx, tenant.ListQuery{CompanyID: f.Company.ID, Limit: 10})
	if err != nil {
		t.Fatalf("ListDocuments: %v", err)
	}
	if len(got) != 1 {
		t.Fatalf("%d rows, want 1", len(got))
	}
	g := got[0]
	if g.SignedXML != nil || g.ResponseXML != nil || g.Request != nil {
		t.Errorf("a listed row carries XML or the request: %d, %d, %d bytes", len(g.SignedXML), len(g.ResponseXML), len(g.Request))
	}
	if g.Clave != d.Clave || g.Consecutivo != d.Consecutivo || g.Estado != d.Estado || g.IDExterno != d.IDExterno ||
		g.MensajeHacienda != d.MensajeHacienda || !slices.Equal(g.DetalleMensaje, d.DetalleMensaje) ||
		!g.FechaEmision.Equal(d.FechaEmision) || g.ReceptorNumero != d.ReceptorNumero {
		t.Errorf("listed row differs from the stored document:\n got %+v\nwant %+v", g, d)
	}
}

func testListIsolation(t *testing.T, s ListStore) {
	l := documentListing(s)
	a, b := newDocFixture(t, s), newDocFixture(t, s)
	docsA := seedList(t, s, a, "a", listSpecs()[:20])
	seedList(t, s, b, "b", listSpecs()[20:45])
	c := newDocFixture(t, s)
	l.checkIsolation(t, a.Company.ID, docsA, func(d tenant.Document) int64 { return d.CompanyID }, c.Company.ID,
		[]tenant.ListQuery{{}, {Estado: tenant.StateAccepted}, {Receptor: "114480790"}, {IDExterno: "a-1"}})
}

// testListConcurrentWalk walks the listing page by page while writers add
// documents, some issued before the walk's position (a contingency
// document carries an old date), some after: every document that existed
// when the walk began is met exactly once, and nothing is met twice.
func testListConcurrentWalk(t *testing.T, s ListStore) {
	f := newDocFixture(t, s)
	var specs []listDoc
	for i := range 150 {
		specs = append(specs, listDoc{branch: i % 2, tipo: "01", estado: tenant.StateAccepted, minute: 1000 + i%40})
	}
	before := seedList(t, s, f, "before", specs)
	documentListing(s).checkConcurrentWalk(t, f.Company.ID, before, func(w, i int) error {
		d := minimalDocument(f.Branch, fmt.Sprintf("during-%d-%d", w, i), "01", fmt.Sprintf("%05d", 2+w))
		// Older, newer and the very same minutes as the seeded ones.
		d.FechaEmision = listBase.Add(time.Duration(990+(i*13)%60) * time.Minute)
		if err := s.ReserveDocument(context.Background(), &d); err != nil {
			return fmt.Errorf("ReserveDocument: %w", err)
		}
		return nil
	})
}

func testListInvalid(t *testing.T, s ListStore) {
	f := newDocFixture(t, s)
	documentListing(s).checkInvalid(t, f.Company.ID)
}
