package tenant

import (
	"context"
	"fmt"
	"time"

	"facturad/hacienda/msg"
)

// MaxListLimit is the most items one page of a listing holds (A.10).
const MaxListLimit = 500

// FirstListTime and LastListTime bound the instants the stores keep an
// issue time at and compare a listing's bounds with: the years 0001 to 9999
// in UTC (the embedded store keeps times as text that sorts as time only
// within them; FirstListTime itself is the zero time, "not set").
// ListQuery.Period clamps a period to them.
var (
	FirstListTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	LastListTime  = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

// ListKey is a listed row's place in a listing: listings run newest first
// by issue time, then by id, both descending, so the key of the last row of
// a page is where the next page starts (keyset pagination). At is in UTC,
// to the microsecond, as stored.
type ListKey struct {
	At time.Time
	ID int64
}

// ListQuery selects one page of a company's documents (A.10), issued or
// received: every field but CompanyID and Limit is a filter, empty or zero
// meaning none. The stores read it from their indexes, so that a page costs
// the same however many documents the company has and however deep in the
// listing it starts.
type ListQuery struct {
	CompanyID int64
	// Desde and Hasta bound the issue time, both included.
	Desde, Hasta time.Time
	// Estado is a state code (00–05); Tipo a document type code. For
	// received documents, the state of the company's message and the type
	// of the supplier's document.
	Estado State
	Tipo   string
	// IDExterno is the caller's id (unique per branch, so a few documents
	// of a company at most).
	IDExterno string
	// Receptor is the counterparty's identification number: the receptor
	// of the send request, which for a purchase invoice (08) is the seller,
	// written in the XML's Emisor; for received documents, the supplier
	// (the supplier document's Emisor).
	Receptor string
	// After, when set, starts the page after that row (the last row of the
	// page before).
	After *ListKey
	// Limit is how many rows to return, 1 to MaxListLimit+1 (the gateway
	// asks for one more than the page to learn whether another follows).
	Limit int
}

// Period returns the bounds on the issue time a store compares for q, in
// UTC to the microsecond (desde rounded up, hasta down, so that both stay
// included), zero for no bound; empty reports that no row can be in the
// period, and the store must answer no row without comparing anything. A
// bound beyond what the stores keep bounds nothing on its side (a desde
// at or before FirstListTime, a hasta at or after LastListTime: hasta
// 9999-12-31 in Costa Rica ends in year 10000 in UTC), and one past the
// other end leaves the period empty, as does a desde after hasta. So both
// stores answer the same rows for any period, and none compares a time it
// cannot write.
func (q ListQuery) Period() (desde, hasta time.Time, empty bool) {
	if !q.Desde.IsZero() {
		d := q.Desde.UTC()
		if t := d.Truncate(time.Microsecond); !t.Equal(d) {
			d = t.Add(time.Microsecond)
		}
		switch {
		case d.After(LastListTime):
			return time.Time{}, time.Time{}, true
		case d.After(FirstListTime):
			desde = d
		}
	}
	if !q.Hasta.IsZero() {
		h := q.Hasta.UTC().Truncate(time.Microsecond)
		switch {
		case !h.After(FirstListTime):
			return time.Time{}, time.Time{}, true
		case h.Before(LastListTime):
			hasta = h
		}
	}
	if !desde.IsZero() && !hasta.IsZero() && hasta.Before(desde) {
		return time.Time{}, time.Time{}, true
	}
	return desde, hasta, false
}

// Check refuses a query a store must not run: no company, or a limit out
// of bounds.
func (q ListQuery) Check() error {
	switch {
	case q.CompanyID <= 0:
		return fmt.Errorf("list: no company")
	case q.Limit < 1 || q.Limit > MaxListLimit+1:
		return fmt.Errorf("list: limit %d is not between 1 and %d", q.Limit, MaxListLimit+1)
	case q.After != nil && q.After.ID <= 0:
		return fmt.Errorf("list: cursor id %d", q.After.ID)
	}
	return nil
}

// ListKey returns d's place in a listing: its issue time, or when it has
// none (the pipeline always sets one, but the stores take a document
// without it) the time it was numbered, which is what the stores order on.
func (d Document) ListKey() ListKey { return listKey(d.FechaEmision, d.CreatedAt, d.ID) }

// listKey is the place of row id in a listing: issued, or when it is zero
// created, in UTC to the microsecond, as the stores keep and order them.
func listKey(issued, created time.Time, id int64) ListKey {
	at := issued
	if at.IsZero() {
		at = created
	}
	return ListKey{At: at.UTC().Truncate(time.Microsecond), ID: id}
}

// DocumentLister lists issued documents (A.10); both store adapters
// implement it beside DocumentStore.
type DocumentLister interface {
	// ListDocuments returns up to q.Limit of the company's documents that
	// match q, newest first by issue time (Document.ListKey), then by id,
	// both descending, starting after q.After. The rows carry no signed
	// XML, no answer XML and no request: a listing shows states, not
	// documents. Rows are ordered by a key that never changes once a
	// document is numbered, so a walk through the pages meets every
	// document that existed when it began exactly once, whatever is added
	// meanwhile.
	ListDocuments(ctx context.Context, q ListQuery) ([]Document, error)
}

// ListCompany returns the company whose documents p lists when it asks for
// companiaID (0: none given). A branch user lists its own company's
// documents, every branch's, and may leave companiaID out; an admin or a
// reseller must name a company (a *ValidationError on companiaId
// otherwise). Who may see which company's documents is documentsVisible,
// the rule AuthorizeDocument applies to each document read: one that does
// not exist or that p may not see is ErrNotFound.
func (s *Service) ListCompany(ctx context.Context, p Principal, companiaID int64) (int64, error) {
	if companiaID < 0 {
		return 0, invalidField("companiaId", msg.PositiveInt.With())
	}
	if companiaID == 0 {
		switch p.Role {
		case RoleBranch:
			companiaID = p.CompanyID
		case RoleAdmin, RoleReseller:
			return 0, invalidField("companiaId", msg.CompaniaIDRequired.With())
		}
	}
	if err := s.documentsVisible(ctx, p, companiaID); err != nil {
		return 0, err
	}
	return companiaID, nil
}

// documentsVisible is the one rule of who sees a company's documents,
// issued and received, in listings and in reads (decision 151): an admin
// every company's, a reseller those of the companies it owns, a branch user
// its own company's, every branch's (A.10: "a branch user sees its
// company's documents (all branches)"); which branch issued or received a
// document does not matter, and a new document is always numbered in the
// caller's own branch. For an admin or a reseller the company is read, so
// that one that does not exist is ErrNotFound as another tenant's is; a
// branch user's is the company its verified credentials name.
func (s *Service) documentsVisible(ctx context.Context, p Principal, companyID int64) error {
	switch p.Role {
	case RoleBranch:
		if p.CompanyID > 0 && companyID == p.CompanyID {
			return nil
		}
		return fmt.Errorf("company %d: %w", companyID, ErrNotFound)
	case RoleAdmin, RoleReseller:
		_, err := s.companyFor(ctx, p, companyID)
		return err
	}
	return ErrNotFound
}
