package client

import (
	"context"
	"iter"
	"net/http"

	"facturad/hacienda/api"
)

// The listings' query and pages (A.10), from package hacienda/api.
type (
	// ListQuery selects the documents a listing returns, issued
	// (ListDocuments) or received (ListReceived). Every field is
	// optional; zero means no filter.
	ListQuery = api.ListQuery
	// DocumentPage is one page of the documents' listing: its documents,
	// newest first, as the read call answers them without XML, and the
	// cursor of the next page, empty on the last one.
	DocumentPage = api.Page[Document]
	// ReceivedPage is one page of the received documents' listing: newest
	// first by the supplier document's issue time, as the read call
	// answers them, and the cursor of the next page, empty on the last
	// one.
	ReceivedPage = api.Page[ReceivedDocument]
)

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
	var p api.Page[T]
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: path + "?" + q.Values(cursor).Encode(), safe: true}, &p); err != nil {
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
