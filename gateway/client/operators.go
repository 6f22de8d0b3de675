package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"facturad/hacienda/api"
)

// Tenant events and the operators' lists (A.14).

// The tenant events a webhook may ask for (CreateWebhook): what the
// service tells a company about itself, each occasion once. Their
// WebhookEvent.Data is a TenantEventData, not a Document.
const (
	EventCertificateExpiring = api.EventCertificadoPorVencer // 30 days or fewer left, and again at 7
	EventCertificateExpired  = api.EventCertificadoVencido
	EventCredentialsRefused  = api.EventCredencialesRechazadas // once per credential stop
	EventDocumentsStuck      = api.EventDocumentosDetenidos    // unsettled an hour after numbering
)

// The operators' lists' items and pages, from package hacienda/api.
type (
	// TenantEventData is a tenant event's data: the company, and its
	// certificate's expiry or the claves of the documents stuck.
	TenantEventData = api.TenantEventData
	// ExpiringCertificate is a company whose certificate expires before
	// the date asked.
	ExpiringCertificate = api.ExpiringCertificate
	// ExpiringCertificatePage is a page of ExpiringCertificates.
	ExpiringCertificatePage = api.Page[ExpiringCertificate]
	// StuckDocument is a document still unsettled an hour after it was
	// numbered, with its company.
	StuckDocument = api.StuckDocument
	// StuckDocumentPage is a page of StuckDocuments.
	StuckDocumentPage = api.Page[StuckDocument]
)

// ExpiringCertificates reads one page of the active companies whose
// certificate expires before the start (Costa Rica midnight) of day
// (GET /api/admin/certificados/v4?vencenAntesDe=), by expiry: every
// company for an admin, its own for a reseller; anyone else gets
// ErrNotFound. limit 0 is the service's default; cursor "" the first page,
// then each page's Next, with the same day.
func (c *Client) ExpiringCertificates(ctx context.Context, day time.Time, limit int, cursor string) (*ExpiringCertificatePage, error) {
	items, next, err := operatorPage[ExpiringCertificate](ctx, c, "/api/admin/certificados/v4", certificateQuery(day), limit, cursor)
	if err != nil {
		return nil, err
	}
	return &ExpiringCertificatePage{Items: items, Next: next}, nil
}

// AllExpiringCertificates walks every page of ExpiringCertificates.
func (c *Client) AllExpiringCertificates(ctx context.Context, day time.Time) iter.Seq2[*ExpiringCertificate, error] {
	return walkPages(func(cursor string) ([]ExpiringCertificate, string, error) {
		return operatorPage[ExpiringCertificate](ctx, c, "/api/admin/certificados/v4", certificateQuery(day), 0, cursor)
	})
}

// StuckDocuments reads one page of the documents still unsettled an hour
// after they were numbered (GET /api/admin/documentos-detenidos/v4), the
// oldest first, with their companies; who sees what as for
// ExpiringCertificates.
func (c *Client) StuckDocuments(ctx context.Context, limit int, cursor string) (*StuckDocumentPage, error) {
	items, next, err := operatorPage[StuckDocument](ctx, c, "/api/admin/documentos-detenidos/v4", url.Values{}, limit, cursor)
	if err != nil {
		return nil, err
	}
	return &StuckDocumentPage{Items: items, Next: next}, nil
}

// AllStuckDocuments walks every page of StuckDocuments.
func (c *Client) AllStuckDocuments(ctx context.Context) iter.Seq2[*StuckDocument, error] {
	return walkPages(func(cursor string) ([]StuckDocument, string, error) {
		return operatorPage[StuckDocument](ctx, c, "/api/admin/documentos-detenidos/v4", url.Values{}, 0, cursor)
	})
}

// certificateQuery is the certificates' list's date as the call takes it.
func certificateQuery(day time.Time) url.Values {
	return url.Values{api.ParamVencenAntesDe: {day.Format(time.DateOnly)}}
}

// operatorPage reads one page of an operators' list at path with query q.
func operatorPage[T any](ctx context.Context, c *Client, path string, q url.Values, limit int, cursor string) ([]T, string, error) {
	if limit > 0 {
		q.Set(api.ParamLimit, strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set(api.ParamCursor, cursor)
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var p api.Page[T]
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: path, safe: true}, &p); err != nil {
		return nil, "", err
	}
	if p.Items == nil {
		p.Items = []T{}
	}
	return p.Items, p.Next, nil
}
