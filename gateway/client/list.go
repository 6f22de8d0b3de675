package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"facturad/hacienda"
)

// ListQuery selects the documents a listing returns (A.10), issued
// (ListDocuments) or received (ListReceived). Every field is optional;
// zero means no filter.
type ListQuery struct {
	// CompaniaID names the company: required for an admin or a reseller;
	// a branch user lists its own company's documents, every branch's.
	CompaniaID int64
	// Desde and Hasta bound the issue time, both included. They are sent
	// as Costa Rica local date-times.
	Desde, Hasta time.Time
	// Estado is a state code (EstadoAccepted...); TipoDocumento a
	// document type code (01 FE, 04 TE...). For received documents, the
	// state of the company's message and the type of the supplier's
	// document (01, 02, 03 or 09).
	Estado        string
	TipoDocumento string
	// IDExterno finds the documents with that id (one per branch at most).
	IDExterno string
	// Receptor is the counterparty's identification number: the send
	// request's receptor (for a purchase invoice, the seller); for
	// received documents, the supplier.
	Receptor string
	// Limit is the page's size, 1 to 500; 0 is the service's default, 50.
	Limit int
}

func (q ListQuery) values(cursor string) url.Values {
	v := url.Values{}
	if q.CompaniaID != 0 {
		v.Set("companiaId", strconv.FormatInt(q.CompaniaID, 10))
	}
	if !q.Desde.IsZero() {
		v.Set("desde", q.Desde.In(hacienda.CostaRica).Format("2006-01-02T15:04:05.999999"))
	}
	if !q.Hasta.IsZero() {
		v.Set("hasta", q.Hasta.In(hacienda.CostaRica).Format("2006-01-02T15:04:05.999999"))
	}
	for name, s := range map[string]string{"estado": q.Estado, "tipo_documento": q.TipoDocumento, "id_externo": q.IDExterno, "receptor": q.Receptor} {
		if s != "" {
			v.Set(name, s)
		}
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	return v
}

// DocumentPage is one page of a listing: its documents, newest first, as
// the read call answers them without XML, and the cursor of the next page,
// empty on the last one.
type DocumentPage struct {
	Items []Document `json:"items"`
	Next  string     `json:"next"`
}

// ListDocuments reads one page of the documents that match q
// (GET /api/documents/v4), newest first by issue time. cursor is empty for
// the first page, then the Next of the page before, with the same q (the
// Limit may change): a cursor of other filters or another company is a 400
// on cursor. A company the caller may not see is ErrNotFound.
func (c *Client) ListDocuments(ctx context.Context, q ListQuery, cursor string) (*DocumentPage, error) {
	items, next, err := listPage[Document](ctx, c, "/api/documents/v4", q, cursor)
	if err != nil {
		return nil, err
	}
	return &DocumentPage{Items: items, Next: next}, nil
}

// Documents walks every document that matches q, page by page, newest
// first, stopping at the first error (yielded with a nil Document) or
// when the loop breaks. A walk meets every document that existed when it
// began exactly once, whatever is issued meanwhile.
func (c *Client) Documents(ctx context.Context, q ListQuery) iter.Seq2[*Document, error] {
	return walkPages(func(cursor string) ([]Document, string, error) {
		return listPage[Document](ctx, c, "/api/documents/v4", q, cursor)
	})
}

// ReceivedPage is one page of the received documents' listing: newest
// first by the supplier document's issue time, as the read call answers
// them, and the cursor of the next page, empty on the last one.
type ReceivedPage struct {
	Items []ReceivedDocument `json:"items"`
	Next  string             `json:"next"`
}

// ListReceived reads one page of the received documents that match q
// (GET /api/received/v4), with the cursors and rules of ListDocuments: a
// cursor of the documents' listing, of other filters or of another company
// is a 400 on cursor, a company the caller may not see ErrNotFound.
func (c *Client) ListReceived(ctx context.Context, q ListQuery, cursor string) (*ReceivedPage, error) {
	items, next, err := listPage[ReceivedDocument](ctx, c, "/api/received/v4", q, cursor)
	if err != nil {
		return nil, err
	}
	return &ReceivedPage{Items: items, Next: next}, nil
}

// ReceivedDocuments walks every received document that matches q, page by
// page, newest first, as Documents does.
func (c *Client) ReceivedDocuments(ctx context.Context, q ListQuery) iter.Seq2[*ReceivedDocument, error] {
	return walkPages(func(cursor string) ([]ReceivedDocument, string, error) {
		return listPage[ReceivedDocument](ctx, c, "/api/received/v4", q, cursor)
	})
}

// listPage reads one page of the listing at path: its items (never nil)
// and the next page's cursor.
func listPage[T any](ctx context.Context, c *Client, path string, q ListQuery, cursor string) ([]T, string, error) {
	var p struct {
		Items []T    `json:"items"`
		Next  string `json:"next"`
	}
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: path + "?" + q.values(cursor).Encode(), safe: true}, &p); err != nil {
		return nil, "", err
	}
	if p.Items == nil {
		p.Items = []T{}
	}
	return p.Items, p.Next, nil
}

// walkPages yields the items of the pages list reads, from the first
// (cursor "") to the last (no next cursor), stopping at the first error
// (yielded with a nil item) or when the loop breaks.
func walkPages[T any](list func(cursor string) ([]T, string, error)) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		cursor := ""
		for {
			items, next, err := list(cursor)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range items {
				if !yield(&items[i], nil) {
					return
				}
			}
			if next == "" {
				return
			}
			cursor = next
		}
	}
}
