package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"facturad/tenant"
	"facturad/tenant/docview"
)

// The outbox (docs/design/delivery.md): move marks a row as changed since
// it was read; just before the save, event turns the mark into the event
// the store writes in the save's own transaction, or drops it when the
// estado stored is the one read (the estado of the phase read,
// Submission.From). A save that fails writes nothing; the caller reads the
// row again, without the mark.

// event fills in w's pending event: documento.<estado> or, for a message,
// recibido.<estado of our message>, a fresh id and the read answer as of
// this save. It drops the event when there is none to write: none
// pending, an estado stored that does not change (unless the transition
// announces it), or (never expected) an answer that does not encode. A
// document that becomes accepted with e-mail on carries the receptor's
// addresses too; they are in the stored request, and a document read
// without it (a callback reads its state alone) is read whole for them.
func (p *Pipeline) event(ctx context.Context, w row) error {
	ev := w.Event
	if ev == nil || (w.From.Estado() == w.Estado && !ev.Announce) {
		w.Event = nil
		return nil
	}
	prefix, what, view := tenant.EventDocumentPrefix, "a document", func() any { return docview.StoredDocument(*w.doc) }
	if w.rec != nil {
		prefix, what, view = tenant.EventReceivedPrefix, "a received document", func() any { return docview.StoredReceived(*w.rec) }
	}
	payload, err := json.Marshal(view())
	if err != nil {
		// A row always encodes; an event is never written without its
		// data.
		p.log.Error("encode "+what+" event", "key", w.key(), "err", err)
		w.Event = nil
		return nil
	}
	ev.ID, ev.Name, ev.Created, ev.Clave, ev.Payload = tenant.NewEventID(), prefix+tenant.EventState(w.Estado), p.o.Clock(), w.clave(), payload
	ev.Email = nil
	if d := w.doc; d != nil && p.o.Email && d.Estado == tenant.StateAccepted && d.From.Estado() != tenant.StateAccepted {
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
