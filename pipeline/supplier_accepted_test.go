package pipeline

import (
	"context"
	"errors"
	"testing"

	"facturad/hacienda/sandbox"
	"facturad/tenant"
)

// TestReceiveOnlyAcceptedSupplierDocuments: a company answers a supplier's
// document only once the tax authority has accepted it, since the tax
// authority refuses a message about any other. A document it rejected, or
// one it has not judged yet, is refused on the xml field: nothing is
// stored for it and no number is taken, so the company's first answer to
// an accepted document is still number 1.
func TestReceiveOnlyAcceptedSupplierDocuments(t *testing.T) {
	tests := []struct {
		name    string
		faults  sandbox.Faults
		verdict tenant.State // of the supplier's document, as its issuer sees it
		refusal string
	}{
		{"error/rejected by the tax authority", sandbox.Faults{RejectNext: 1}, tenant.StateRejected, "rejected this document"},
		{"error/not judged yet", sandbox.Faults{StuckRate: 1}, tenant.StateSent, "has not judged this document yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			b := setup(t, setupOptions{sandbox: sandbox.Options{Faults: tt.faults}})
			_, buyer := b.newCompany(t, buyerID)

			// The harness's company issues an FE to the buyer; the tax
			// authority rejects it, or leaves it procesando.
			r := request("01", "fe-1")
			r["receptor"] = map[string]any{"nombre": "Compradora S.A.", "identificacion": map[string]any{"tipo": "02", "numero": buyerID}}
			out := b.mustSend(t, r)
			if out.Failed {
				t.Fatalf("send: %s", describe(out))
			}
			clave := out.Document.Clave
			ck, err := b.p.Check(ctx, b.branch, clave)
			if err != nil || ck.Estado != tt.verdict {
				t.Fatalf("the supplier's document: %s, %v; want estado %s", describe(ck), err, tt.verdict)
			}

			_, err = b.receive(buyer, receiveJSON(b.stored(t, clave).SignedXML, "1", "answer-1", nil))
			requireField(t, err, "xml", tt.refusal)
			if rd, err := b.p.Received(ctx, buyer, clave); !errors.Is(err, tenant.ErrNotFound) {
				t.Fatalf("a refused answer was stored: %+v, %v", rd, err)
			}

			// Once the tax authority judges as it should, an accepted
			// document is answered with the company's first number.
			if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
				t.Fatal(err)
			}
			accepted := b.issueTo(t, buyerID, "fe-2")
			got, err := b.receive(buyer, receiveJSON(accepted, "1", "answer-2", nil))
			if err != nil || got.Received.Numero != 1 {
				t.Fatalf("answer to an accepted document: numero %d, %v; want 1", got.Received.Numero, err)
			}
		})
	}
}
