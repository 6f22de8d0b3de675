package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"facturad/hacienda/api"
)

// The receiver's side (A.11): a company answers each document its
// suppliers issue to it with a receiver's message (accepted, partially
// accepted, rejected), which the service numbers, signs and submits.

// The mensaje values of a receiver's message.
const (
	MensajeAceptado  = "1" // accepted (message type 05)
	MensajeParcial   = "2" // partially accepted (06)
	MensajeRechazado = "3" // rejected (07)
)

// The bodies of the received-document calls are the contract's, from
// package hacienda/api.
type (
	// ReceiveRequest is the body of the receive call: the supplier's signed
	// XML as received, the message (Mensaje*) and its details. Amounts are
	// decimal strings ("3250.13").
	ReceiveRequest = api.ReceiveRequest
	// ReceivedParty is a party of the supplier's document.
	ReceivedParty = api.Party
	// ReceivedDocument is the answer of the received-document calls: the
	// supplier's document and the company's message about it. Estado and
	// the tax authority's fields are the message's; MontoTotalImpuesto is
	// nil when the document has no tax; Final tells whether the verdict on
	// the message is final.
	ReceivedDocument = api.ReceivedDocument
)

func receivedPath(clave string) string { return "/api/received/" + url.PathEscape(clave) }

// Receive answers a supplier's document (POST /api/received/v4) and
// returns it as the service answers once the tax authority received the
// message: estado 04 on success. As with Send, an IDExterno makes the call
// safe to repeat; a 500 with the received document (estado 05 or 00)
// returns it beside the *Error.
func (c *Client) Receive(ctx context.Context, req *ReceiveRequest) (*ReceivedDocument, error) {
	if req == nil {
		return nil, errors.New("facturad: receive: no request")
	}
	r, err := jsonRequest(http.MethodPost, "/api/received/v4", req, req.IDExterno != "")
	if err != nil {
		return nil, err
	}
	return c.received(ctx, r)
}

// CheckReceived asks the tax authority about the company's message on a
// received document, through the service, which stores the answer (PUT
// /api/received/{clave}/v4).
func (c *Client) CheckReceived(ctx context.Context, clave string) (*ReceivedDocument, error) {
	return c.received(ctx, request{method: http.MethodPut, path: receivedPath(clave) + "/v4", safe: true})
}

// Received reads a received document as stored (GET
// /api/received/{clave}/v4).
func (c *Client) Received(ctx context.Context, clave string) (*ReceivedDocument, error) {
	return c.received(ctx, request{method: http.MethodGet, path: receivedPath(clave) + "/v4", safe: true})
}

// ReceivedXML downloads the supplier's XML as uploaded.
func (c *Client) ReceivedXML(ctx context.Context, clave string) ([]byte, error) {
	return c.receivedXML(ctx, clave, "xml")
}

// ReceivedMessageXML downloads the company's signed receiver's message.
func (c *Client) ReceivedMessageXML(ctx context.Context, clave string) ([]byte, error) {
	return c.receivedXML(ctx, clave, "message-xml")
}

// ReceivedResponseXML downloads the tax authority's answer to the
// company's message; ErrNotFound until there is one.
func (c *Client) ReceivedResponseXML(ctx context.Context, clave string) ([]byte, error) {
	return c.receivedXML(ctx, clave, "response-xml")
}

// ReceivedPDF downloads the supplier's document printed (GET
// /api/received/{clave}/pdf/v4), drawn from its XML as uploaded like PDF
// draws an issued one, in the supplier's document's state (01: only an
// accepted document is received). ErrNotFound for an unknown clave or
// another company's received document.
func (c *Client) ReceivedPDF(ctx context.Context, clave string) ([]byte, error) {
	a, err := c.do(ctx, request{method: http.MethodGet, path: receivedPath(clave) + "/pdf/v4", safe: true, accept: "application/pdf"})
	return a.body, err
}

func (c *Client) receivedXML(ctx context.Context, clave, which string) ([]byte, error) {
	a, err := c.do(ctx, request{method: http.MethodGet, path: receivedPath(clave) + "/" + which + "/v4", safe: true, accept: "application/xml"})
	return a.body, err
}

// WaitReceivedFinal checks a received document until the verdict on the
// company's message is final, like WaitFinal.
func (c *Client) WaitReceivedFinal(ctx context.Context, clave string, every time.Duration) (*ReceivedDocument, error) {
	check := func() (*ReceivedDocument, error) { return c.CheckReceived(ctx, clave) }
	return waitFinal(ctx, every, "the message about "+clave, check, func(ae *Error) bool { return ae.Received != nil })
}

func (c *Client) received(ctx context.Context, r request) (*ReceivedDocument, error) {
	var d ReceivedDocument
	err := c.callJSON(ctx, r, &d)
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) && ae.Received != nil {
			return ae.Received, err
		}
		return nil, err
	}
	return &d, nil
}
