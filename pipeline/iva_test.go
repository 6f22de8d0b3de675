package pipeline

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
	"facturad/tenant"
)

// The tax breakdown the IVA summary adds up (A.15) is written by the
// reservation that numbers a document or a received one: no write of its
// own on a send's or a receive's path.

// writeCounter counts the document writes a store is asked for, each its
// own commit: reservations, saves and breakdowns written apart.
type writeCounter struct {
	fullStore
	reserves, saves, breakdowns atomic.Int64
}

func (w *writeCounter) ReserveDocument(ctx context.Context, d *tenant.Document) error {
	w.reserves.Add(1)
	return w.fullStore.ReserveDocument(ctx, d)
}

func (w *writeCounter) SaveDocument(ctx context.Context, d *tenant.Document) error {
	w.saves.Add(1)
	return w.fullStore.SaveDocument(ctx, d)
}

func (w *writeCounter) SaveIVABreakdown(ctx context.Context, received bool, id int64, breakdown []byte) error {
	w.breakdowns.Add(1)
	return w.fullStore.(tenant.IVAStore).SaveIVABreakdown(ctx, received, id, breakdown)
}

func (w *writeCounter) IVASources(ctx context.Context, q tenant.IVAQuery, fn func(tenant.IVASource) error) error {
	return w.fullStore.(tenant.IVAStore).IVASources(ctx, q, fn)
}

// ivaSource is what the IVA summary of the month of at reads of the
// document (received: the received document) id of the company in
// ambiente; the test fails when the month does not count it.
func (b *bundle) ivaSource(t *testing.T, companyID int64, ambiente string, received bool, id int64, at time.Time) tenant.IVASource {
	t.Helper()
	// Only the month's reads are needed: a store wrapped by a test (the
	// write counter) offers those and not the rest of tenant.IVAStore.
	st, ok := b.store.(interface {
		IVASources(ctx context.Context, q tenant.IVAQuery, fn func(tenant.IVASource) error) error
	})
	if !ok {
		t.Fatalf("the store %T keeps no IVA breakdowns", b.store)
	}
	var (
		got   tenant.IVASource
		found bool
	)
	err := st.IVASources(context.Background(), tenant.IVAQuery{CompanyID: companyID, Month: tenant.MonthOf(at), Ambiente: ambiente},
		func(src tenant.IVASource) error {
			if src.Received == received && src.ID == id {
				got, found = src, true
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("the month of %v does not count document %d (received %v)", at, id, received)
	}
	return got
}

// wantStoredBreakdown fails unless raw is a stored breakdown with want's
// figures.
func wantStoredBreakdown(t *testing.T, what string, raw []byte, want tenant.IVABreakdown) {
	t.Helper()
	if raw == nil {
		t.Errorf("%s: no breakdown stored", what)
		return
	}
	var got tenant.IVABreakdown
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	same := len(got.Cells) == len(want.Cells) && got.Acreditable.Equal(want.Acreditable)
	for i := 0; same && i < len(got.Cells); i++ {
		g, w := got.Cells[i], want.Cells[i]
		same = g.Codigo == w.Codigo && g.CodigoTarifaIVA == w.CodigoTarifaIVA && g.Tarifa == w.Tarifa &&
			g.Base.Equal(w.Base) && g.Impuesto.Equal(w.Impuesto) && g.Exento.Equal(w.Exento) &&
			g.Exonerado.Equal(w.Exonerado) && g.NoSujeto.Equal(w.NoSujeto)
	}
	if !same {
		t.Errorf("%s: stored breakdown %s, want %+v", what, raw, want)
	}
}

// harnessBreakdown is the breakdown of request(): 2 × 12,500.50 at 13 %.
func harnessBreakdown(acreditable string) tenant.IVABreakdown {
	b := tenant.IVABreakdown{Cells: []tenant.IVACell{{Codigo: "01", CodigoTarifaIVA: "08", Tarifa: "13",
		Base: decimal.RequireFromString("25001"), Impuesto: decimal.RequireFromString("3250.13")}}}
	if acreditable != "" {
		b.Acreditable = decimal.RequireFromString(acreditable)
	}
	return b
}

// xmlBreakdown is the breakdown the summary would compute from a signed
// document's XML.
func xmlBreakdown(t *testing.T, xml []byte) tenant.IVABreakdown {
	t.Helper()
	doc, err := hacienda.ParseXML(xml)
	if err != nil {
		t.Fatal(err)
	}
	return tenant.BreakdownOf(doc)
}

func TestSendStoresItsBreakdownWithItsNumber(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			var w *writeCounter
			b := setup(t, setupOptions{store: func(tb testing.TB) fullStore {
				w = &writeCounter{fullStore: sk.open(tb)}
				return w
			}})
			before := [3]int64{w.reserves.Load(), w.saves.Load(), w.breakdowns.Load()}
			out := b.mustSend(t, request("01", "iva-1"))
			after := [3]int64{w.reserves.Load(), w.saves.Load(), w.breakdowns.Load()}
			// One reservation, which wrote the breakdown; no write of it
			// apart.
			if n := after[0] - before[0]; n != 1 {
				t.Errorf("%d reservations for one send", n)
			}
			if n := after[2] - before[2]; n != 0 {
				t.Errorf("a send wrote its breakdown apart %d times", n)
			}
			t.Logf("a send's store writes: %d reservation, %d saves", after[0]-before[0], after[1]-before[1])

			b.waitAccepted(t, func(ctx context.Context) (tenant.State, error) {
				o, err := b.p.Check(ctx, b.branch, out.Document.Clave)
				return o.Document.Estado, err
			})
			d := b.stored(t, out.Document.Clave)
			src := b.ivaSource(t, d.CompanyID, d.Ambiente, false, d.ID, d.FechaEmision)
			wantStoredBreakdown(t, "the send's", src.Breakdown, harnessBreakdown(""))
			wantStoredBreakdown(t, "the send's, against its XML", src.Breakdown, xmlBreakdown(t, d.SignedXML))
		})
	}
}

