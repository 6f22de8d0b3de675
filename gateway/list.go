package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"facturad/hacienda"
	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/tenant"
	"facturad/tenant/docview"
)

// The listing calls (A.10): GET /api/documents/v4 over the documents a
// company issued, and GET /api/received/v4 over those it received, take
// the same query and answer the same shape. This file holds what they
// share: listQuery and parseListQuery read the query, listCursors makes and
// checks the opaque cursors, and listRoute serves one listing given how to
// fetch a page and render its items.

// DefaultListLimit is a page's size when the caller gives no limit.
const DefaultListLimit = 50

// listQuery is a listing call's query, checked: the company asked for (0:
// none named) and the page (Filter; its CompanyID and After are set once
// the company is known and the cursor checked).
type listQuery struct {
	CompaniaID int64
	Filter     tenant.ListQuery
	// Cursor is the cursor as given, checked against the company and the
	// filters by listCursors.open.
	Cursor string
}

// listSpec is what varies between the listings.
type listSpec struct {
	// Kind names the listing in its cursors ("documents", "received"): a
	// cursor of one listing is refused by the other.
	Kind string
	// Tipos are the tipo_documento codes the listing takes.
	Tipos []string
	// Parse, when set, reads the listing's query instead of
	// parseListQuery (a listing of other things than documents, with
	// query parameters of its own); what it puts in the filter binds the
	// cursors as the documents' filters do.
	Parse func(q url.Values) (listQuery, error)
}

// documentTipos are the types of the documents a company issues (A.5).
var documentTipos = hacienda.TypeCodes(func(t hacienda.TypeInfo) bool { return !t.IsReceiverMessage() })

// receivedTipos are the types of the suppliers' documents a company
// answers, and so receives (FE, ND, NC, FEE: hacienda.CheckAnswerable).
var receivedTipos = hacienda.TypeCodes(func(t hacienda.TypeInfo) bool { return t.Answerable })

// queryReader reads a listing's query parameters one by one, collecting
// what is wrong with each under its own name: parameter names match
// without regard to case, as the other calls' flags do, and unknown
// parameters are ignored.
type queryReader struct {
	q    url.Values
	errs map[string][]msg.Message
}

func newQueryReader(q url.Values) *queryReader {
	return &queryReader{q: q, errs: map[string][]msg.Message{}}
}

// bad records what is wrong with parameter name.
func (r *queryReader) bad(name string, m msg.Message) { r.errs[name] = append(r.errs[name], m) }

// one returns the parameter's value, trimmed; given twice (with two
// values) is an error rather than a guess at which one was meant.
func (r *queryReader) one(name string) string {
	vs := queryValues(r.q, name)
	if len(vs) == 0 {
		return ""
	}
	v := strings.TrimSpace(vs[0])
	for _, w := range vs[1:] {
		if strings.TrimSpace(w) != v {
			r.bad(name, msg.ParamRepeated.With())
			return ""
		}
	}
	return v
}

// page reads limit (DefaultListLimit when absent) into f and returns the
// cursor as given.
func (r *queryReader) page(f *tenant.ListQuery) (cursor string) {
	f.Limit = DefaultListLimit
	if v := r.one(api.ParamLimit); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > tenant.MaxListLimit {
			r.bad(api.ParamLimit, msg.LimitRange.With(tenant.MaxListLimit))
		}
		f.Limit = n
	}
	return r.one(api.ParamCursor)
}

// period reads desde and hasta (issue date-times, Costa Rica local; a
// date alone for hasta means up to its end) into f, and refuses a hasta
// before desde: the listings' period, and the export's. A year outside
// 0001–9999 is refused on the parameter that holds it; a period reaching
// the ends of that calendar is the stores' to clamp (tenant.ListQuery.Period:
// hasta=9999-12-31 ends in year 10000 in UTC).
func (r *queryReader) period(f *tenant.ListQuery) {
	bad, one := r.bad, r.one
	if v := one(api.ParamDesde); v != "" {
		t, problem := parseQueryTime(v)
		if problem != nil {
			bad(api.ParamDesde, msg.DesdeFormat.With(problem.With()))
		}
		f.Desde = t
	}
	if v := one(api.ParamHasta); v != "" {
		t, problem := parseQueryTime(v)
		if problem != nil {
			bad(api.ParamHasta, msg.HastaFormat.With(problem.With()))
		}
		if problem == nil && !t.IsZero() && len(v) == len(time.DateOnly) {
			// A date alone means up to its end: the last microsecond
			// of the day, still in its year (9999-12-31 stays in 9999).
			t = t.Add(24*time.Hour - time.Microsecond)
		}
		f.Hasta = t
	}
	if !f.Desde.IsZero() && !f.Hasta.IsZero() && f.Hasta.Before(f.Desde) {
		bad(api.ParamHasta, msg.HastaBeforeDesde.With())
	}
}

