package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"facturad/hacienda"
	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/hacienda/xmltext"
	"facturad/pipeline"
	"facturad/tenant"
)

// DerivedDocuments issues the documents that reference another one (A.15;
// *pipeline.Pipeline satisfies it): a credit note voiding an accepted
// document, a new document re-issuing a rejected one, a payment receipt of
// a credit sale. Each answers like a send.
type DerivedDocuments interface {
	Void(ctx context.Context, p tenant.Principal, clave string, req *pipeline.VoidRequest) (pipeline.Outcome, error)
	Reissue(ctx context.Context, p tenant.Principal, clave string, body []byte) (pipeline.Outcome, error)
	Pay(ctx context.Context, p tenant.Principal, clave string, req *pipeline.PaymentRequest) (pipeline.Outcome, error)
}

var _ DerivedDocuments = (*pipeline.Pipeline)(nil)

// DerivedRoutes returns the void, re-issue and payment-receipt routes of
// A.15 for Options.Routes.
//
// The rule for the audit log (docs/design/credits-and-payments.md): a call
// that changes the standing of a document already issued is recorded,
// with the document's company; a call that only issues a document is not,
// the document being its own record. A void credits the accepted document
// (documento.anular) and a payment lowers its balance (documento.pagar), so
// both are recorded; a re-issue leaves the rejected document as it was (a
// rejected document stands for nothing) and issues a new one, like a send,
// so it is not.
func DerivedRoutes(d DerivedDocuments) []Route {
	h := derivedHandlers{d: d}
	return []Route{
		{Method: http.MethodPost, Path: "/api/documents/{clave}/anular/v4", MaxBody: SendMaxBody, Timeout: SendTimeout,
			Handle: h.void, Audit: tenant.AuditDocumentVoid, Sheds: true},
		{Method: http.MethodPost, Path: "/api/documents/{clave}/reemitir/v4", MaxBody: SendMaxBody, Timeout: SendTimeout, Handle: h.reissue, Sheds: true},
		{Method: http.MethodPost, Path: "/api/documents/{clave}/recibo-pago/v4", MaxBody: SendMaxBody, Timeout: SendTimeout,
			Handle: h.pay, Audit: tenant.AuditDocumentPayment, Sheds: true},
	}
}

type derivedHandlers struct{ d DerivedDocuments }

// decodeObject decodes a JSON object body into v, a pointer to the
// body's struct (api.VoidRequest, api.PaymentRequest). Every offending
// field is reported at once by its path, as the send reports its own
// (lineas[1].cantidad): a name the body's type does not have (matched
// without regard to case, as the decoder matches) or gives twice
// (hacienda.CheckNames), and a value of a JSON type its field does not
// take. A misspelt field is refused rather than left out: a void whose
// "lineas" were misspelt would credit every line. Anything but a JSON
// object is an error on body.
func decodeObject(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return invalidBody(msg.JSONObject.With())
	}
	if problem := xmltext.CheckJSON(body); !problem.IsZero() {
		return invalidBody(problem)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil || dec.More() {
		return invalidBody(msg.NotValidJSON.With())
	}
	errs := map[string][]msg.Message{}
	checkJSONValue(tree, reflect.TypeOf(v).Elem(), "", errs)
	if err := hacienda.CheckNames(body, reflect.TypeOf(v).Elem()); err != nil {
		for p, msgs := range err.(*hacienda.ValidationError).Fields {
			errs[p] = append(errs[p], msgs...)
		}
	}
	if len(errs) > 0 {
		return invalidFields(errs)
	}
	if err := json.Unmarshal(body, v); err != nil {
		// Not expected once the walk found nothing.
		return invalidBody(msg.Unreadable.With(err.Error()))
	}
	return nil
}

var flexStringType = reflect.TypeFor[hacienda.FlexString]()

