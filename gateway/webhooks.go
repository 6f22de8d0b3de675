package gateway

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/tenant"
)

// Webhooks is the service behind the webhook calls of A.12
// (*tenant.Service satisfies it): every method checks that the principal
// may act on the company (another tenant's is tenant.ErrNotFound).
type Webhooks interface {
	CreateWebhook(ctx context.Context, p tenant.Principal, companyID int64, in tenant.WebhookInput) (tenant.Webhook, string, error)
	Webhooks(ctx context.Context, p tenant.Principal, companyID int64) ([]tenant.Webhook, error)
	DeleteWebhook(ctx context.Context, p tenant.Principal, companyID, id int64) error
	WebhookDeliveries(ctx context.Context, p tenant.Principal, companyID, id int64, page tenant.DeliveryPage) ([]tenant.Delivery, error)
}

// DocumentFinder decides who may see a document and returns it
// (*pipeline.Pipeline).
type DocumentFinder interface {
	Document(ctx context.Context, p tenant.Principal, clave string) (tenant.Document, error)
}

// DocumentEmails reads and re-queues a document's e-mails
// (*tenant.Service); RequeueEmails decides who may.
type DocumentEmails interface {
	DocumentEmails(ctx context.Context, documentID int64) ([]tenant.EmailDelivery, error)
	RequeueEmails(ctx context.Context, p tenant.Principal, documentID int64, at time.Time) (int, error)
}

// WebhookRoutes returns the webhook calls of A.12 and the delivery log.
func WebhookRoutes(w Webhooks) []Route {
	h := webhookHandlers{w: w}
	return []Route{
		{Method: http.MethodPost, Path: "/api/companies/{companyId}/webhooks/v4", Handle: h.create, Audit: tenant.AuditWebhookCreate},
		{Method: http.MethodGet, Path: "/api/companies/{companyId}/webhooks/v4", MaxBody: noBodyLimit, Handle: h.list},
		{Method: http.MethodDelete, Path: "/api/companies/{companyId}/webhooks/{webhookId}/v4", MaxBody: noBodyLimit, Handle: h.delete, Audit: tenant.AuditWebhookDelete},
		{Method: http.MethodGet, Path: "/api/companies/{companyId}/webhooks/{webhookId}/deliveries/v4", MaxBody: noBodyLimit, Handle: h.deliveries},
	}
}

// EmailRoutes returns GET /api/documents/{clave}/email/v4, the
// document's e-mails to its receptor and what the mail server said, and
// POST on the same path, which an admin uses to send its failed e-mails
// again once the cause (the mail server, its credentials) is fixed. The
// POST is the operator's: anyone else gets 404, as for a document they
// cannot see.
func EmailRoutes(docs DocumentFinder, emails DocumentEmails) []Route {
	list := func(ctx context.Context, doc tenant.Document) (Reply, error) {
		es, err := emails.DocumentEmails(ctx, doc.ID)
		if err != nil {
			return Reply{}, err
		}
		out := make([]api.DocumentEmail, len(es))
		for i, e := range es {
			out[i] = newEmailAnswer(e)
		}
		return Reply{JSON: out}, nil
	}
	return []Route{
		{Method: http.MethodGet, Path: "/api/documents/{clave}/email/v4", MaxBody: noBodyLimit,
			Handle: func(ctx context.Context, r *Request) (Reply, error) {
				doc, err := docs.Document(ctx, r.Principal, r.Params["clave"])
				if err != nil {
					return Reply{}, err
				}
				return list(ctx, doc)
			}},
		{Method: http.MethodPost, Path: "/api/documents/{clave}/email/v4", MaxBody: noBodyLimit, Audit: tenant.AuditEmailRequeue,
			Handle: func(ctx context.Context, r *Request) (Reply, error) {
				doc, err := docs.Document(ctx, r.Principal, r.Params["clave"])
				if err != nil {
					return Reply{}, err
				}
				if _, err := emails.RequeueEmails(ctx, r.Principal, doc.ID, time.Now()); err != nil {
					return Reply{}, err
				}
				r.Changed(doc.CompanyID, "")
				return list(ctx, doc)
			}},
	}
}

type webhookHandlers struct{ w Webhooks }

func (h webhookHandlers) create(ctx context.Context, r *Request) (Reply, error) {
	companyID, err := r.pathID("companyId", "CompaniaId")
	if err != nil {
		return Reply{}, err
	}
	in, err := api.DecodeWebhookRequest(r.Body)
	if err != nil {
		return Reply{}, err
	}
	w, secret, err := h.w.CreateWebhook(ctx, r.Principal, companyID, tenant.WebhookInput{URL: in.URL, Eventos: in.Eventos})
	if err != nil {
		return Reply{}, err
	}
	a := newWebhookAnswer(w)
	return Reply{JSON: api.WebhookCreated{ID: a.ID, URL: a.URL, Eventos: a.Eventos, Secreto: secret, CreatedAt: a.CreatedAt}}, nil
}

func (h webhookHandlers) list(ctx context.Context, r *Request) (Reply, error) {
	companyID, err := r.pathID("companyId", "CompaniaId")
	if err != nil {
		return Reply{}, err
	}
	ws, err := h.w.Webhooks(ctx, r.Principal, companyID)
	if err != nil {
		return Reply{}, err
	}
	out := make([]api.Webhook, len(ws))
	for i, w := range ws {
		out[i] = newWebhookAnswer(w)
	}
	return Reply{JSON: out}, nil
}

func (h webhookHandlers) delete(ctx context.Context, r *Request) (Reply, error) {
	companyID, err := r.pathID("companyId", "CompaniaId")
	if err != nil {
		return Reply{}, err
	}
	id, err := r.pathID(paramWebhookID, "id")
	if err != nil {
		return Reply{}, err
	}
	if err := h.w.DeleteWebhook(ctx, r.Principal, companyID, id); err != nil {
		return Reply{}, err
	}
	return Reply{Status: http.StatusNoContent, Body: []byte{}, ContentType: "application/json; charset=utf-8"}, nil
}

func (h webhookHandlers) deliveries(ctx context.Context, r *Request) (Reply, error) {
	companyID, err := r.pathID("companyId", "CompaniaId")
	if err != nil {
		return Reply{}, err
	}
	id, err := r.pathID(paramWebhookID, "id")
	if err != nil {
		return Reply{}, err
	}
	page := tenant.DeliveryPage{Limit: 50}
	if v := r.Query.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > tenant.DeliveryLogLimit {
			return Reply{}, invalid("limit", msg.LimitRange.With(tenant.DeliveryLogLimit))
		}
		page.Limit = n
	}
	if v := r.Query.Get("cursor"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return Reply{}, invalid("cursor", msg.CursorPage.With())
		}
		page.Before = n
	}
	want := page.Limit
	page.Limit++ // one more tells whether another page follows
	ds, err := h.w.WebhookDeliveries(ctx, r.Principal, companyID, id, page)
	if err != nil {
		return Reply{}, err
	}
	a := api.Page[api.Delivery]{Items: []api.Delivery{}}
	for i, d := range ds {
		if i == want {
			a.Next = strconv.FormatInt(ds[i-1].ID, 10)
			break
		}
		a.Items = append(a.Items, newDeliveryAnswer(d))
	}
	return Reply{JSON: a}, nil
}
