package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"

	"facturad/tenant"
	"facturad/tenant/docview"
)

// The outbox (docs/design/delivery.md): move marks a document with the
// estado it had before its first change since it was read; just before the
// save, documentEvent turns that mark into the event the store writes in
// the save's own transaction, or drops it when the estado stored does not
// change. A save that fails writes nothing; the caller reads the document
// again, without the mark.

// documentEvent fills in d's pending event: documento.<estado>, a fresh
// id, the read answer as of this save, and the receptor's addresses when
// the document becomes accepted and e-mail is on. The addresses are in the
// stored request: a document read without it (a callback reads its state
// alone) is read whole for them.
func (p *Pipeline) documentEvent(ctx context.Context, d *tenant.Document) error {
	d.Event = p.stateEvent(d.Event, d.Estado, d.Clave, tenant.EventDocumentPrefix, "a document", func() any { return docview.StoredDocument(*d) })
	if d.Event != nil && p.o.Email && d.Estado == tenant.StateAccepted && d.Event.From != tenant.StateAccepted {
		request := d.Request
		if len(request) == 0 && d.Clave != "" {
			// The state is not saved without its e-mail: the save fails
			// as a failed store would, and is tried again as one is.
			whole, err := p.o.Store.DocumentByClave(ctx, d.Clave)
			if err != nil {
				return fmt.Errorf("read the accepted document's request for its e-mail: %w", err)
			}
			request = whole.Request
		}
		d.Event.Email = receptorEmails(request)
	}
	return nil
}

// receivedEvent fills in a received document's pending event:
// recibido.<estado of our message>.
func (p *Pipeline) receivedEvent(r *tenant.ReceivedDocument) {
	r.Event = p.stateEvent(r.Event, r.Estado, r.Clave, tenant.EventReceivedPrefix, "a received document", func() any { return docview.StoredReceived(*r) })
}

// stateEvent fills in ev, the pending event of a row saved in estado:
// prefix and the estado name it, a fresh id, the answer view returns as
// its data, no e-mail. It returns nil, dropping the event, when there is
// none to write: none pending, an estado stored that does not change, or
// (never expected) an answer that does not encode; what names the row in
// that error's log.
func (p *Pipeline) stateEvent(ev *tenant.Event, estado tenant.State, clave, prefix, what string, view func() any) *tenant.Event {
	if ev == nil || (ev.From == estado && !ev.Announce) {
		return nil
	}
	payload, err := json.Marshal(view())
	if err != nil {
		// A row always encodes; an event is never written without its
		// data.
		p.log.Error("encode "+what+" event", "clave", clave, "err", err)
		return nil
	}
	ev.ID, ev.Name, ev.Created, ev.Clave, ev.Payload = newEventID(), prefix+tenant.EventState(estado), p.o.Clock(), clave, payload
	ev.Email = nil
	return ev
}

// newEventID is a random event id (130 bits), which receivers use to tell
// a repeated delivery.
func newEventID() string { return "evt_" + rand.Text() }

// maxEmails is how many receptor addresses the contract allows.
const maxEmails = 4

// receptorEmails reads the receptor's addresses from the stored request
// (correoElectronico, separated by ";"): the counterparty of the send
// call, the seller of a purchase invoice (08). A document stored without
// its request has none.
func receptorEmails(request []byte) []string {
	if len(request) == 0 {
		return nil
	}
	var r struct {
		Receptor *struct {
			CorreoElectronico string `json:"correoElectronico"`
		} `json:"receptor"`
	}
	if json.Unmarshal(request, &r) != nil || r.Receptor == nil {
		return nil
	}
	var out []string
	for _, a := range strings.Split(r.Receptor.CorreoElectronico, ";") {
		if a = strings.TrimSpace(a); a != "" && len(out) < maxEmails {
			out = append(out, a)
		}
	}
	return out
}