// parseQueryTime reads a date-time query parameter (hacienda.ParseDateTime:
// Costa Rica local unless an offset is given; the contract's
// 0001-01-01 is "not set", the zero time). problem, when not nil, says
// what is wrong, for the caller to end with an example: the years are 0001
// to 9999, as written.
func parseQueryTime(v string) (t time.Time, problem *msg.Entry) {
	t, err := hacienda.ParseDateTime(v)
	digits := len(v) - len(strings.TrimLeft(v, "0123456789"))
	switch {
	case err != nil && digits > 4:
		return time.Time{}, msg.DateYears
	case err != nil:
		return time.Time{}, msg.DateLocal
	case !t.IsZero() && (t.Year() < 1 || t.Year() > 9999):
		return time.Time{}, msg.DateYears
	}
	return t, nil
}

// err is the 400 naming every bad parameter, nil when there is none.
func (r *queryReader) err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return invalidFields(r.errs)
}

// parseListQuery reads a listing's query. Every bad parameter is reported,
// each under its own name, in one 400.
func parseListQuery(q url.Values, spec listSpec) (listQuery, error) {
	var out listQuery
	r := newQueryReader(q)
	bad, one := r.bad, r.one

	if v := one(api.ParamCompaniaID); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			bad(api.ParamCompaniaID, msg.PositiveInt.With())
		}
		out.CompaniaID = id
	}
	f := &out.Filter
	r.period(f)
	if v := one(api.ParamEstado); v != "" {
		if tenant.State(v).Humanized() == "" {
			bad(api.ParamEstado, msg.OneOf.With("00, 01, 02, 03, 04, 05"))
		}
		f.Estado = tenant.State(v)
	}
	if v := one(api.ParamTipo); v != "" {
		if !slices.Contains(spec.Tipos, v) {
			bad(api.ParamTipo, msg.OneOf.With(strings.Join(spec.Tipos, ", ")))
		}
		f.Tipo = v
	}
	if v := one(api.ParamIDExterno); v != "" {
		if !utf8.ValidString(v) || utf8.RuneCountInString(v) > 100 {
			bad(api.ParamIDExterno, msg.MaxLength.With(100))
		}
		f.IDExterno = v
	}
	if v := one(api.ParamReceptor); v != "" {
		if !isDigits(v) || len(v) < 9 || len(v) > 12 {
			bad(api.ParamReceptor, msg.IdentificationNumber.With())
		}
		f.Receptor = v
	}
	out.Cursor = r.page(f)
	if err := r.err(); err != nil {
		return listQuery{}, err
	}
	return out, nil
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// listCursors makes and checks the listings' cursors. A cursor holds the
// place of the last row of a page (its issue time and id) and a MAC over
// that place, the listing, the company and the filters, under a key of the
// service's (derived from the master key, the same on every replica): a
// cursor that was altered, or that belongs to another listing, company or
// set of filters, is refused with a 400 on cursor instead of silently
// paging through something else. The limit is not bound: a caller may
// change its page size between pages.
type listCursors struct{ key []byte }

const (
	cursorVersion = 1
	cursorMACSize = 16
	cursorSize    = 1 + 8 + 8 + cursorMACSize
)

var errBadCursor = invalid(api.ParamCursor, msg.CursorListing.With())

// mac returns the cursor's MAC over everything it is bound to.
func (c listCursors) mac(kind string, companyID int64, f tenant.ListQuery, atMicro, id int64) []byte {
	m := hmac.New(sha256.New, c.key)
	var b []byte
	b = append(b, "facturad list cursor v1\x00"...)
	for _, s := range []string{kind, strconv.FormatInt(companyID, 10), timeField(f.Desde), timeField(f.Hasta),
		string(f.Estado), f.Tipo, f.IDExterno, f.Receptor} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(atMicro))
	b = binary.BigEndian.AppendUint64(b, uint64(id))
	m.Write(b)
	return m.Sum(nil)[:cursorMACSize]
}

func timeField(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return strconv.FormatInt(t.UnixMicro(), 10)
}

