package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"facturad/hacienda/msg"
	"facturad/hacienda/recepcion"
	"facturad/tenant"
)

// row is one thing the service submits to the tax authority, of either
// kind: a document the company issued, or the company's message on a
// document it received. Every step of the lifecycle (settling, retrying,
// checking, events) works on it; only what the kinds really differ in
// (the key the tax authority knows them by, what is submitted, where they
// are stored) looks at the kind.
type row struct {
	// Submission is the row's state, inside doc or rec.
	*tenant.Submission
	// Exactly one of doc and rec is set.
	doc *tenant.Document
	rec *tenant.ReceivedDocument
}

func docRow(d *tenant.Document) row { return row{Submission: &d.Submission, doc: d} }

func recRow(r *tenant.ReceivedDocument) row { return row{Submission: &r.Submission, rec: r} }

// key is what the tax authority knows the row by (spec §15.4): a
// document's clave; a message's clave-consecutivoReceptor.
func (w row) key() string {
	if w.rec != nil {
		return w.rec.Clave + "-" + w.rec.Consecutivo
	}
	return w.doc.Clave
}

// clave is the clave the tax authority's answer about the row names: the
// document's, or the received document's for a message.
func (w row) clave() string {
	if w.rec != nil {
		return w.rec.Clave
	}
	return w.doc.Clave
}

// issuerNumber is the identification of the answered document's Emisor,
// which the tax authority's answer names: the company for a document it
// issued (or the seller of a purchase invoice), the supplier for a
// message.
func (w row) issuerNumber() string {
	if w.rec != nil {
		return w.rec.EmisorNumero
	}
	return w.doc.EmisorNumero
}

func (w row) companyID() int64 {
	if w.rec != nil {
		return w.rec.CompanyID
	}
	return w.doc.CompanyID
}

// ambiente is the environment the row was numbered in, whose endpoints
// it is submitted to and asked about.
func (w row) ambiente() string {
	if w.rec != nil {
		return w.rec.Ambiente
	}
	return w.doc.Ambiente
}

func (w row) updatedAt() time.Time {
	if w.rec != nil {
		return w.rec.UpdatedAt
	}
	return w.doc.UpdatedAt
}

// what names the kind in logs and errors.
func (w row) what() string {
	if w.rec != nil {
		return "message"
	}
	return "document"
}

// whatPart is what, for a caller's message in its language.
func (w row) whatPart() msg.Message {
	if w.rec != nil {
		return msg.WhatMessage.With()
	}
	return msg.WhatDocument.With()
}

// logger is log with the row's identity.
func (w row) logger(log *slog.Logger) *slog.Logger {
	if w.rec != nil {
		return log.With("company", w.rec.CompanyID, "branch", w.rec.BranchID, "clave", w.rec.Clave, "consecutivo", w.rec.Consecutivo)
	}
	return log.With("company", w.doc.CompanyID, "branch", w.doc.BranchID, "clave", w.doc.Clave)
}

// submission is what is handed to the tax authority for the row (spec
// §15.3): the document with its parties and, with callbacks on, its
// callback URL; the message with the supplier's clave, the supplier as
// emisor, the company as receptor and its consecutivoReceptor (messages
// are polled: the callback route names a document's clave).
func (p *Pipeline) submission(w row) recepcion.Submission {
	if r := w.rec; r != nil {
		return recepcion.Submission{
			Clave:               r.Clave,
			Fecha:               r.FechaMensaje,
			Emisor:              recepcion.Party{TipoIdentificacion: r.EmisorTipo, NumeroIdentificacion: r.EmisorNumero},
			Receptor:            recepcion.APIParty(r.ReceptorTipo, r.ReceptorNumero),
			ConsecutivoReceptor: r.Consecutivo,
			SignedXML:           r.SignedXML,
		}
	}
	d := w.doc
	return recepcion.Submission{
		Clave:       d.Clave,
		Fecha:       d.FechaEmision,
		Emisor:      recepcion.Party{TipoIdentificacion: d.EmisorTipo, NumeroIdentificacion: d.EmisorNumero},
		Receptor:    recepcion.APIParty(d.ReceptorTipo, d.ReceptorNumero),
		CallbackURL: p.callbackURL(d.Clave),
		SignedXML:   d.SignedXML,
	}
}

// callbacks says the tax authority calls back with the row's verdict.
func (p *Pipeline) callbacks(w row) bool { return p.o.CallbackBase != "" && w.doc != nil }

// errLost is a save that lost its race: the row left the phase it was read
// in (someone else moved it first), so the change was not stored and the
// stored state stands.
var errLost = errors.New("the row changed meanwhile")

// store saves w under a context of its own (a row's state is written
// whatever became of the call that changed it), with the event its change
// makes. signed says the save writes the signed XML, which is written once,
// right after signing: every other save of a document leaves it out (the
// store keeps a part a save does not carry), so that the store is neither
// sent the same bytes again nor compares them with its copy. A lost race
// is errLost, wrapping tenant.ErrConflict.
func (p *Pipeline) store(ctx context.Context, w row, signed bool) error {
	ctx, cancel := p.detached(ctx)
	defer cancel()
	if err := p.event(ctx, w); err != nil {
		return err
	}
	var err error
	switch {
	case w.rec != nil:
		err = p.o.Received.SaveReceived(ctx, w.rec)
	case signed:
		err = p.o.Store.SaveDocument(ctx, w.doc)
	default:
		xml := w.doc.SignedXML
		w.doc.SignedXML = nil
		err = p.o.Store.SaveDocument(ctx, w.doc)
		w.doc.SignedXML = xml
	}
	if errors.Is(err, tenant.ErrConflict) {
		return fmt.Errorf("%w: %w", errLost, err)
	}
	return err
}

// fresh reads w's row again as stored into w; a document without its
// large parts unless whole (a save of it keeps them).
func (p *Pipeline) fresh(ctx context.Context, w row, whole bool) error {
	ctx, cancel := p.detached(ctx)
	defer cancel()
	if r := w.rec; r != nil {
		cur, err := p.o.Received.ReceivedByClave(ctx, r.CompanyID, r.Clave)
		if err != nil {
			return fmt.Errorf("read the message again: %w", err)
		}
		*r = cur
		return nil
	}
	read := p.o.Store.DocumentStateByClave
	if whole {
		read = p.o.Store.DocumentByClave
	}
	cur, err := read(ctx, w.doc.Clave)
	if err != nil {
		return fmt.Errorf("read the document again: %w", err)
	}
	*w.doc = cur
	return nil
}

// record applies change, which records the tax authority's word, to w and
// stores it: the one place a call that heard the tax authority settles a
// lost race. Its word is the newest: when the row moved meanwhile, it is
// read again and the word applied to the fresh copy, unless that holds a
// verdict already (no transition leaves one); whole says the fresh copy
// of a document is read with its large parts, for the caller to answer
// with. A second lost race is returned.
func (p *Pipeline) record(ctx context.Context, w row, whole bool, change func()) error {
	change()
	err := p.store(ctx, w, false)
	if !errors.Is(err, errLost) {
		return err
	}
	w.logger(p.log).InfoContext(ctx, "the "+w.what()+" changed meanwhile; read again")
	if err := p.fresh(ctx, w, whole); err != nil {
		return err
	}
	if w.Phase.Final() {
		return nil
	}
	change()
	return p.store(ctx, w, false)
}
