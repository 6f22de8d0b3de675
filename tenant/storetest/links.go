package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	"facturad/tenant"
)

// The claims of documents on others (A.15): written with the reservation,
// checked in its transaction, a refusal numbering nothing.

var errOverpaid = errors.New("over the balance")

// payCheck refuses a payment of amount beyond total less the live claims.
func payCheck(total, amount string) func([]tenant.Claim) error {
	return func(live []tenant.Claim) error {
		left := decimal.RequireFromString(total)
		for _, c := range live {
			left = left.Sub(decimal.RequireFromString(c.Amount))
		}
		if decimal.RequireFromString(amount).GreaterThan(left) {
			return errOverpaid
		}
		return nil
	}
}

func testClaimsRefusalTakesNoNumber(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	cs := s.(tenant.ClaimStore)
	f := newDocFixture(t, s)
	orig := minimalDocument(f.Branch, "venta", "01", "00001")
	orig.Claim = &tenant.Claim{Kind: tenant.ClaimBalance, Amount: "100.50000"}
	mustNot(t, "reserve the sale", s.ReserveDocument(ctx, &orig))

	pay := func(id, amount string) (tenant.Document, error) {
		d := minimalDocument(f.Branch, id, "10", "00001")
		d.Claim = &tenant.Claim{Kind: tenant.ClaimPayment, RefID: orig.ID, Amount: amount,
			Taxes: map[string]string{"01/08": "1.5"}, Check: payCheck("100.5", amount)}
		err := s.ReserveDocument(ctx, &d)
		return d, err
	}
	first, err := pay("pago-1", "60")
	mustNot(t, "first payment", err)
	if _, err := pay("pago-2", "40.50001"); !errors.Is(err, errOverpaid) {
		t.Fatalf("a payment over the balance: %v, want the check's error", err)
	}
	if _, err := s.DocumentByExternalID(ctx, f.Branch.ID, "pago-2"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("the refused payment was stored: %v", err)
	}
	second, err := pay("pago-3", "40.5")
	mustNot(t, "last payment", err)
	if second.Numero != first.Numero+1 {
		t.Errorf("the payment after a refusal is number %d, the one before %d", second.Numero, first.Numero)
	}
	m, err := cs.DocumentClaims(ctx, []int64{orig.ID, first.ID})
	mustNot(t, "claims", err)
	got := m[orig.ID]
	if got.Balance == nil || got.Balance.Amount != "100.50000" || len(got.On) != 2 ||
		got.On[0].DocumentID != first.ID || got.On[0].Amount != "60" || got.On[0].Taxes["01/08"] != "1.5" || got.On[1].DocumentID != second.ID {
		t.Errorf("claims on the sale: %+v", got)
	}
	if _, ok := m[first.ID]; ok {
		t.Errorf("a payment has claims of its own: %+v", m[first.ID])
	}

	// A rejected payment no longer counts.
	first.Estado, first.Phase = tenant.StateRejected, tenant.PhaseRejected
	mustNot(t, "reject the first payment", s.SaveDocument(ctx, &first))
	m, err = cs.DocumentClaims(ctx, []int64{orig.ID})
	mustNot(t, "claims", err)
	if on := m[orig.ID].On; len(on) != 1 || on[0].DocumentID != second.ID {
		t.Errorf("live claims after a rejection: %+v", on)
	}

	// A credit note's lines round-trip; a claim on a missing document is
	// ErrNotFound and numbers nothing.
	nc := minimalDocument(f.Branch, "nota", "03", "00001")
	nc.Claim = &tenant.Claim{Kind: tenant.ClaimCredit, RefID: orig.ID, Amount: "10", Lines: map[int]string{1: "2.5", 3: "1"}}
	mustNot(t, "credit note", s.ReserveDocument(ctx, &nc))
	m, err = cs.DocumentClaims(ctx, []int64{orig.ID})
	mustNot(t, "claims", err)
	if on := m[orig.ID].On; len(on) != 2 || on[1].Kind != tenant.ClaimCredit || on[1].Lines[1] != "2.5" || on[1].Lines[3] != "1" {
		t.Errorf("credit claim: %+v", on)
	}
	lost := minimalDocument(f.Branch, "perdida", "03", "00001")
	lost.Claim = &tenant.Claim{Kind: tenant.ClaimCredit, RefID: orig.ID + 1000, Amount: "1"}
	if err := s.ReserveDocument(ctx, &lost); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("a claim on a missing document: %v, want ErrNotFound", err)
	}
}

