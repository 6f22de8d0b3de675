package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/tenant"
)

// The audit log (A.14). A route whose Audit names an action records every
// answer it gives in 2xx, after its handler returns and before the answer
// is written: who called (the principal), the request id, the company the
// handler changed, the action and the names of the request's own fields.
// One place for every route, so that a route added later records by
// setting Route.Audit (docs/design/audit.md).

// auditTimeout bounds recording one entry. The request's own deadline may
// be spent by then: the change is made and its record is owed.
const auditTimeout = 5 * time.Second

// Changed tells the audit log which company the call changed and, when
// action is not empty, which change it made instead of its route's Audit
// (a path that serves two calls, such as POST on the branches path, which
// creates a company from a multipart form). A handler of an audited route
// calls it when the company is not its path's {companyId} (a company just
// created, a document's company); otherwise the path's is recorded.
func (r *Request) Changed(companyID int64, action string) {
	r.changed = &auditNote{companyID: companyID, action: action}
}

// auditNote is what a handler said with Request.Changed.
type auditNote struct {
	companyID int64
	action    string
}

// recordChange records the change call c made, which its handler answered
// in 2xx. A failure to record does not undo the change nor turn its answer
// into an error (the caller would retry a change that was made): it is
// logged at ERROR with the request id and everything the entry held, and
// counted in facturad_audit_record_failures_total, for the operator to
// restore the entry from the log.
func (s *Server) recordChange(c *call, r *Request) {
	e := tenant.AuditEntry{
		UserID: c.p.UserID, Username: c.p.Username, RequestID: c.reqID,
		Action: c.rt.audit, Fields: requestFields(r.ContentType, r.Body),
	}
	switch {
	case r.changed != nil:
		e.CompanyID = r.changed.companyID
		if r.changed.action != "" {
			e.Action = r.changed.action
		}
	default:
		id, err := strconv.ParseInt(r.Params[paramCompanyID], 10, 64)
		if err != nil || id <= 0 {
			// A route that changes no company of its path and did not
			// name one: recorded in the platform's log, where the admin
			// sees it, and said, since it is a route to fix.
			s.log.Error("audit: an audited route did not name the company it changed; recorded as the platform's",
				"method", c.rt.method, "route", c.rt.pattern, "request_id", c.reqID)
			id = 0
		}
		e.CompanyID = id
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), auditTimeout)
	defer cancel()
	if err := s.o.Tenants.RecordAudit(ctx, e); err != nil {
		s.metrics.auditFailures.Inc()
		s.log.Error("audit: the change was made but its audit entry could not be recorded",
			"request_id", e.RequestID, "action", e.Action, "company", e.CompanyID,
			"user_id", e.UserID, "user", e.Username, "fields", e.Fields, "err", err)
	}
}

// requestFields returns the names of a request body's own fields, never
// their values: a multipart form's field and file names (the certificate
// is its field name, Certificado), a URL-encoded form's names, a JSON
// object's top-level keys. A body that is none of these, or empty, names
// none. Names are as the caller spelt them; tenant.RecordAudit sorts,
// deduplicates and bounds them.
func requestFields(contentType string, body []byte) []string {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	switch {
	case isMultipart(contentType):
		return multipartFields(contentType, body)
	case isURLEncoded(contentType):
		q, _ := url.ParseQuery(string(body)) // what could be read of it
		return slices.Collect(func(yield func(string) bool) {
			for k := range q {
				if !yield(k) {
					return
				}
			}
		})
	}
	return jsonFields(body)
}

// multipartFields reads the part names of a multipart form, skipping
// their contents, up to the first part it cannot read.
func multipartFields(contentType string, body []byte) []string {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil || params["boundary"] == "" {
		return nil
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var names []string
	for len(names) <= tenant.MaxAuditFields*4 {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		if n := p.FormName(); n != "" {
			names = append(names, n)
		}
		_ = p.Close()
	}
	return names
}

// jsonFields returns the keys of a JSON object, without decoding their
// values; anything but an object names none.
func jsonFields(body []byte) []string {
	d := json.NewDecoder(bytes.NewReader(body))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var names []string
	for d.More() && len(names) <= tenant.MaxAuditFields*4 {
		t, err := d.Token()
		if err != nil {
			break
		}
		k, ok := t.(string)
		if !ok {
			break
		}
		names = append(names, k)
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			break
		}
	}
	return names
}

// AuditLog reads a company's audit log (*tenant.Service satisfies it):
// ErrNotFound for a company the principal does not manage.
type AuditLog interface {
	AuditLog(ctx context.Context, p tenant.Principal, companyID int64, q tenant.AuditQuery) ([]tenant.AuditEntry, error)
}

// AuditRoute returns GET /api/companies/{companyId}/auditoria/v4 for
// Options.Routes: a company's audit log (A.14), newest first, in the pages
// of the listings (A.10: limit, cursor; {"items", "next"}) with their
// cursors, bound to the company. The admin, the company's reseller and
// its users read it; company 0 is the platform's log, the admin's.
// cursorKey is as for DocumentListRoute.
func AuditRoute(l AuditLog, cursorKey []byte) (Route, error) {
	if len(cursorKey) < 32 {
		return Route{}, ErrShortCursorKey
	}
	cursors := listCursors{key: slices.Clone(cursorKey)}
	const kind = "audit"
	return Route{
		Method: http.MethodGet, Path: pathAudit, MaxBody: noBodyLimit,
		Handle: func(ctx context.Context, r *Request) (Reply, error) {
			companyID, err := strconv.ParseInt(r.Params[paramCompanyID], 10, 64)
			if err != nil || companyID < 0 {
				return Reply{}, invalid("CompaniaId", msg.CompaniaIDAudit.With())
			}
			page, err := parsePageQuery(r.Query)
			if err != nil {
				return Reply{}, err
			}
			limit, cursor := page.Filter.Limit, page.Cursor
			// The listings' cursors, bound to this log and company, with
			// no filter.
			var none tenant.ListQuery
			q := tenant.AuditQuery{Limit: limit + 1}
			if cursor != "" {
				if q.After, err = cursors.open(kind, companyID, none, cursor); err != nil {
					return Reply{}, err
				}
			}
			rows, err := l.AuditLog(ctx, r.Principal, companyID, q)
			if err != nil {
				return Reply{}, err
			}
			a := api.Page[api.AuditEntry]{Items: []api.AuditEntry{}}
			if len(rows) > limit {
				rows = rows[:limit]
				a.Next = cursors.make(kind, companyID, none, rows[len(rows)-1].ListKey())
			}
			for _, e := range rows {
				a.Items = append(a.Items, newAuditAnswer(e))
			}
			return Reply{JSON: a}, nil
		},
	}, nil
}

const pathAudit = "/api/companies/{companyId}/auditoria/v4"

func newAuditAnswer(e tenant.AuditEntry) api.AuditEntry {
	fields := e.Fields
	if fields == nil {
		fields = []string{}
	}
	return api.AuditEntry{
		ID: e.ID, Cuando: api.LocalTime(e.At), Usuario: api.AuditUser{ID: e.UserID, Nombre: e.Username},
		RequestID: e.RequestID, CompaniaID: e.CompanyID, Accion: e.Action, Campos: fields,
	}
}

// Interface guard: the tenant service reads the log.
var _ AuditLog = (*tenant.Service)(nil)
