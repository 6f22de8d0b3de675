package pipeline

import (
	"context"
	"fmt"

	"facturad/tenant"
)

// ListDocuments returns a page of the documents of the company p lists
// when it asks for companiaID (0: none named), for the listing call
// (A.10): a branch user sees its company's documents, every branch's; an
// admin or a reseller names a company it may see. q.CompanyID is set here;
// the rest of q is the page asked for. Another tenant's company is
// tenant.ErrNotFound.
func (p *Pipeline) ListDocuments(ctx context.Context, pr tenant.Principal, companiaID int64, q tenant.ListQuery) ([]tenant.Document, error) {
	id, err := p.o.Issuers.ListCompany(ctx, pr, companiaID)
	if err != nil {
		return nil, err
	}
	q.CompanyID = id
	docs, err := p.o.Store.ListDocuments(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", err)
	}
	p.withBalances(ctx, docs)
	return docs, nil
}

// ListReceived returns a page of the received documents of the company p
// lists when it asks for companiaID, for the listing call of received
// documents (A.10's shape, GET /api/received/v4), with the same rule of
// who sees what as ListDocuments: a branch user its company's (every
// branch's), an admin or a reseller a company it names and may see.
// q.Tipo is the supplier document's type, q.Receptor the supplier, q.Estado
// the state of the company's message.
func (p *Pipeline) ListReceived(ctx context.Context, pr tenant.Principal, companiaID int64, q tenant.ListQuery) ([]tenant.ReceivedDocument, error) {
	rs, err := p.receivedStore()
	if err != nil {
		return nil, err
	}
	id, err := p.o.Issuers.ListCompany(ctx, pr, companiaID)
	if err != nil {
		return nil, err
	}
	q.CompanyID = id
	out, err := rs.ListReceived(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list received documents: %w", err)
	}
	return out, nil
}