func testClaimsRace(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	orig := minimalDocument(f.Branch, "venta", "01", "00001")
	orig.Claim = &tenant.Claim{Kind: tenant.ClaimBalance, Amount: "50"}
	mustNot(t, "reserve the sale", s.ReserveDocument(ctx, &orig))
	// Twelve payments of 10 race against a balance of 50: exactly five
	// are numbered, consecutively.
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		won      []int64
		refusals int
	)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := minimalDocument(f.Branch, fmt.Sprintf("pago-%d", i), "10", "00001")
			d.Claim = &tenant.Claim{Kind: tenant.ClaimPayment, RefID: orig.ID, Amount: "10", Check: payCheck("50", "10")}
			err := s.ReserveDocument(ctx, &d)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, d.Numero)
			case errors.Is(err, errOverpaid):
				refusals++
			default:
				t.Errorf("payment %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if len(won) != 5 || refusals != 7 {
		t.Fatalf("%d payments numbered (%v), %d refused; want 5 and 7", len(won), won, refusals)
	}
	seen := map[int64]bool{}
	for _, n := range won {
		if n < 1 || n > 5 || seen[n] {
			t.Errorf("numbers %v are not 1 to 5", won)
		}
		seen[n] = true
	}
}

// testClaimsRepeatIsConflict: a reservation whose id_externo the branch
// holds already is ErrConflict (the caller replays the first), never the
// claim check's refusal, even though the first one's claim is what the
// check would refuse: a client's retry racing its first call on another
// replica is a repeat, not a payment beyond the balance.
func testClaimsRepeatIsConflict(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	orig := minimalDocument(f.Branch, "venta", "01", "00001")
	orig.Claim = &tenant.Claim{Kind: tenant.ClaimBalance, Amount: "50"}
	mustNot(t, "reserve the sale", s.ReserveDocument(ctx, &orig))
	pay := func(id string) error {
		d := minimalDocument(f.Branch, id, "10", "00001")
		d.Claim = &tenant.Claim{Kind: tenant.ClaimPayment, RefID: orig.ID, Amount: "50", Check: payCheck("50", "50")}
		return s.ReserveDocument(ctx, &d)
	}
	mustNot(t, "the payment", pay("pago-1"))
	if err := pay("pago-1"); !errors.Is(err, tenant.ErrConflict) {
		t.Fatalf("the same id_externo again: %v, want ErrConflict", err)
	}
	if err := pay("pago-2"); !errors.Is(err, errOverpaid) {
		t.Fatalf("another payment of the whole balance: %v, want the check's error", err)
	}

	// The same request racing itself: one wins, every other is a
	// conflict.
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		won       int
		conflicts int
	)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := minimalDocument(f.Branch, "carrera", "03", "00001")
			d.Claim = &tenant.Claim{Kind: tenant.ClaimCredit, RefID: orig.ID, Amount: "1", Lines: map[int]string{1: "1"},
				Check: func(live []tenant.Claim) error {
					for _, c := range live {
						if c.Kind == tenant.ClaimCredit {
							return errOverpaid
						}
					}
					return nil
				}}
			err := s.ReserveDocument(ctx, &d)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, tenant.ErrConflict):
				conflicts++
			default:
				t.Errorf("reservation %d: %v, want success or ErrConflict", i, err)
			}
		}()
	}
	wg.Wait()
	if won != 1 || conflicts != 5 {
		t.Errorf("%d won, %d conflicts; want 1 and 5", won, conflicts)
	}
}