// checkJSONValue reports in errs, by path, the values of the decoded JSON
// value x of a JSON type the Go type t does not take; names t does not
// have are hacienda.CheckNames's to report. null is taken everywhere (the
// field's zero value).
func checkJSONValue(x any, t reflect.Type, path string, errs map[string][]msg.Message) {
	if x == nil {
		return
	}
	add := func(e *msg.Entry) {
		p := path
		if p == "" {
			p = "body"
		}
		errs[p] = append(errs[p], e.With())
	}
	switch {
	case t == flexStringType:
		switch x.(type) {
		case string, json.Number:
		default:
			add(msg.StringOrNumber)
		}
	case t.Kind() == reflect.String:
		if _, ok := x.(string); !ok {
			add(msg.NotAString)
		}
	case t.Kind() == reflect.Int:
		n, ok := x.(json.Number)
		if _, err := strconv.ParseInt(string(n), 10, 32); !ok || err != nil {
			add(msg.NotAnInteger)
		}
	case t.Kind() == reflect.Slice:
		a, ok := x.([]any)
		if !ok {
			add(msg.NotAnArray)
			return
		}
		for i, e := range a {
			checkJSONValue(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), errs)
		}
	case t.Kind() == reflect.Struct:
		m, ok := x.(map[string]any)
		if !ok {
			add(msg.NotAnObject)
			return
		}
		for k, e := range m {
			f, ok := jsonField(t, k)
			if !ok {
				continue
			}
			p := f.Name
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" {
				p = name
			}
			if path != "" {
				p = path + "." + p
			}
			checkJSONValue(e, f.Type, p, errs)
		}
	}
}

// jsonField is the field of struct type t that a JSON object's name k
// decodes into, matched as encoding/json matches: its tag's name, without
// regard to case.
func jsonField(t reflect.Type, k string) (reflect.StructField, bool) {
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.EqualFold(name, k) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func invalidBody(m msg.Message) error {
	return invalid("body", m)
}

// reissueFields checks a re-issue body's names as the send checks its
// own, at every depth (hacienda.CheckNames): a name the send does not
// read changes nothing, so it is refused on its own path rather than
// re-issuing the rejected document unchanged. The values are the send's
// to read (its decoder reports their types and their rules, with every
// path).
func reissueFields(body []byte) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return invalidBody(msg.JSONObject.With())
	}
	return hacienda.CheckNames(body, reflect.TypeFor[hacienda.SendDocumentRequest]())
}

// sendReply answers a derived document's call as a send is answered.
func sendReply(o pipeline.Outcome, r *Request) Reply {
	rep := outcomeReply(o, queryFlag(r.Query, "includeData"), false)
	a := rep.JSON.(api.Document)
	a.Advertencias = advertencias(o.Advertencias, r.Lang)
	rep.JSON = a
	rep.Header = quotaHeader(o.Quota)
	return rep
}

func (h derivedHandlers) void(ctx context.Context, r *Request) (Reply, error) {
	var req pipeline.VoidRequest
	if err := decodeObject(r.Body, &req); err != nil {
		return Reply{}, err
	}
	o, err := h.d.Void(ctx, r.Principal, r.Params["clave"], &req)
	if err != nil {
		return Reply{}, err
	}
	r.Changed(o.Document.CompanyID, "")
	return sendReply(o, r), nil
}

func (h derivedHandlers) reissue(ctx context.Context, r *Request) (Reply, error) {
	if err := reissueFields(r.Body); err != nil {
		return Reply{}, err
	}
	o, err := h.d.Reissue(ctx, r.Principal, r.Params["clave"], r.Body)
	if err != nil {
		return Reply{}, err
	}
	return sendReply(o, r), nil
}

func (h derivedHandlers) pay(ctx context.Context, r *Request) (Reply, error) {
	var req pipeline.PaymentRequest
	if err := decodeObject(r.Body, &req); err != nil {
		return Reply{}, err
	}
	o, err := h.d.Pay(ctx, r.Principal, r.Params["clave"], &req)
	if err != nil {
		return Reply{}, err
	}
	r.Changed(o.Document.CompanyID, "")
	return sendReply(o, r), nil
}
