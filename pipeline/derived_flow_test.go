package pipeline

import (
	"context"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/sandbox"
	"facturad/tenant"
	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

// The derived routes (A.15) run end to end on the harness: the original
// sent, settled by the sandbox, then voided, re-issued or paid.

// settle checks the document until the sandbox's verdict and fails the
// test unless it is want.
func (b *bundle) settle(t *testing.T, clave string, want tenant.State) Outcome {
	t.Helper()
	out, err := b.p.Check(context.Background(), b.branch, clave)
	if err != nil || out.Estado != want {
		t.Fatalf("check %s: %v %s, want estado %s", clave, err, describe(out), want)
	}
	return out
}

// derivedCtx bounds one derived call.
func derivedCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// twoLines is an FE of two lines sent without numeroLinea, which a send
// may leave out (the validation numbers the lines 1, 2); the last line
// has the smaller quantity.
func twoLines(idExterno string) map[string]any {
	r := request("01", idExterno)
	l1 := r["detalleServicio"].([]any)[0].(map[string]any)
	delete(l1, "numeroLinea")
	l2 := maps.Clone(l1)
	l2["detalle"], l2["cantidad"] = "Servicio de soporte", 1
	r["detalleServicio"] = []any{l1, l2}
	return r
}

// TestVoidLinesWithoutNumeroLinea: the void names a line by the number
// the document carries even when its send left numeroLinea out, and a
// full void counts every line, so a second one is refused.
func TestVoidLinesWithoutNumeroLinea(t *testing.T) {
	b := setup(t, setupOptions{})
	fe := b.mustSend(t, twoLines("fe-sin-numeros"))
	clave := fe.Document.Clave
	b.settle(t, clave, tenant.StateAccepted)

	partial, err := b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-1", Razon: "Devolución parcial",
		Lineas: []VoidLine{{NumeroLinea: 1, Cantidad: "1"}}})
	if err != nil {
		t.Fatalf("a partial void of line 1: %v", err)
	}
	b.settle(t, partial.Document.Clave, tenant.StateAccepted)
	// Line 1 has 1 of 2 left: 2 is beyond it.
	_, err = b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-2", Razon: "Demasiado",
		Lineas: []VoidLine{{NumeroLinea: 1, Cantidad: "2"}}})
	requireFieldErr(t, err, "lineas[0].cantidad")

	rest, err := b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-3", Razon: "El resto"})
	if err != nil {
		t.Fatalf("a void of the rest: %v", err)
	}
	b.settle(t, rest.Document.Clave, tenant.StateAccepted)
	_, err = b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-4", Razon: "Otra vez"})
	requireFieldErr(t, err, "clave")
	_, err = b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-5", Razon: "Otra vez",
		Lineas: []VoidLine{{NumeroLinea: 2, Cantidad: "1"}}})
	requireFieldErr(t, err, "lineas[0].cantidad")
}

// TestVoidFullTwice: a full void of a document sent without numeroLinea
// leaves nothing to void again.
func TestVoidFullTwice(t *testing.T) {
	b := setup(t, setupOptions{})
	fe := b.mustSend(t, twoLines("fe-entera"))
	clave := fe.Document.Clave
	b.settle(t, clave, tenant.StateAccepted)
	if _, err := b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-1", Razon: "Emitida por error"}); err != nil {
		t.Fatalf("a full void: %v", err)
	}
	_, err := b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-2", Razon: "Otra vez"})
	requireFieldErr(t, err, "clave")
}

// creditSale is an FE sold on credit (CondicionVenta 10), which payment
// receipts pay.
func creditSale(idExterno string) map[string]any {
	r := request("01", idExterno)
	r["condicion_venta"], r["plazo_credito"] = "10", 30
	delete(r["resumenFactura"].(map[string]any), "medioPago")
	return r
}

