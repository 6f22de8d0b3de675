package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"facturad/tenant"
)

// RunReceivedList checks the listing of received documents
// (tenant.ReceivedStore.ListReceived) as subtests: the documents' listing
// rules (RunDocumentList) over received rows, whose type is the supplier
// document's, whose counterparty is the supplier and whose state is the
// company's message's. open must return a fresh, empty, migrated store for
// each call and arrange its cleanup with t.Cleanup.
func RunReceivedList(t *testing.T, open func(t *testing.T) ReceivedStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s ReceivedStore)
	}{
		{"ok/newest first by issue time then id", testReceivedListOrder},
		{"ok/filters alone and together", testReceivedListFilters},
		{"ok/pages walk every received document once", testReceivedListPages},
		{"ok/rows carry no xml", testReceivedListNoXML},
		{"ok/another company's received documents are never listed", testReceivedListIsolation},
		{"ok/a walk while received documents are added has no duplicate and no gap", testReceivedListConcurrentWalk},
		{"error/invalid query", testReceivedListInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, open(t))
		})
	}
}

// receivedSpec is one fixture received document's varying fields.
type receivedSpec struct {
	branch  int    // 0 or 1
	tipo    string // the supplier document's type
	estado  tenant.State
	emisor  string // the supplier
	mensaje string // 1, 2, 3
	minute  int    // the issue time, in minutes after listBase; -1: none
}

// receivedClaves numbers the fixtures' claves, unique in a test binary.
var receivedClaves atomic.Int64

// seedReceived reserves the received documents of specs in the fixture's
// branches and returns them as stored.
func seedReceived(t *testing.T, s ReceivedStore, f docFixture, prefix string, specs []receivedSpec) []tenant.ReceivedDocument {
	t.Helper()
	ctx := context.Background()
	out := make([]tenant.ReceivedDocument, 0, len(specs))
	for i, sp := range specs {
		b := f.Branch
		if sp.branch == 1 {
			b = f.Branch2
		}
		tipo := map[string]string{"1": "05", "2": "06", "3": "07"}[sp.mensaje]
		if tipo == "" {
			tipo = "05"
		}
		clave := fmt.Sprintf("506%047d", receivedClaves.Add(1))
		r := receivedDocument(b, fmt.Sprintf("%s-%d", prefix, i), clave, tipo)
		r.TipoDocumento, r.Estado, r.EmisorNumero = sp.tipo, sp.estado, sp.emisor
		r.FechaEmision = time.Time{}
		if sp.minute >= 0 {
			r.FechaEmision = listBase.Add(time.Duration(sp.minute) * time.Minute)
		}
		if err := s.ReserveReceived(ctx, &r); err != nil {
			t.Fatalf("ReserveReceived %d: %v", i, err)
		}
		out = append(out, r)
	}
	return out
}

// receivedListOrder sorts received documents as a listing returns them.
func receivedListOrder(rs []tenant.ReceivedDocument) []tenant.ReceivedDocument {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b tenant.ReceivedDocument) int {
		ka, kb := a.ListKey(), b.ListKey()
		if c := kb.At.Compare(ka.At); c != 0 {
			return c
		}
		return int(kb.ID - ka.ID)
	})
	return rs
}