// make returns the cursor of the page that follows the row k.
func (c listCursors) make(kind string, companyID int64, f tenant.ListQuery, k tenant.ListKey) string {
	at := k.At.UnixMicro()
	b := make([]byte, 0, cursorSize)
	b = append(b, cursorVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(at))
	b = binary.BigEndian.AppendUint64(b, uint64(k.ID))
	b = append(b, c.mac(kind, companyID, f, at, k.ID)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// open checks a cursor against the listing, the company and the filters,
// and returns the row it follows.
func (c listCursors) open(kind string, companyID int64, f tenant.ListQuery, cursor string) (*tenant.ListKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) != cursorSize || b[0] != cursorVersion {
		return nil, errBadCursor
	}
	at, id := int64(binary.BigEndian.Uint64(b[1:9])), int64(binary.BigEndian.Uint64(b[9:17]))
	if !hmac.Equal(b[17:], c.mac(kind, companyID, f, at, id)) || id <= 0 {
		return nil, errBadCursor
	}
	return &tenant.ListKey{At: time.UnixMicro(at).UTC(), ID: id}, nil
}

// listFetch returns up to q.Limit rows of the listing of the company p
// lists when it names companiaID (0: none): the listing's service call,
// which checks who may see what.
type listFetch[T any] func(ctx context.Context, p tenant.Principal, companiaID int64, q tenant.ListQuery) ([]T, error)

// listRoute serves one listing: it reads the query, checks the cursor,
// asks fetch for one row more than the page (to learn whether another page
// follows), renders the items with item and answers them with the next
// cursor. key returns a row's place in the listing; cursorKey keys the
// cursors (ErrShortCursorKey when shorter than 32 bytes).
func listRoute[T, A any](path string, spec listSpec, cursorKey []byte, fetch listFetch[T], key func(T) tenant.ListKey, item func(T) A) (Route, error) {
	if len(cursorKey) < 32 {
		return Route{}, ErrShortCursorKey
	}
	cursors := listCursors{key: slices.Clone(cursorKey)}
	return Route{
		Method: http.MethodGet, Path: path, MaxBody: noBodyLimit,
		Handle: func(ctx context.Context, r *Request) (Reply, error) {
			parse := spec.Parse
			if parse == nil {
				parse = func(q url.Values) (listQuery, error) { return parseListQuery(q, spec) }
			}
			lq, err := parse(r.Query)
			if err != nil {
				return Reply{}, err
			}
			// The cursor is bound to the company named, or to a branch
			// user's own; fetch decides whether the caller may see it.
			scope := lq.CompaniaID
			if scope == 0 && r.Principal.Role == tenant.RoleBranch {
				scope = r.Principal.CompanyID
			}
			q := lq.Filter
			page := q.Limit
			if lq.Cursor != "" {
				if q.After, err = cursors.open(spec.Kind, scope, q, lq.Cursor); err != nil {
					return Reply{}, err
				}
			}
			q.Limit = page + 1
			rows, err := fetch(ctx, r.Principal, lq.CompaniaID, q)
			if err != nil {
				return Reply{}, err
			}
			var a api.Page[A]
			if len(rows) > page {
				rows = rows[:page]
				a.Next = cursors.make(spec.Kind, scope, q, key(rows[len(rows)-1]))
			}
			a.Items = make([]A, len(rows))
			for i, row := range rows {
				a.Items[i] = item(row)
			}
			return Reply{JSON: a}, nil
		},
	}, nil
}

// DocumentLister lists the documents of a company (*pipeline.Pipeline
// satisfies it): see pipeline.ListDocuments. A company the principal may
// not see is tenant.ErrNotFound; an admin or reseller that names none is a
// validation error on companiaId.
type DocumentLister interface {
	ListDocuments(ctx context.Context, p tenant.Principal, companiaID int64, q tenant.ListQuery) ([]tenant.Document, error)
}

// ErrShortCursorKey refuses a cursor key too short to key an HMAC safely.
var ErrShortCursorKey = errors.New("gateway: the list cursor key must be at least 32 bytes")

// DocumentListRoute returns the listing of issued documents (A.10),
// GET /api/documents/v4, for Options.Routes. cursorKey keys the cursors'
// MAC: at least 32 bytes, the same on every replica (derive it from the
// master key), so that any replica takes a cursor another one made.
func DocumentListRoute(l DocumentLister, cursorKey []byte) (Route, error) {
	fetch := func(ctx context.Context, p tenant.Principal, companiaID int64, q tenant.ListQuery) ([]tenant.Document, error) {
		return l.ListDocuments(ctx, p, companiaID, q)
	}
	return listRoute("/api/documents/v4", listSpec{Kind: "documents", Tipos: documentTipos}, cursorKey, fetch,
		tenant.Document.ListKey, docview.StoredDocument)
}

// ReceivedLister lists the documents a company received (*pipeline.Pipeline
// satisfies it): see pipeline.ListReceived. Who may see which company is
// decided as for DocumentLister.
type ReceivedLister interface {
	ListReceived(ctx context.Context, p tenant.Principal, companiaID int64, q tenant.ListQuery) ([]tenant.ReceivedDocument, error)
}

// ReceivedListRoute returns the listing of received documents,
// GET /api/received/v4, for Options.Routes: A.10's query and answer over
// the received documents, each item the received document as the read call
// answers it. tipo_documento is the supplier document's type, receptor the
// supplier's identification (the counterparty, as for issued documents),
// estado the state of the company's message. cursorKey is as for
// DocumentListRoute; the cursors of one listing are refused by the other.
func ReceivedListRoute(l ReceivedLister, cursorKey []byte) (Route, error) {
	fetch := func(ctx context.Context, p tenant.Principal, companiaID int64, q tenant.ListQuery) ([]tenant.ReceivedDocument, error) {
		return l.ListReceived(ctx, p, companiaID, q)
	}
	return listRoute("/api/received/v4", listSpec{Kind: "received", Tipos: receivedTipos}, cursorKey, fetch,
		tenant.ReceivedDocument.ListKey, docview.StoredReceived)
}