func TestReceiveStoresItsBreakdownWithItsNumber(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			b := setup(t, setupOptions{store: sk.open})
			_, buyer := b.newCompany(t, buyerID)
			xml := b.issueTo(t, buyerID, "fe-iva")
			out, err := b.receive(buyer, receiveJSON(xml, "2", "rcv-iva",
				map[string]any{"detalleMensaje": "Solo una parte", "condicionImpuesto": "02", "montoTotalImpuestoAcreditar": 1000}))
			if err != nil || out.Failed {
				t.Fatalf("receive: %+v %v", out, err)
			}
			b.waitAccepted(t, func(ctx context.Context) (tenant.State, error) {
				o, err := b.p.CheckReceived(ctx, buyer, out.Received.Clave)
				return o.Received.Estado, err
			})
			r := b.receivedRow(t, buyer.CompanyID, out.Received.Clave)
			src := b.ivaSource(t, r.CompanyID, r.Ambiente, true, r.ID, r.CheckedAt)
			wantStoredBreakdown(t, "the received document's", src.Breakdown, harnessBreakdown("1000"))
			msg, err := hacienda.ParseMensajeReceptor(r.SignedXML)
			if err != nil {
				t.Fatal(err)
			}
			supplier, err := hacienda.ParseXML(r.SupplierXML)
			if err != nil {
				t.Fatal(err)
			}
			wantStoredBreakdown(t, "the received document's, against its XML", src.Breakdown, tenant.ReceivedBreakdown(supplier, msg))
		})
	}
}

// TestResumedDocumentsBreakdown: a document whose send died after
// numbering and that the background worker finishes keeps the breakdown
// its reservation wrote, which its signed XML agrees with; one numbered
// by a build that wrote none is counted from its XML by the summary,
// which keeps what it computed.
func TestResumedDocumentsBreakdown(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			b := setup(t, setupOptions{store: sk.open})
			ctx := context.Background()
			kept := b.interruptedReservation(t, request("01", "crash-iva"), true, true)
			older := b.interruptedReservation(t, request("01", "crash-old"), true, false)
			b.runDueUntil(t, 5, func() bool {
				for _, d := range []tenant.Document{kept, older} {
					s, err := b.store.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
					if err != nil || s.Estado != tenant.StateAccepted {
						return false
					}
				}
				return true
			})
			k, err := b.store.DocumentByExternalID(ctx, kept.BranchID, kept.IDExterno)
			if err != nil {
				t.Fatal(err)
			}
			src := b.ivaSource(t, k.CompanyID, k.Ambiente, false, k.ID, k.FechaEmision)
			wantStoredBreakdown(t, "the resumed document's", src.Breakdown, harnessBreakdown(""))
			wantStoredBreakdown(t, "the resumed document's, against its XML", src.Breakdown, xmlBreakdown(t, k.SignedXML))

			o, err := b.store.DocumentByExternalID(ctx, older.BranchID, older.IDExterno)
			if err != nil {
				t.Fatal(err)
			}
			if src := b.ivaSource(t, o.CompanyID, o.Ambiente, false, o.ID, o.FechaEmision); src.Breakdown != nil || len(src.XML) == 0 {
				t.Fatalf("a document reserved without a breakdown: breakdown %s, XML %d bytes", src.Breakdown, len(src.XML))
			}
			sum, err := b.svc.IVASummary(ctx, b.admin, o.CompanyID, tenant.MonthOf(o.FechaEmision).Periodo)
			if err != nil {
				t.Fatal(err)
			}
			// Both documents count: 2 × (25,001 at 13 %, tax 3,250.13).
			if len(sum.Ventas) != 1 || !sum.Ventas[0].Base.Equal(decimal.RequireFromString("50002")) ||
				!sum.Ventas[0].Impuesto.Equal(decimal.RequireFromString("6500.26")) || sum.Ventas[0].Documentos != 2 {
				t.Errorf("summary: %+v", sum.Ventas)
			}
			src = b.ivaSource(t, o.CompanyID, o.Ambiente, false, o.ID, o.FechaEmision)
			wantStoredBreakdown(t, "the older document's, kept by the summary", src.Breakdown, harnessBreakdown(""))
		})
	}
}
