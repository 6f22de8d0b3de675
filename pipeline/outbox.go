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
	ev := d.Event
	if ev == nil {
		return nil
	}
	if ev.From == d.Estado && !ev.Announce {
		d.Event = nil
		return nil
	}
	view := *d
	view.Event = nil
	payload, err := json.Marshal(docview.StoredDocument(view))
	if err != nil {
		// A document always encodes; an event is never written without
		// its data.
		p.log.Error("encode a document event", "clave", d.Clave, "err", err)
		d.Event = nil
		return nil
	}
	ev.ID, ev.Name, ev.Created, ev.Clave, ev.Payload = newEventID(), tenant.EventDocumentPrefix+tenant.EventState(d.Estado), p.o.Clock(), d.Clave, payload
	ev.Email = nil
	if p.o.Email && d.Estado == tenant.StateAccepted && ev.From != tenant.StateAccepted {
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
		ev.Email = receptorEmails(request)
	}
	return nil
}

// receivedEvent fills in a received document's pending event:
// recibido.<estado of our message>.
func (p *Pipeline) receivedEvent(r *tenant.ReceivedDocument) {
	ev := r.Event
	if ev == nil {
		return
	}
	if ev.From == r.Estado && !ev.Announce {
		r.Event = nil
		return
	}
	view := *r
	view.Event = nil
	payload, err := json.Marshal(docview.StoredReceived(view))
	if err != nil {
		p.log.Error("encode a received document event", "clave", r.Clave, "err", err)
		r.Event = nil
		return
	}
	ev.ID, ev.Name, ev.Created, ev.Clave, ev.Payload = newEventID(), tenant.EventReceivedPrefix+tenant.EventState(r.Estado), p.o.Clock(), r.Clave, payload
	ev.Email = nil
}

// newEventID is a random event id (130 bits), which receivers use to tell
// a repeated delivery.
func newEventID() string { return "evt_" + rand.Text() }

// maxEmails is how many receptor addresses the contract allows.
const maxEmails = 4

// receptorEmails reads the receptor's addresses from the stored request
// (correoElectronico, separated by ";"): the counterparty of the send
// call, the seller of a purchase invoice (08). A document numbered before
// its request was stored has none.
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
