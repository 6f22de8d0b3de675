package gateway

import (
	"context"
	"encoding/json"
	"net/http"

	"facturad/hacienda/api"
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
			Handle: h.void, Audit: tenant.AuditDocumentVoid},
		{Method: http.MethodPost, Path: "/api/documents/{clave}/reemitir/v4", MaxBody: SendMaxBody, Timeout: SendTimeout, Handle: h.reissue},
		{Method: http.MethodPost, Path: "/api/documents/{clave}/recibo-pago/v4", MaxBody: SendMaxBody, Timeout: SendTimeout,
			Handle: h.pay, Audit: tenant.AuditDocumentPayment},
	}
}

type derivedHandlers struct{ d DerivedDocuments }

// decodeObject decodes a JSON object body into v; anything else is a
// validation error on body.
func decodeObject(body []byte, v any) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(body, &probe); err != nil || probe == nil {
		return invalidBody("must be a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return invalidBody("a field has the wrong JSON type: " + err.Error())
	}
	return nil
}

func invalidBody(msg string) error {
	return &apiError{status: http.StatusBadRequest, message: msgValidation, fields: map[string][]string{"body": {msg}}}
}

// sendReply answers a derived document's call as a send is answered.
func sendReply(o pipeline.Outcome, r *Request) Reply {
	rep := outcomeReply(o, queryFlag(r.Query, "includeData"), false)
	a := rep.JSON.(api.Document)
	a.Advertencias = advertencias(o.Advertencias, r.Spanish)
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
