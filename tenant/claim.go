package tenant

import (
	"context"
	"encoding/json"
	"fmt"
)

// The kinds of a document's claim (Claim.Kind).
const (
	// ClaimBalance is the claim of a document that opens a balance payable
	// by payment receipts (CondicionVenta 08 or 10): Amount is its
	// TotalComprobante. It references no other document.
	ClaimBalance = "saldo"
	// ClaimCredit is a credit note's claim on the document it credits:
	// Lines are the quantities it credits per line of that document, Amount
	// its TotalComprobante.
	ClaimCredit = "credito"
	// ClaimPayment is a payment receipt's (REP) claim on the document it
	// pays: Amount is the amount paid, Taxes its tax per tax group.
	ClaimPayment = "pago"
)

// Claim is what a document takes of another one (a credit note of the
// lines it credits, a payment receipt of the balance it pays), or, for a
// ClaimBalance, what a document offers to be paid. ReserveDocument writes
// it with the document, in the transaction that numbers it; decimals are
// kept as the strings they were given in and summed in Go, never by the
// database.
type Claim struct {
	// Kind is ClaimBalance, ClaimCredit or ClaimPayment.
	Kind string
	// RefID is the referenced document's id (0 for a ClaimBalance).
	RefID int64
	// Amount is a decimal in the referenced document's currency.
	Amount string
	// Lines maps a line number of the referenced document to the
	// quantity credited (ClaimCredit).
	Lines map[int]string
	// Taxes maps a tax group ("codigo/codigoTarifaIVA") of the referenced
	// document to the tax a payment carries of it (ClaimPayment).
	Taxes map[string]string

	// Check, when set on a claim being reserved, is called by
	// ReserveDocument inside its transaction, after the referenced
	// document is locked against other reservations of claims on it, with
	// the live claims on it (those of documents the tax authority has not
	// rejected, 02). An error refuses the reservation, which then numbers
	// nothing; ReserveDocument returns it wrapped.
	Check func(live []Claim) error

	// DocumentID and Estado are the claiming document's, on a claim read
	// back.
	DocumentID int64
	Estado     State
}

// claimDetail is the stored form of a claim's lines and taxes.
type claimDetail struct {
	Lines map[int]string    `json:"lines,omitempty"`
	Taxes map[string]string `json:"taxes,omitempty"`
}

// EncodeDetail returns the claim's lines and taxes as the JSON the stores
// keep.
func (c Claim) EncodeDetail() (string, error) {
	b, err := json.Marshal(claimDetail{Lines: c.Lines, Taxes: c.Taxes})
	if err != nil {
		return "", fmt.Errorf("encode a claim: %w", err)
	}
	return string(b), nil
}

// DecodeDetail reads what EncodeDetail wrote into c.
func (c *Claim) DecodeDetail(s string) error {
	if s == "" {
		return nil
	}
	var d claimDetail
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return fmt.Errorf("decode a claim: %w", err)
	}
	c.Lines, c.Taxes = d.Lines, d.Taxes
	return nil
}

// CheckClaim rejects a claim a store cannot keep.
func CheckClaim(c *Claim) error {
	switch c.Kind {
	case ClaimBalance:
		if c.RefID != 0 {
			return fmt.Errorf("a balance claim references no document (not %d)", c.RefID)
		}
	case ClaimCredit, ClaimPayment:
		if c.RefID <= 0 {
			return fmt.Errorf("a %s claim needs the referenced document", c.Kind)
		}
	default:
		return fmt.Errorf("unknown claim kind %q", c.Kind)
	}
	return nil
}

// Claims are the claims that concern one document: its own balance (nil
// when it opens none) and the live claims other documents hold on it.
type Claims struct {
	Balance *Claim
	On      []Claim
}

// ClaimRows are the rows of a store's read of claims, each the claiming
// document's id, the referenced document's id (0 for a balance), the kind,
// the amount, the stored detail and the claiming document's estado
// (pgx.Rows and *sql.Rows are).
type ClaimRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanClaims gathers claim rows into the Claims of each document they
// concern: a balance under its own document, any other claim under the
// document it references, in the rows' order. The store's query selects
// which claims are live; errors are the rows' own, for the store to map.
func ScanClaims(rows ClaimRows) (map[int64]Claims, error) {
	out := map[int64]Claims{}
	for rows.Next() {
		var (
			c              Claim
			detail, estado string
		)
		if err := rows.Scan(&c.DocumentID, &c.RefID, &c.Kind, &c.Amount, &detail, &estado); err != nil {
			return nil, err
		}
		if err := c.DecodeDetail(detail); err != nil {
			return nil, err
		}
		c.Estado = State(estado)
		key := c.RefID
		if c.Kind == ClaimBalance {
			key = c.DocumentID
		}
		cs := out[key]
		if c.Kind == ClaimBalance {
			cs.Balance = &c
		} else {
			cs.On = append(cs.On, c)
		}
		out[key] = cs
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimStore reads the claims (both store adapters implement it).
type ClaimStore interface {
	// DocumentClaims returns, for each of the documents ids that has any,
	// its balance claim and the claims on it of documents the tax
	// authority has not rejected (estado other than 02), in the order
	// they were reserved.
	DocumentClaims(ctx context.Context, ids []int64) (map[int64]Claims, error)
}
