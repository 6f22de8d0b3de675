package storetest

import (
	"bytes"
	"context"
	"fmt"
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
	contract[ReceivedStore]{
		{"ok/newest first by issue time then id", testReceivedListOrder},
		{"ok/filters alone and together", testReceivedListFilters},
		{"ok/pages walk every received document once", testReceivedListPages},
		{"ok/periods at the edges of the calendar", testReceivedListPeriodEdges},
		{"ok/rows carry no xml", testReceivedListNoXML},
		{"ok/another company's received documents are never listed", testReceivedListIsolation},
		{"ok/a walk while received documents are added has no duplicate and no gap", testReceivedListConcurrentWalk},
		{"error/invalid query", testReceivedListInvalid},
	}.run(t, open)
}

// receivedSpec is one fixture received document's varying fields.
type receivedSpec struct {
	branch  int    // 0 or 1
	tipo    string // the supplier document's type
	estado  tenant.State
	emisor  string    // the supplier
	mensaje string    // 1, 2, 3
	minute  int       // the issue time, in minutes after listBase; -1: none
	at      time.Time // when set, the issue time instead of minute
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
		r.TipoDocumento, r.EmisorNumero = sp.tipo, sp.emisor
		r.Place(sp.estado)
		r.FechaEmision = time.Time{}
		switch {
		case !sp.at.IsZero():
			r.FechaEmision = sp.at
		case sp.minute >= 0:
			r.FechaEmision = listBase.Add(time.Duration(sp.minute) * time.Minute)
		}
		if err := s.ReserveReceived(ctx, &r); err != nil {
			t.Fatalf("ReserveReceived %d: %v", i, err)
		}
		out = append(out, r)
	}
	return out
}

// receivedListing is the listing of s's received documents.
func receivedListing(s ReceivedStore) listing[tenant.ReceivedDocument] {
	return listing[tenant.ReceivedDocument]{"ListReceived", s.ListReceived, "row"}
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
	got := receivedListing(s).checkOrder(t, f.Company.ID, rs)
	for _, r := range got {
		if r.FechaEmision.IsZero() && !r.ListKey().At.Equal(r.CreatedAt) {
			t.Errorf("row %d without an issue time is listed at %v, not its creation %v", r.ID, r.ListKey().At, r.CreatedAt)
		}
	}
}

func testReceivedListFilters(t *testing.T, s ReceivedStore) {
	f := newDocFixture(t, s)
	rs := seedReceived(t, s, f, "filter", receivedSpecs())
	receivedListing(s).checkFilters(t, f.Company.ID, rs, []listFilter[tenant.ReceivedDocument]{
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
	}, "the company itself is no counterparty")
}

func testReceivedListPages(t *testing.T, s ReceivedStore) {
	f := newDocFixture(t, s)
	rs := seedReceived(t, s, f, "pages", receivedSpecs())
	receivedListing(s).checkPages(t, f.Company.ID, rs)
}

func testReceivedListNoXML(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	r := receivedDocument(f.Branch, "with-xml", receivedClave, "06")
	r.FirmaPolitica = receivedPolicy
	if err := s.ReserveReceived(ctx, &r); err != nil {
		t.Fatal(err)
	}
	r.Consecutivo, r.SignedXML, r.ResponseXML = "00100001060000000001", binaryPayload(2048, 5), binaryPayload(512, 6)
	r.MensajeHacienda, r.DetalleMensaje = "Aceptado", []string{"línea"}
	r.Place(tenant.StateAccepted)
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
		g.FirmaPolitica != r.FirmaPolitica ||
		!bytes.Equal(g.RequestHash, r.RequestHash) || !g.UpdatedAt.Equal(r.UpdatedAt) {
		t.Errorf("listed row differs from the stored one:\n got %+v\nwant %+v", g, r)
	}
}

func testReceivedListIsolation(t *testing.T, s ReceivedStore) {
	l := receivedListing(s)
	a, b := newDocFixture(t, s), newDocFixture(t, s)
	ra := seedReceived(t, s, a, "a", receivedSpecs()[:20])
	seedReceived(t, s, b, "b", receivedSpecs()[20:45])
	c := newDocFixture(t, s)
	l.checkIsolation(t, a.Company.ID, ra, func(r tenant.ReceivedDocument) int64 { return r.CompanyID }, c.Company.ID,
		[]tenant.ListQuery{{}, {Estado: tenant.StateAccepted}, {Receptor: "3101123456"}, {IDExterno: "a-1"}, {Tipo: "01"}})
	// Issued documents are not received ones, and the other way round.
	d := minimalDocument(c.Branch, "issued", "01", "00001")
	if err := s.ReserveDocument(context.Background(), &d); err != nil {
		t.Fatal(err)
	}
	if got := l.walk(t, tenant.ListQuery{CompanyID: c.Company.ID}, 5, nil); len(got) != 0 {
		t.Errorf("an issued document is listed as received: %v", ids(got))
	}
}

// testReceivedListConcurrentWalk walks the listing page by page while
// writers add received documents issued before, at and after the walk's
// position: every row there when the walk began is met exactly once, and
// nothing twice.
func testReceivedListConcurrentWalk(t *testing.T, s ReceivedStore) {
	f := newDocFixture(t, s)
	var specs []receivedSpec
	for i := range 150 {
		specs = append(specs, receivedSpec{branch: i % 2, tipo: "01", estado: tenant.StateAccepted, emisor: "3101123456", mensaje: "1", minute: 1000 + i%40})
	}
	before := seedReceived(t, s, f, "before", specs)
	receivedListing(s).checkConcurrentWalk(t, f.Company.ID, before, func(w, i int) error {
		r := receivedDocument(f.Branch, fmt.Sprintf("during-%d-%d", w, i), fmt.Sprintf("506%047d", receivedClaves.Add(1)), "05")
		r.Terminal = fmt.Sprintf("%05d", 2+w)
		r.FechaEmision = listBase.Add(time.Duration(990+(i*13)%60) * time.Minute)
		if err := s.ReserveReceived(context.Background(), &r); err != nil {
			return fmt.Errorf("ReserveReceived: %w", err)
		}
		return nil
	})
}

func testReceivedListInvalid(t *testing.T, s ReceivedStore) {
	f := newDocFixture(t, s)
	receivedListing(s).checkInvalid(t, f.Company.ID)
}