// TestReissueDerivedRefused: a rejected credit note or payment receipt is
// not re-issued (its re-issue would claim nothing, and the original could
// then be credited or paid twice); the void or the payment is issued
// again by its own route, the rejection having freed its claim.
func TestReissueDerivedRefused(t *testing.T) {
	b := setup(t, setupOptions{})
	fe := b.mustSend(t, twoLines("fe-anulada"))
	b.settle(t, fe.Document.Clave, tenant.StateAccepted)
	sale := b.mustSend(t, creditSale("fe-credito"))
	b.settle(t, sale.Document.Clave, tenant.StateAccepted)

	if err := b.sb.SetFaults(sandbox.Faults{RejectNext: 2}); err != nil {
		t.Fatal(err)
	}
	nc, err := b.p.Void(derivedCtx(t), b.branch, fe.Document.Clave, &VoidRequest{IDExterno: "nc-1", Razon: "Emitida por error"})
	if err != nil {
		t.Fatalf("void: %v", err)
	}
	b.settle(t, nc.Document.Clave, tenant.StateRejected)
	rep, err := b.p.Pay(derivedCtx(t), b.branch, sale.Document.Clave, &PaymentRequest{IDExterno: "rep-1", Monto: "100", MedioPago: "04"})
	if err != nil {
		t.Fatalf("pay: %v", err)
	}
	b.settle(t, rep.Document.Clave, tenant.StateRejected)

	for _, clave := range []string{nc.Document.Clave, rep.Document.Clave} {
		_, err := b.p.Reissue(derivedCtx(t), b.branch, clave, []byte(`{"id_externo":"re-`+clave[21:41]+`"}`))
		requireFieldErr(t, err, "clave")
	}

	// Issued again by their routes, each claims what the rejected one did.
	nc2, err := b.p.Void(derivedCtx(t), b.branch, fe.Document.Clave, &VoidRequest{IDExterno: "nc-2", Razon: "Emitida por error"})
	if err != nil {
		t.Fatalf("void again: %v", err)
	}
	b.settle(t, nc2.Document.Clave, tenant.StateAccepted)
	_, err = b.p.Void(derivedCtx(t), b.branch, fe.Document.Clave, &VoidRequest{IDExterno: "nc-3", Razon: "Otra vez"})
	requireFieldErr(t, err, "clave")

	read, err := b.p.Document(context.Background(), b.branch, sale.Document.Clave)
	if err != nil {
		t.Fatal(err)
	}
	if read.SaldoPendiente == "" {
		t.Fatal("no saldoPendiente on a credit sale")
	}
	rest := read.SaldoPendiente
	rep2, err := b.p.Pay(derivedCtx(t), b.branch, sale.Document.Clave, &PaymentRequest{IDExterno: "rep-2", Monto: hacienda.FlexString(rest), MedioPago: "04"})
	if err != nil {
		t.Fatalf("pay the whole balance %s after the rejection: %v", rest, err)
	}
	b.settle(t, rep2.Document.Clave, tenant.StateAccepted)
	_, err = b.p.Pay(derivedCtx(t), b.branch, sale.Document.Clave, &PaymentRequest{IDExterno: "rep-3", Monto: "1", MedioPago: "04"})
	requireFieldErr(t, err, "monto")
}

// TestBalanceOnlyOnPayableTypes: a credit sale opens a balance only when
// its type can be paid by a payment receipt (FE, ND, TE): a purchase or
// export invoice sold on credit shows no saldoPendiente and claims none.
func TestBalanceOnlyOnPayableTypes(t *testing.T) {
	b := setup(t, setupOptions{})
	var factura string
	b.sendOfType(t, hacienda.TypeFE, "fe-contado", &factura)
	for _, tipo := range []string{"08", "09"} {
		r := request(tipo, "credito-"+tipo)
		r["condicion_venta"], r["plazo_credito"] = "10", 30
		if tipo == "08" {
			r["informacionReferencia"] = []any{referenceTo(factura)}
		}
		out := b.mustSend(t, r)
		d := b.settle(t, out.Document.Clave, tenant.StateAccepted).Document
		if d.SaldoPendiente != "" {
			t.Errorf("type %s on credit: saldoPendiente %q", tipo, d.SaldoPendiente)
		}
		m, err := b.store.(tenant.ClaimStore).DocumentClaims(context.Background(), []int64{d.ID})
		if err != nil {
			t.Fatal(err)
		}
		if c := m[d.ID]; c.Balance != nil {
			t.Errorf("type %s on credit opened a balance: %+v", tipo, c.Balance)
		}
	}
}

