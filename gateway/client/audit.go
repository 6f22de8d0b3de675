package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"facturad/hacienda/api"
)

// The audit log (A.14), from package hacienda/api.
type (
	// AuditEntry is one change recorded in a company's audit log: when,
	// by whom (Usuario), under which request id (the X-Request-Id of the
	// call that made it), which change (Accion) and the names of the
	// fields its request carried (Campos), never their values.
	AuditEntry = api.AuditEntry
	// AuditUser is who made a change: an API user, or a command of the
	// operator's (ID 0).
	AuditUser = api.AuditUser
	// AuditPage is one page of a company's audit log, newest first, and
	// the cursor of the next page, empty on the last one.
	AuditPage = api.Page[AuditEntry]
)

// AuditLog reads one page of a company's audit log
// (GET /api/companies/{id}/auditoria/v4), newest first. limit is the
// page's size, 1 to 500 (0: the service's default, 50); cursor is empty
// for the first page, then the Next of the page before (a cursor of
// another company or listing is a 400 on cursor). The admin, the company's
// reseller and the company's own users may read it; anyone else gets
// ErrNotFound. Company 0 is the platform's log, an admin's.
func (c *Client) AuditLog(ctx context.Context, companyID int64, limit int, cursor string) (*AuditPage, error) {
	items, next, err := auditPage(ctx, c, companyID, limit, cursor)
	if err != nil {
		return nil, err
	}
	return &AuditPage{Items: items, Next: next}, nil
}

// AuditEntries walks a company's audit log, page by page, newest first,
// stopping at the first error (yielded with a nil entry) or when the loop
// breaks.
func (c *Client) AuditEntries(ctx context.Context, companyID int64) iter.Seq2[*AuditEntry, error] {
	return walkPages(func(cursor string) ([]AuditEntry, string, error) {
		return auditPage(ctx, c, companyID, 0, cursor)
	})
}

func auditPage(ctx context.Context, c *Client, companyID int64, limit int, cursor string) ([]AuditEntry, string, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set(api.ParamLimit, strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set(api.ParamCursor, cursor)
	}
	path := companyPath(companyID) + "/auditoria/v4"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var p AuditPage
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: path, safe: true}, &p); err != nil {
		return nil, "", err
	}
	if p.Items == nil {
		p.Items = []AuditEntry{}
	}
	return p.Items, p.Next, nil
}
