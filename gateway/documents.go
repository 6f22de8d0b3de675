package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/hacienda/pdf"
	"facturad/hacienda/registry"
	"facturad/pipeline"
	"facturad/tenant"
	"facturad/tenant/docview"
	"facturad/tenant/printed"
)

// Documents is the document pipeline behind the document calls of A.5
// (*pipeline.Pipeline satisfies it). Every method receives the
// authenticated principal and enforces who may see what: another tenant's
// document is tenant.ErrNotFound.
type Documents interface {
	// Send issues a document from a decoded send request.
	Send(ctx context.Context, p tenant.Principal, req *hacienda.SendDocumentRequest) (pipeline.Outcome, error)
	// Check asks the tax authority about a document and stores its answer.
	Check(ctx context.Context, p tenant.Principal, clave string) (pipeline.Outcome, error)
	// Document returns a stored document.
	Document(ctx context.Context, p tenant.Principal, clave string) (tenant.Document, error)
}

// Limits of the document routes.
const (
	// SendMaxBody is the send call's body limit: 1 MiB holds a document of
	// the schema's 1,000 lines with long descriptions, several times over.
	SendMaxBody = 1 << 20
	// SendTimeout bounds a send call: a wait for a turn in the branch's
	// lane, the work, and the submission (whose own limit is the
	// pipeline's SubmitTimeout).
	SendTimeout = 60 * time.Second
	// CheckTimeout bounds a check call.
	CheckTimeout = 30 * time.Second
	// PDFTimeout bounds a PDF download: a read and a render, which takes
	// milliseconds for an ordinary document and well under a second for
	// one of the schema's 1,000 lines.
	PDFTimeout = 30 * time.Second
)

// DocumentRoutes returns the send, check, read and XML download routes of
// A.5 and the PDF of A.12 for Options.Routes. The calculate call is not
// among them. renders bounds the PDF downloads (nil: unbounded, for
// tests); the service shares one bound among every route and the
// background work that draws PDFs. print makes what a PDF shows beside
// the XML; its zero value marks a document by its own environment and
// prints no logo or notes.
func DocumentRoutes(d Documents, renders RenderSlots, print printed.Printer) []Route {
	h := documentHandlers{d: d, renders: renders, print: print}
	return []Route{
		{Method: http.MethodPost, Path: "/api/documents/v4", MaxBody: SendMaxBody, Timeout: SendTimeout, Handle: h.send, Sheds: true},
		{Method: http.MethodPut, Path: "/api/documents/{clave}/v4", MaxBody: noBodyLimit, Timeout: CheckTimeout, Handle: h.check},
		{Method: http.MethodGet, Path: "/api/documents/{clave}/v4", MaxBody: noBodyLimit, Handle: h.read},
		{Method: http.MethodGet, Path: "/api/documents/{clave}/xml/v4", MaxBody: noBodyLimit, Handle: h.signedXML},
		{Method: http.MethodGet, Path: "/api/documents/{clave}/response-xml/v4", MaxBody: noBodyLimit, Handle: h.responseXML},
		{Method: http.MethodGet, Path: "/api/documents/{clave}/pdf/v4", MaxBody: noBodyLimit, Timeout: PDFTimeout, Handle: h.printed, Sheds: true},
	}
}

type documentHandlers struct {
	d       Documents
	renders RenderSlots
	print   printed.Printer
}

func outcomeReply(o pipeline.Outcome, withXML, withResponse bool) Reply {
	a := docview.NewDocument(o.Document, o.Estado, withXML, withResponse)
	a.MensajeAPI, a.MensajeAPIKey = o.Message, o.Key
	status := http.StatusOK
	if o.Failed {
		status = http.StatusInternalServerError
	}
	return Reply{Status: status, JSON: a}
}

func (h documentHandlers) send(ctx context.Context, r *Request) (Reply, error) {
	req, err := hacienda.DecodeSendRequest(r.Body)
	if err != nil {
		return Reply{}, err
	}
	// A replay of an archived document answers from its metadata unless
	// the XML is asked for.
	withXML := queryFlag(r.Query, "includeData")
	o, err := h.d.Send(metadataOnly(ctx, withXML), r.Principal, req)
	if err != nil {
		return Reply{}, err
	}
	rep := outcomeReply(o, withXML, false)
	a := rep.JSON.(api.Document)
	a.Advertencias = advertencias(o.Advertencias, r.Lang)
	rep.JSON = a
	rep.Header = quotaHeader(o.Quota)
	return rep, nil
}