func receivedIDs(rs []tenant.ReceivedDocument) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// walkReceived lists every page of q, limit rows at a time, calling
// between after each page, and returns the rows.
func walkReceived(t *testing.T, s ReceivedStore, q tenant.ListQuery, limit int, between func()) []tenant.ReceivedDocument {
	t.Helper()
	var all []tenant.ReceivedDocument
	q.Limit = limit
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("the walk does not end")
		}
		page, err := s.ListReceived(context.Background(), q)
		if err != nil {
			t.Fatalf("ListReceived: %v", err)
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

// receivedSpecs is a company's received documents: two branches, every
// state, the four answerable types, several suppliers, issue times with
// ties, and rows without an issue time.
func receivedSpecs() []receivedSpec {
	tipos := []string{"01", "03", "01", "02", "09"}
	estados := []tenant.State{tenant.StateAccepted, tenant.StateSent, tenant.StateAccepted, tenant.StateRejected, tenant.StateNotSentYet, tenant.StatePending, tenant.StateError}
	emisores := []string{"3101123456", "114480790", "3101123456", "205550666"}
	var specs []receivedSpec
	for i := range 60 {
		minute := (i * 7) % 23
		if i%17 == 5 {
			minute = -1
		}
		specs = append(specs, receivedSpec{
			branch: i % 2, tipo: tipos[i%len(tipos)], estado: estados[i%len(estados)],
			emisor: emisores[i%len(emisores)], mensaje: fmt.Sprint(1 + i%3), minute: minute,
		})
	}
	return specs
}

func testReceivedListOrder(t *testing.T, s ReceivedStore) {
	f := newDocFixture(t, s)
	rs := seedReceived(t, s, f, "order", receivedSpecs())
	got, err := s.ListReceived(context.Background(), tenant.ListQuery{CompanyID: f.Company.ID, Limit: tenant.MaxListLimit})
	if err != nil {
		t.Fatalf("ListReceived: %v", err)
	}
	if want := receivedIDs(receivedListOrder(rs)); !slices.Equal(receivedIDs(got), want) {
		t.Fatalf("order:\n got %v\nwant %v", receivedIDs(got), want)
	}
	for _, r := range got {
		if r.FechaEmision.IsZero() && !r.ListKey().At.Equal(r.CreatedAt) {
			t.Errorf("row %d without an issue time is listed at %v, not its creation %v", r.ID, r.ListKey().At, r.CreatedAt)
		}
	}
}

func testReceivedListFilters(t *testing.T, s ReceivedStore) {
	f := newDocFixture(t, s)
	rs := seedReceived(t, s, f, "filter", receivedSpecs())
	tests := []struct {
		name string
		q    tenant.ListQuery
		keep func(r tenant.ReceivedDocument) bool
	}{
		{"estado of the message", tenant.ListQuery{Estado: tenant.StateRejected}, func(r tenant.ReceivedDocument) bool { return r.Estado == tenant.StateRejected }},
		{"tipo of the supplier's document", tenant.ListQuery{Tipo: "03"}, func(r tenant.ReceivedDocument) bool { return r.TipoDocumento == "03" }},
		{"receptor is the supplier", tenant.ListQuery{Receptor: "114480790"}, func(r tenant.ReceivedDocument) bool { return r.EmisorNumero == "114480790" }},
		{"the company itself is no counterparty", tenant.ListQuery{Receptor: "3101999999"}, func(tenant.ReceivedDocument) bool { return false }},
		{"id externo", tenant.ListQuery{IDExterno: "filter-7"}, func(r tenant.ReceivedDocument) bool { return r.IDExterno == "filter-7" }},
		{"desde", tenant.ListQuery{Desde: listBase.Add(10 * time.Minute)}, func(r tenant.ReceivedDocument) bool {
			return !r.ListKey().At.Before(listBase.Add(10 * time.Minute))
		}},
		{"hasta, included", tenant.ListQuery{Hasta: listBase.Add(7 * time.Minute)}, func(r tenant.ReceivedDocument) bool {
			return !r.ListKey().At.After(listBase.Add(7 * time.Minute))
		}},
		{"desde hasta estado tipo receptor", tenant.ListQuery{
			Desde: listBase.Add(2 * time.Minute), Hasta: listBase.Add(20 * time.Minute),
			Estado: tenant.StateAccepted, Tipo: "01", Receptor: "3101123456",
		}, func(r tenant.ReceivedDocument) bool {
			at := r.ListKey().At
			return !at.Before(listBase.Add(2*time.Minute)) && !at.After(listBase.Add(20*time.Minute)) &&
				r.Estado == tenant.StateAccepted && r.TipoDocumento == "01" && r.EmisorNumero == "3101123456"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []tenant.ReceivedDocument
			for _, r := range rs {
				if tt.keep(r) {
					want = append(want, r)
				}
			}
			if len(want) == 0 && tt.name != "the company itself is no counterparty" {
				t.Fatal("the fixture has no row for this filter")
			}
			q := tt.q
			q.CompanyID = f.Company.ID
			for _, limit := range []int{1, 3, tenant.MaxListLimit} {
				got := walkReceived(t, s, q, limit, nil)
				if !slices.Equal(receivedIDs(got), receivedIDs(receivedListOrder(want))) {
					t.Errorf("limit %d:\n got %v\nwant %v", limit, receivedIDs(got), receivedIDs(receivedListOrder(want)))
				}
			}
		})
	}
}

func testReceivedListPages(t *testing.T, s ReceivedStore) {
	f := newDocFixture(t, s)
	rs := seedReceived(t, s, f, "pages", receivedSpecs())
	want := receivedIDs(receivedListOrder(rs))
	for _, limit := range []int{1, 2, 7, 59, 60, 61} {
		if got := receivedIDs(walkReceived(t, s, tenant.ListQuery{CompanyID: f.Company.ID}, limit, nil)); !slices.Equal(got, want) {
			t.Errorf("limit %d:\n got %v\nwant %v", limit, got, want)
		}
	}
}

func testReceivedListNoXML(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	r := receivedDocument(f.Branch, "with-xml", receivedClave, "06")
	if err := s.ReserveReceived(ctx, &r); err != nil {
		t.Fatal(err)
	}
	r.Consecutivo, r.SignedXML, r.ResponseXML = "00100001060000000001", binaryPayload(2048, 5), binaryPayload(512, 6)
	r.Estado, r.MensajeHacienda, r.DetalleMensaje = tenant.StateAccepted, "Aceptado", []string{"línea"}
	if err := s.SaveReceived(ctx, &r); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListReceived(ctx, tenant.ListQuery{CompanyID: f.Company.ID, Limit: 10})
	if err != nil {
		t.Fatalf("ListReceived: %v", err)
	}
	if len(got) != 1 {
		t.Fatalf("%d rows, want 1", len(got))
	}
	g := got[0]
	if g.SupplierXML != nil || g.SignedXML != nil || g.ResponseXML != nil {
		t.Errorf("a listed row carries XML: %d, %d, %d bytes", len(g.SupplierXML), len(g.SignedXML), len(g.ResponseXML))
	}
	if g.Clave != r.Clave || g.Consecutivo != r.Consecutivo || g.Estado != r.Estado || g.IDExterno != r.IDExterno ||
		g.MensajeHacienda != r.MensajeHacienda || !equalLines(g.DetalleMensaje, r.DetalleMensaje) ||
		!g.FechaEmision.Equal(r.FechaEmision) || g.EmisorNumero != r.EmisorNumero || g.EmisorNombre != r.EmisorNombre ||
		g.TotalComprobante != r.TotalComprobante || g.TotalImpuesto != r.TotalImpuesto || g.Mensaje != r.Mensaje ||
		!bytes.Equal(g.RequestHash, r.RequestHash) || !g.UpdatedAt.Equal(r.UpdatedAt) {
		t.Errorf("listed row differs from the stored one:\n got %+v\nwant %+v", g, r)
	}
}

func testReceivedListIsolation(t *testing.T, s ReceivedStore) {
	a, b := newDocFixture(t, s), newDocFixture(t, s)
	ra := seedReceived(t, s, a, "a", receivedSpecs()[:20])
	seedReceived(t, s, b, "b", receivedSpecs()[20:45])
	got := walkReceived(t, s, tenant.ListQuery{CompanyID: a.Company.ID}, 7, nil)
	if !slices.Equal(receivedIDs(got), receivedIDs(receivedListOrder(ra))) {
		t.Errorf("company A lists %v, want %v", receivedIDs(got), receivedIDs(receivedListOrder(ra)))
	}
	for _, r := range got {
		if r.CompanyID != a.Company.ID {
			t.Errorf("company A's listing holds row %d of company %d", r.ID, r.CompanyID)
		}
	}
	c := newDocFixture(t, s)
	for _, q := range []tenant.ListQuery{{}, {Estado: tenant.StateAccepted}, {Receptor: "3101123456"}, {IDExterno: "a-1"}, {Tipo: "01"}} {
		q.CompanyID = c.Company.ID
		if got := walkReceived(t, s, q, 5, nil); len(got) != 0 {
			t.Errorf("an empty company lists %v for %+v", receivedIDs(got), q)
		}
	}
	// Issued documents are not received ones, and the other way round.
	d := minimalDocument(c.Branch, "issued", "01", "00001")
	if err := s.ReserveDocument(context.Background(), &d); err != nil {
		t.Fatal(err)
	}
	if got := walkReceived(t, s, tenant.ListQuery{CompanyID: c.Company.ID}, 5, nil); len(got) != 0 {
		t.Errorf("an issued document is listed as received: %v", receivedIDs(got))
	}
}

// testReceivedListConcurrentWalk walks the listing page by page while
// writers add received documents issued before, at and after the walk's
// position: every row there when the walk began is met exactly once, and
// nothing twice.
func testReceivedListConcurrentWalk(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	var specs []receivedSpec
	for i := range 150 {
		specs = append(specs, receivedSpec{branch: i % 2, tipo: "01", estado: tenant.StateAccepted, emisor: "3101123456", mensaje: "1", minute: 1000 + i%40})
	}
	before := seedReceived(t, s, f, "before", specs)

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
				r := receivedDocument(f.Branch, fmt.Sprintf("during-%d-%d", w, i), fmt.Sprintf("506%047d", receivedClaves.Add(1)), "05")
				r.Terminal = fmt.Sprintf("%05d", 2+w)
				r.FechaEmision = listBase.Add(time.Duration(990+(i*13)%60) * time.Minute)
				if err := s.ReserveReceived(ctx, &r); err != nil {
					errs <- err
					return
				}
				added.Add(1)
			}
		})
	}
	for added.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	got := walkReceived(t, s, tenant.ListQuery{CompanyID: f.Company.ID}, 7, func() {
		n := added.Load()
		for deadline := time.Now().Add(5 * time.Second); added.Load() == n && time.Now().Before(deadline); {
			time.Sleep(100 * time.Microsecond)
		}
	})
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("ReserveReceived during the walk: %v", err)
	}
	seen := map[int64]int{}
	for _, r := range got {
		seen[r.ID]++
		if seen[r.ID] == 2 {
			t.Errorf("row %d listed twice", r.ID)
		}
	}
	for _, r := range before {
		if seen[r.ID] == 0 {
			t.Errorf("row %d, there before the walk, was not listed", r.ID)
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

func testReceivedListInvalid(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	for _, q := range []tenant.ListQuery{
		{CompanyID: 0, Limit: 10},
		{CompanyID: f.Company.ID, Limit: 0},
		{CompanyID: f.Company.ID, Limit: tenant.MaxListLimit + 2},
		{CompanyID: f.Company.ID, Limit: 10, After: &tenant.ListKey{At: listBase, ID: 0}},
	} {
		if got, err := s.ListReceived(ctx, q); err == nil {
			t.Errorf("ListReceived(%+v) = %d rows, want an error", q, len(got))
		}
	}
}
