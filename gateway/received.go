package gateway

import (
	"context"
	"net/http"

	"facturad/hacienda"
	"facturad/hacienda/msg"
	"facturad/hacienda/pdf"
	"facturad/pipeline"
	"facturad/tenant"
	"facturad/tenant/docview"
	"facturad/tenant/printed"
)

// ReceivedDocuments is the pipeline behind the received-document calls of
// A.11 (*pipeline.Pipeline satisfies it). Only a branch user of the
// receiving company sees its received documents; anything else is
// tenant.ErrNotFound.
type ReceivedDocuments interface {
	// Receive answers a supplier's document with a receiver's message.
	Receive(ctx context.Context, p tenant.Principal, req *hacienda.ReceiveRequest) (pipeline.ReceivedOutcome, error)
	// CheckReceived asks the tax authority about the message and stores
	// its answer.
	CheckReceived(ctx context.Context, p tenant.Principal, clave string) (pipeline.ReceivedOutcome, error)
	// Received returns a stored received document.
	Received(ctx context.Context, p tenant.Principal, clave string) (tenant.ReceivedDocument, error)
}

// ReceiveMaxBody is the receive call's body limit: the supplier's signed
// XML in base64 (a third larger than the XML) with room for a document of
// a thousand long lines.
const ReceiveMaxBody = 4 << 20

// ReceivedRoutes returns the receive, check, read and XML download routes
// of A.11 and the supplier's document printed (as A.12 prints an issued
// one) for Options.Routes. renders bounds the PDF downloads, as in
// DocumentRoutes.
func ReceivedRoutes(d ReceivedDocuments, renders RenderSlots, print printed.Printer) []Route {
	h := receivedHandlers{d: d, renders: renders, print: print}
	return []Route{
		{Method: http.MethodPost, Path: "/api/received/v4", MaxBody: ReceiveMaxBody, Timeout: SendTimeout, Handle: h.receive, Sheds: true},
		{Method: http.MethodPut, Path: "/api/received/{clave}/v4", MaxBody: noBodyLimit, Timeout: CheckTimeout, Handle: h.check},
		{Method: http.MethodGet, Path: "/api/received/{clave}/v4", MaxBody: noBodyLimit, Handle: h.read},
		{Method: http.MethodGet, Path: "/api/received/{clave}/xml/v4", MaxBody: noBodyLimit, Handle: h.xml(msg.XMLSupplier, func(r tenant.ReceivedDocument) []byte { return r.SupplierXML })},
		{Method: http.MethodGet, Path: "/api/received/{clave}/message-xml/v4", MaxBody: noBodyLimit, Handle: h.xml(msg.XMLMessage, func(r tenant.ReceivedDocument) []byte { return r.SignedXML })},
		{Method: http.MethodGet, Path: "/api/received/{clave}/response-xml/v4", MaxBody: noBodyLimit, Handle: h.xml(msg.XMLResponse, func(r tenant.ReceivedDocument) []byte { return r.ResponseXML })},
		{Method: http.MethodGet, Path: "/api/received/{clave}/pdf/v4", MaxBody: noBodyLimit, Timeout: PDFTimeout, Handle: h.printed, Sheds: true},
	}
}

type receivedHandlers struct {
	d       ReceivedDocuments
	renders RenderSlots
	print   printed.Printer
}

func receivedReply(o pipeline.ReceivedOutcome) Reply {
	a := docview.NewReceived(o.Received, o.Estado)
	a.MensajeAPI, a.MensajeAPIKey = o.Message, o.Key
	status := http.StatusOK
	if o.Failed {
		status = http.StatusInternalServerError
	}
	return Reply{Status: status, JSON: a}
}

func (h receivedHandlers) receive(ctx context.Context, r *Request) (Reply, error) {
	req, err := hacienda.DecodeReceiveRequest(r.Body)
	if err != nil {
		return Reply{}, err
	}
	o, err := h.d.Receive(metadataOnly(ctx, false), r.Principal, req)
	if err != nil {
		return Reply{}, err
	}
	return receivedReply(o), nil
}

func (h receivedHandlers) check(ctx context.Context, r *Request) (Reply, error) {
	o, err := h.d.CheckReceived(metadataOnly(ctx, false), r.Principal, r.Params["clave"])
	if err != nil {
		return Reply{}, err
	}
	return receivedReply(o), nil
}

func (h receivedHandlers) read(ctx context.Context, r *Request) (Reply, error) {
	d, err := h.d.Received(metadataOnly(ctx, false), r.Principal, r.Params["clave"])
	if err != nil {
		return Reply{}, err
	}
	return Reply{JSON: docview.StoredReceived(d)}, nil
}

// xml serves one of the XMLs of a received document (which): 404 until it
// exists.
func (h receivedHandlers) xml(which *msg.Entry, pick func(tenant.ReceivedDocument) []byte) Handler {
	return func(ctx context.Context, r *Request) (Reply, error) {
		d, err := h.d.Received(ctx, r.Principal, r.Params["clave"])
		if err != nil {
			return Reply{}, err
		}
		b := pick(d)
		if len(b) == 0 {
			return Reply{}, errNoXML(d.Clave, which)
		}
		return Reply{Body: b, ContentType: contentTypeXML}, nil
	}
}

// printed answers the supplier's document printed (PDF), drawn from its
// signed XML as uploaded, as an issued document is. Its state is the
// supplier's document's, not our message's: a document is only received
// once the tax authority has accepted it (pipeline.Receive asks), so it is
// printed as 01, whatever became of the message. The file is named
// TYPE-CLAVE.pdf.
func (h receivedHandlers) printed(ctx context.Context, r *Request) (Reply, error) {
	formato, err := queryFormato(r.Query)
	if err != nil {
		return Reply{}, err
	}
	d, err := h.d.Received(ctx, r.Principal, r.Params["clave"])
	if err != nil {
		return Reply{}, err
	}
	if len(d.SupplierXML) == 0 {
		return Reply{}, errNoXML(d.Clave, msg.XMLSupplier)
	}
	// Named after the clave, not the consecutivo: every supplier numbers
	// from 00100001010000000001, as the company does its own documents,
	// so a consecutivo would name many received PDFs and an issued one
	// alike. The clave holds the supplier's number and its consecutivo.
	return printedReply(h.renders, d.CompanyID, d.TipoDocumento, d.Clave, "received document "+d.Clave, func() (pdf.Input, error) {
		return h.print.Received(d, nil, formato)
	})
}

// Interface guard: the pipeline is what the received routes call.
var _ ReceivedDocuments = (*pipeline.Pipeline)(nil)