// advertencias writes the registry checks' warnings, each "<field>: <what
// was found>", in the caller's language.
func advertencias(fs []registry.Finding, lang msg.Lang) []string {
	if len(fs) == 0 {
		return nil
	}
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.Field+": "+f.Msg.In(lang))
	}
	return out
}

func (h documentHandlers) check(ctx context.Context, r *Request) (Reply, error) {
	withXML, withResponse := queryFlag(r.Query, "includeXml"), queryFlag(r.Query, "includeResponseXml")
	o, err := h.d.Check(metadataOnly(ctx, withXML || withResponse), r.Principal, r.Params["clave"])
	if err != nil {
		return Reply{}, err
	}
	return outcomeReply(o, withXML, withResponse), nil
}

// metadataOnly marks ctx, for an answer that shows no XML (!withXML), as
// needing no part of an archived document: its metadata answers while the
// archive cannot be read (A.15).
func metadataOnly(ctx context.Context, withXML bool) context.Context {
	if withXML {
		return ctx
	}
	return tenant.WithoutArchivedParts(ctx)
}

func (h documentHandlers) read(ctx context.Context, r *Request) (Reply, error) {
	withXML, withResponse := queryFlag(r.Query, "includeXml"), queryFlag(r.Query, "includeResponseXml")
	d, err := h.d.Document(metadataOnly(ctx, withXML || withResponse), r.Principal, r.Params["clave"])
	if err != nil {
		return Reply{}, err
	}
	a := docview.NewDocument(d, "", withXML, withResponse)
	a.MensajeAPI = d.LastError
	return Reply{JSON: a}, nil
}

const contentTypeXML = "application/xml; charset=utf-8"

// errNoXML answers the XML which of the document clave, which exists but
// has no such XML yet: 404 naming what is missing.
func errNoXML(clave string, which *msg.Entry) error {
	return &apiError{status: http.StatusNotFound, msg: msg.XMLNotYet.With(echoed(clave), which.With())}
}

func (h documentHandlers) signedXML(ctx context.Context, r *Request) (Reply, error) {
	d, err := h.d.Document(ctx, r.Principal, r.Params["clave"])
	if err != nil {
		return Reply{}, err
	}
	if len(d.SignedXML) == 0 {
		return Reply{}, errNoXML(d.Clave, msg.XMLSigned)
	}
	return Reply{Body: d.SignedXML, ContentType: contentTypeXML}, nil
}

func (h documentHandlers) responseXML(ctx context.Context, r *Request) (Reply, error) {
	d, err := h.d.Document(ctx, r.Principal, r.Params["clave"])
	if err != nil {
		return Reply{}, err
	}
	if len(d.ResponseXML) == 0 {
		return Reply{}, errNoXML(d.Clave, msg.XMLResponse)
	}
	return Reply{Body: d.ResponseXML, ContentType: contentTypeXML}, nil
}

const contentTypePDF = "application/pdf"

// errNotSigned answers the PDF of a document that has no signed XML yet:
// it exists and is the caller's, so it is not a 404, but there is nothing
// to print until it is signed (estado 00 with an expired certificate, for
// instance).
var errNotSigned = &apiError{status: http.StatusConflict, msg: msg.NotSigned.With()}

// printed answers the printed representation (PDF) of a stored document,
// drawn from its signed XML with its current state, in the layout the
// query's formato asks for (carta or ticket; by default the ticket for a
// Tiquete Electrónico, letter paper otherwise); the tax authority's
// message is printed on a rejected document or one in error.
func (h documentHandlers) printed(ctx context.Context, r *Request) (Reply, error) {
	formato, err := queryFormato(r.Query)
	if err != nil {
		return Reply{}, err
	}
	d, err := h.d.Document(ctx, r.Principal, r.Params["clave"])
	if err != nil {
		return Reply{}, err
	}
	if len(d.SignedXML) == 0 {
		return Reply{}, errNotSigned
	}
	return printedReply(h.renders, d.CompanyID, d.Tipo, d.Consecutivo, "document "+d.Clave, func() (pdf.Input, error) {
		return h.print.Issued(ctx, d, nil, formato)
	})
}

// queryFormato reads the PDF routes' layout: formato=carta or ticket
// (case aside; the name matched without regard to case), none for the
// document type's own.
func queryFormato(q url.Values) (pdf.Formato, error) {
	vs := queryValues(q, "formato")
	if len(vs) == 0 {
		return "", nil
	}
	f, err := pdf.ParseFormato(vs[len(vs)-1])
	if err != nil {
		return "", invalid("formato", msg.PDFFormato.With())
	}
	return f, nil
}