// claimCounter is the embedded store counting its reads of the claims.
type claimCounter struct {
	*sqlite.Store
	reads atomic.Int64
}

func (c *claimCounter) DocumentClaims(ctx context.Context, ids []int64) (map[int64]tenant.Claims, error) {
	c.reads.Add(1)
	return c.Store.DocumentClaims(ctx, ids)
}

// TestReadReadsBalanceOnlyOfCreditSales: the read and the check (which
// clients poll) read the claims only of a document that can carry a
// balance, so that any other costs what it did before balances.
func TestReadReadsBalanceOnlyOfCreditSales(t *testing.T) {
	var store *claimCounter
	b := setup(t, setupOptions{store: func(t testing.TB) fullStore {
		store = &claimCounter{Store: storetest.NewSQLiteStore(t)}
		return store
	}})
	cash := b.mustSend(t, request("01", "contado"))
	sale := b.mustSend(t, creditSale("credito"))
	ctx := context.Background()

	before := store.reads.Load()
	b.settle(t, cash.Document.Clave, tenant.StateAccepted)
	if _, err := b.p.Document(ctx, b.branch, cash.Document.Clave); err != nil {
		t.Fatal(err)
	}
	if n := store.reads.Load() - before; n != 0 {
		t.Errorf("a cash sale's check and read read the claims %d times", n)
	}

	before = store.reads.Load()
	b.settle(t, sale.Document.Clave, tenant.StateAccepted)
	d, err := b.p.Document(ctx, b.branch, sale.Document.Clave)
	if err != nil {
		t.Fatal(err)
	}
	if n := store.reads.Load() - before; n != 2 || d.SaldoPendiente == "" {
		t.Errorf("a credit sale's check and read read the claims %d times (want 2), saldoPendiente %q", n, d.SaldoPendiente)
	}
}

// TestReissueIDExternoString: a re-issue's id_externo is a JSON string,
// as the send's is (and the void's and the payment's): a number is
// refused as such, never looked up as the string it would spell, which
// could name another document.
func TestReissueIDExternoString(t *testing.T) {
	b := setup(t, setupOptions{sandbox: sandbox.Options{Faults: sandbox.Faults{RejectNext: 1}}})
	fe := b.mustSend(t, request("01", "7"))
	b.settle(t, fe.Document.Clave, tenant.StateRejected)
	for _, body := range []string{`{"id_externo":7}`, `{"id_externo":8}`, `{"id_externo":true}`} {
		_, err := b.p.Reissue(derivedCtx(t), b.branch, fe.Document.Clave, []byte(body))
		if err == nil || !strings.Contains(err.Error(), "id_externo") || !strings.Contains(err.Error(), "must be a JSON string") {
			t.Errorf("re-issue %s: %v, want a 400 on id_externo saying it must be a JSON string", body, err)
		}
	}
}

// TestReissueNamesTwice: a re-issue body naming one field twice, in two
// cases (the names match without regard to case), is refused on both
// names rather than read in the order a map gives.
func TestReissueNamesTwice(t *testing.T) {
	b := setup(t, setupOptions{sandbox: sandbox.Options{Faults: sandbox.Faults{RejectNext: 1}}})
	fe := b.mustSend(t, request("01", "rechazada"))
	b.settle(t, fe.Document.Clave, tenant.StateRejected)
	for range 5 {
		_, err := b.p.Reissue(derivedCtx(t), b.branch, fe.Document.Clave, []byte(`{"id_externo":"re-a","ID_EXTERNO":"re-b"}`))
		requireFieldErr(t, err, "id_externo")
		requireFieldErr(t, err, "ID_EXTERNO")
	}
	_, err := b.p.Reissue(derivedCtx(t), b.branch, fe.Document.Clave, []byte(`{"id_externo":"re-c","Receptor":{"nombre":"A"},"receptor":{"nombre":"B"}}`))
	requireFieldErr(t, err, "Receptor")
	requireFieldErr(t, err, "receptor")
}
