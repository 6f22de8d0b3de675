package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"facturad/hacienda/api"
)

// The documents that reference another one (A.15): a credit note voiding
// an accepted document, a new document re-issuing a rejected one, and a
// payment receipt (REP) of a credit sale. Each call issues a document and
// answers like Send: the new Document (estado 04 once the tax authority
// received it), which then goes through the same lifecycle (WaitFinal).
// Each needs an id_externo, which makes it safe to repeat: the same body
// again answers the same document.

// The bodies of the void and payment calls are the contract's, from
// package hacienda/api. The service refuses a name they do not have.
type (
	// VoidRequest is the body of Void: IDExterno, Razon (3 to 180
	// characters) and the Lineas credited (none: every line with what
	// remains of it).
	VoidRequest = api.VoidRequest
	// VoidLine is one credited line of a VoidRequest: the voided
	// document's NumeroLinea and the Cantidad credited ("1.5").
	VoidLine = api.VoidLine
	// PaymentRequest is the body of Pay: IDExterno, the Monto paid (taxes
	// included, up to 5 decimals, at most the document's SaldoPendiente),
	// the MedioPago code (01 to 07) and the Fecha it was received
	// (2026-11-21; empty is today).
	PaymentRequest = api.PaymentRequest
)

// ReissueRequest is the body of Reissue: the new document's IDExterno, and
// the send body's fields to change, by their JSON names ("receptor",
// "detalleServicio", "fecha_emision"...), each merged over the rejected
// document's request whole: a given detalleServicio replaces every line.
// A value may be anything that encodes to the field's JSON (a
// *hacienda.ReceptorRequest, []hacienda.LineaDetalle, a string). Fields
// may not hold id_externo (set IDExterno) nor clave (the document is
// numbered anew).
type ReissueRequest struct {
	IDExterno string
	Fields    map[string]any
}

// MarshalJSON writes the body: id_externo and the fields.
func (r ReissueRequest) MarshalJSON() ([]byte, error) {
	body := make(map[string]any, len(r.Fields)+1)
	for k, v := range r.Fields {
		if strings.EqualFold(k, "id_externo") {
			return nil, errors.New("facturad: reissue: id_externo is IDExterno, not a field")
		}
		body[k] = v
	}
	body["id_externo"] = r.IDExterno
	return json.Marshal(body)
}

// Void issues a credit note (NC) crediting the accepted document clave
// (POST /api/documents/{clave}/anular/v4): every line with what remains
// of it when req.Lineas is empty (reference code 01 when nothing was
// credited before), else the given quantities (code 06 for goods, 02
// otherwise). A document not accepted, already credited, or a quantity
// beyond what remains is an *Error that is ErrValidation, naming the field
// (clave, lineas[i].cantidad...). A company beyond its monthly quota gets
// ErrQuota, as with Send; a 500 with the stored credit note returns it
// beside its *Error.
func (c *Client) Void(ctx context.Context, clave string, req *VoidRequest) (*Document, error) {
	if req == nil {
		return nil, errors.New("facturad: void: no request")
	}
	return c.derived(ctx, clave, "anular", req, req.IDExterno != "")
}

// Reissue issues a new document from the rejected document clave's
// request with req.Fields merged over it, referencing it (POST
// /api/documents/{clave}/reemitir/v4). fecha_emision is now unless given.
// A document not rejected (estado 02) is an ErrValidation on clave; a
// field the send body does not have is one on its name.
func (c *Client) Reissue(ctx context.Context, clave string, req *ReissueRequest) (*Document, error) {
	if req == nil {
		return nil, errors.New("facturad: reissue: no request")
	}
	return c.derived(ctx, clave, "reemitir", req, req.IDExterno != "")
}

// Pay issues a payment receipt (REP) of the accepted credit sale clave
// (POST /api/documents/{clave}/recibo-pago/v4), whose tax is split pro
// rata over the sale's tax groups. The sale's Document (Document, the
// listing) carries SaldoPendiente, what remains to be paid; a Monto beyond
// it is an ErrValidation on monto, and a sale whose CondicionVenta is not
// 08 or 10 one on condicion_venta.
func (c *Client) Pay(ctx context.Context, clave string, req *PaymentRequest) (*Document, error) {
	if req == nil {
		return nil, errors.New("facturad: pay: no request")
	}
	return c.derived(ctx, clave, "recibo-pago", req, req.IDExterno != "")
}

// derived makes one of the calls above: body encoded, answered with a
// Document.
func (c *Client) derived(ctx context.Context, clave, route string, body any, safe bool) (*Document, error) {
	path := documentPath(clave) + "/" + route + "/v4"
	r, err := jsonRequest(http.MethodPost, path, body, safe)
	if err != nil {
		return nil, err
	}
	return c.document(ctx, r)
}