// RenderSlots bounds the PDF downloads (*pdf.Limiter satisfies it).
type RenderSlots interface {
	// TryRender takes a slot for a render of a document of companyID, or
	// refuses at once with an error that answers 503 or 429 and
	// Retry-After; release frees the slot.
	TryRender(companyID int64) (release func(), err error)
}

// printedReply draws the Input input makes of a document of the company
// companyID and answers the PDF, named TYPE-NAME.pdf (an issued document's
// consecutivo, a received one's clave); what names the document in an
// error. The issued documents and the received ones are printed by it
// alike, within renders' bounds: past them the answer is 503 (the
// process's) or 429 (the company's), with Retry-After.
func printedReply(renders RenderSlots, companyID int64, tipo, name, what string, input func() (pdf.Input, error)) (Reply, error) {
	if renders != nil {
		release, err := renders.TryRender(companyID)
		if err != nil {
			return Reply{}, err
		}
		defer release()
	}
	in, err := input()
	if err != nil {
		return Reply{}, fmt.Errorf("print %s: %w", what, err)
	}
	var b bytes.Buffer
	if err := pdf.Render(&b, in); err != nil {
		return Reply{}, fmt.Errorf("print %s: %w", what, err)
	}
	file := hacienda.DocumentType(tipo).Abbrev() + "-" + name + ".pdf"
	return Reply{Body: b.Bytes(), ContentType: contentTypePDF, Disposition: `inline; filename="` + file + `"`}, nil
}

// queryFlag reads a boolean query flag; the name matches without regard to
// case (existing clients write includeXml and includexml) and true is
// "true" or "1", in any case.
func queryFlag(q url.Values, name string) bool {
	for _, v := range queryValues(q, name) {
		if strings.EqualFold(v, "true") || v == "1" {
			return true
		}
	}
	return false
}

// queryValues returns the values of a query parameter whose name matches
// name ignoring case: other spellings first, in the order of their names,
// and the exact spelling last, so that the result does not depend on map
// order and the last value of the exact spelling is the last one.
func queryValues(q url.Values, name string) []string {
	keys := make([]string, 0, len(q))
	for k := range q {
		if k != name && strings.EqualFold(k, name) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		out = append(out, q[k]...)
	}
	return append(out, q[name]...)
}

// Interface guard: the pipeline is what the document routes call.
var _ Documents = (*pipeline.Pipeline)(nil)

// The pipeline's refusals carry their own status (503 with Retry-After),
// which fail maps.
var (
	_ statusError     = (*pipeline.OverloadError)(nil)
	_ retryAfterError = (*pipeline.OverloadError)(nil)
)

// Callbacks takes the tax authority's callbacks (*pipeline.Pipeline
// satisfies it): a wrong token or an unknown clave is
// pipeline.ErrBadCallback.
type Callbacks interface {
	Callback(ctx context.Context, clave, token string, body []byte) error
}

// CallbackMaxBody bounds a callback's body, which anyone may post: the
// status JSON with a base64 MensajeHacienda fits (a signed answer is a few
// KiB); a larger one is refused, and the safety poll still settles its
// document.
const CallbackMaxBody = 64 << 10

// CallbackRoute is the route the tax authority posts a document's final
// status to (spec §15.5). It is public: the token in its path, issued with
// the document's submission, is what admits a caller, and of the body only
// a verdict the tax authority signed is believed (pipeline.Callback);
// otherwise the service asks the tax authority itself. A wrong token or an
// unknown clave is 404; a failure asking the tax authority is an error, so
// that the callback is sent again.
func CallbackRoute(c Callbacks) Route {
	return Route{
		Method: http.MethodPost, Path: pipeline.CallbackPath, MaxBody: CallbackMaxBody, Timeout: CheckTimeout, Public: true,
		Handle: func(ctx context.Context, r *Request) (Reply, error) {
			err := c.Callback(ctx, r.Params["clave"], r.Params["token"], r.Body)
			if errors.Is(err, pipeline.ErrBadCallback) {
				return Reply{}, tenant.ErrNotFound
			}
			if err != nil {
				return Reply{}, err
			}
			return Reply{JSON: map[string]string{"mensaje_api": "ok"}}, nil
		},
	}
}
