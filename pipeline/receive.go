package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/msg"
	"facturad/tenant"
)

// The receiver's side (A.11): a company uploads a document a supplier
// issued to it and answers it with a receiver's message (MensajeReceptor),
// which the service numbers (types 05, 06, 07), signs, stores, submits and
// tracks. The message moves through the same lifecycle as a document
// (lifecycle.go), as a row of its own kind (row.go).

// ReceivedTerminal is the terminal a receiver's message is numbered under:
// A.11 names none, so every message of a branch takes the first one, as a
// document sent without a terminal does.
const ReceivedTerminal = "00001"

// receivedStore is the store of received documents, or an error when the
// configured store keeps none.
func (p *Pipeline) receivedStore() (tenant.ReceivedStore, error) {
	if p.o.Received == nil {
		return nil, errors.New("pipeline: the store keeps no received documents")
	}
	return p.o.Received, nil
}

// Receive runs the receive call (A.11) for the branch user pr: it reads
// the supplier's document, verifies its signature, checks that it is
// addressed to the company, not answered before, and accepted by the tax
// authority (asked with the company's credentials), then numbers the
// message (05, 06 or 07), builds, signs, stores and submits it, and
// answers with its state. A repeat of an id_externo with the same body
// replays the stored message; with another body it is a 400 on id_externo.
func (p *Pipeline) Receive(ctx context.Context, pr tenant.Principal, req *hacienda.ReceiveRequest) (ReceivedOutcome, error) {
	if err := p.running(); err != nil {
		p.metrics.refused.WithLabelValues("stopping").Inc()
		return ReceivedOutcome{}, err
	}
	if pr.Role != tenant.RoleBranch || pr.CompanyID == 0 || pr.BranchID == 0 {
		// Like documents, messages are numbered by a branch.
		return ReceivedOutcome{}, fmt.Errorf("receive as %s: %w", pr.Role, tenant.ErrNotFound)
	}
	if req == nil {
		return ReceivedOutcome{}, invalidField("body", msg.ReceivedRequired.With())
	}
	rs, err := p.receivedStore()
	if err != nil {
		return ReceivedOutcome{}, err
	}
	canon, err := json.Marshal(req)
	if err != nil {
		return ReceivedOutcome{}, fmt.Errorf("encode the request: %w", err)
	}
	sum := sha256.Sum256(canon)
	hash := sum[:]

	is, err := p.o.Issuers.Issuer(ctx, pr.CompanyID, pr.BranchID)
	if err != nil {
		return ReceivedOutcome{}, fmt.Errorf("company: %w", err)
	}
	log := p.log.With("company", is.Company.ID, "branch", is.Branch.ID)

	if id := req.IDExterno; id != "" {
		prev, err := rs.ReceivedByExternalID(ctx, is.Branch.ID, id)
		switch {
		case err == nil:
			return p.repeatReceived(ctx, is, req, prev, hash, log)
		case errors.Is(err, tenant.ErrNotFound):
		default:
			return ReceivedOutcome{}, fmt.Errorf("look up id_externo: %w", err)
		}
	}

	start := time.Now()
	sp, err := p.supplierDocument(req, is.Company)
	p.metrics.observe(stageValidate, start)
	if err != nil {
		return ReceivedOutcome{}, err
	}
	// Counted here, once per document received: a repeat or the
	// background worker checks it again without counting.
	p.metrics.supplier.WithLabelValues(sp.trust).Inc()
	doc, m := sp.doc, sp.msg
	log = log.With("clave", doc.Clave)
	if prev, err := rs.ReceivedByClave(ctx, is.Company.ID, doc.Clave); err == nil {
		return ReceivedOutcome{}, alreadyAnswered(prev)
	} else if !errors.Is(err, tenant.ErrNotFound) {
		return ReceivedOutcome{}, fmt.Errorf("look up the clave: %w", err)
	}
	if err := sendable(is.Company); err != nil {
		return ReceivedOutcome{}, err
	}
	if err := p.supplierAccepted(ctx, is.Company, doc.Clave, m.NumeroCedulaEmisor); err != nil {
		return ReceivedOutcome{}, err
	}
	tipo := hacienda.ReceptorMessageType(m.Mensaje)
	if _, err := hacienda.NewConsecutivo(is.Branch.Sucursal, ReceivedTerminal, tipo, 1); err != nil {
		return ReceivedOutcome{}, fmt.Errorf("branch %s: %w", is.Branch.Sucursal, err)
	}

	start = time.Now()
	release, err := p.lanes.acquire(ctx, is.Company.ID, is.Branch.ID)
	if err != nil {
		return ReceivedOutcome{}, p.laneRefusal(err)
	}
	defer release()
	p.metrics.observe(stageQueue, start)
	ctx, cancel := p.workCtx(ctx)
	defer cancel()

	// Number: the row is stored (00) with its number from here on, with
	// the answer it is made from, so that the background worker can
	// finish it should this call die before it is signed, and with its
	// tax breakdown for the IVA summary.
	answer, err := answerRequest(req)
	if err != nil {
		return ReceivedOutcome{}, fmt.Errorf("encode the answer: %w", err)
	}
	now := p.o.Clock()
	r := &tenant.ReceivedDocument{
		CompanyID:        is.Company.ID,
		BranchID:         is.Branch.ID,
		Ambiente:         is.Company.Ambiente,
		IDExterno:        req.IDExterno,
		RequestHash:      hash,
		Request:          answer,
		Clave:            doc.Clave,
		TipoDocumento:    string(doc.Type),
		EmisorTipo:       doc.Emisor.Identificacion.Tipo,
		EmisorNumero:     doc.Emisor.Identificacion.Numero,
		EmisorNombre:     doc.Emisor.Nombre,
		ReceptorTipo:     doc.Receptor.Identificacion.Tipo,
		ReceptorNumero:   doc.Receptor.Identificacion.Numero,
		FechaEmision:     doc.FechaEmision,
		TotalImpuesto:    m.MontoTotalImpuesto.String(),
		TotalComprobante: m.TotalFactura.String(),
		SupplierXML:      req.XML,
		FirmaPolitica:    sp.policy,
		Mensaje:          fmt.Sprint(m.Mensaje),
		Tipo:             tipo,
		Terminal:         ReceivedTerminal,
		FechaMensaje:     now.In(hacienda.CostaRica).Truncate(time.Second),
		Submission:       tenant.Submission{Phase: tenant.PhaseNumbered, Estado: tenant.StatePending, NextAttemptAt: now.Add(p.o.InFlightGrace)},
		IVABreakdown:     storedBreakdown(ctx, tenant.ReceivedBreakdown(doc, m), log),
	}
	start = time.Now()
	err = rs.ReserveReceived(ctx, r)
	p.metrics.observe(stageNumber, start)
	if errors.Is(err, tenant.ErrConflict) {
		return ReceivedOutcome{}, p.receiveConflict(ctx, rs, r)
	}
	if err != nil {
		return ReceivedOutcome{}, fmt.Errorf("reserve a number: %w", err)
	}
	faultAt(FaultNumbered)
	out, err := p.issueReceived(ctx, is, r, doc, m, log, true)
	if err == nil {
		p.metrics.outcomes.WithLabelValues(opReceive, string(out.Estado)).Inc()
	}
	return out, err
}

// answerRequest is what a message keeps of its request to be finished
// later (tenant.ReceivedDocument.Request): the request without the
// supplier's XML, which the row holds already.
func answerRequest(req *hacienda.ReceiveRequest) ([]byte, error) {
	return json.Marshal(&hacienda.ReceiveRequest{Answer: req.Answer, IDExterno: req.IDExterno})
}

// issueReceived gives a numbered message its consecutivo, builds it and
// signs, stores and submits it (signAndSubmit). The receive call, a
// repeat of it and the background worker finishing an interrupted message
// all go through it; call says it is a receive call (the crash test's
// fault points stop only those).
func (p *Pipeline) issueReceived(ctx context.Context, is tenant.Issuer, r *tenant.ReceivedDocument, doc *hacienda.Document, m *hacienda.MensajeReceptor, log *slog.Logger, call bool) (ReceivedOutcome, error) {
	var fault func(string)
	if call {
		fault = faultAt
	}
	w := recRow(r)
	c, err := hacienda.NewConsecutivo(is.Branch.Sucursal, r.Terminal, r.Tipo, r.Numero)
	if err != nil {
		p.stop(ctx, w, "the consecutivo could not be built: "+err.Error())
		return ReceivedOutcome{}, fmt.Errorf("consecutivo: %w", err)
	}
	r.Consecutivo = c.String()
	m.NumeroConsecutivoReceptor, m.FechaEmisionDoc = r.Consecutivo, r.FechaMensaje
	log = log.With("consecutivo", r.Consecutivo)

	start := time.Now()
	unsigned, err := hacienda.MarshalMensajeReceptor(m)
	p.metrics.observe(stageBuild, start)
	if err != nil {
		p.stop(ctx, w, "the message could not be built")
		return ReceivedOutcome{}, fmt.Errorf("build the message: %w", err)
	}
	if fault != nil {
		fault(FaultBuilt)
	}
	res, err := p.signAndSubmit(ctx, is, w, unsigned, log, fault)
	if err != nil {
		return ReceivedOutcome{}, err
	}
	if res.Failed {
		res.Estado = r.Estado
		return ReceivedOutcome{Received: *r, Answer: res}, nil
	}
	return receivedOutcome(*r), nil
}

// laneRefusal is the answer to a call (a send or a receive) that got no
// turn in its branch's lane.
func (p *Pipeline) laneRefusal(err error) error {
	reason := msg.QueueTimeout
	label := "queue_timeout"
	switch {
	case errors.Is(err, ErrStopping):
		p.metrics.refused.WithLabelValues("stopping").Inc()
		return err
	case errors.Is(err, errCompanyFull):
		reason, label = msg.CompanyBusy, "company_full"
	case errors.Is(err, errLaneFull):
		reason, label = msg.BranchBusy, "lane_full"
	case errors.Is(err, errAllFull):
		reason, label = msg.ServiceBusy, "all_full"
	}
	p.metrics.refused.WithLabelValues(label).Inc()
	return &OverloadError{Reason: reason.With(), After: p.o.OverloadRetryAfter}
}

// repeatReceived answers a receive whose id_externo the branch used
// before: a 400 with another body; with the same body, a 503 while a call
// still holds the message, the message finished now when it was left 00
// (its call died, or its certificate had expired: it is built and signed
// again with its number and date), made due again when it was stopped on
// the company's credentials, and the stored message otherwise.
func (p *Pipeline) repeatReceived(ctx context.Context, is tenant.Issuer, req *hacienda.ReceiveRequest, prev tenant.ReceivedDocument, hash []byte, log *slog.Logger) (ReceivedOutcome, error) {
	if prev.Ambiente != "" && prev.Ambiente != is.Company.Ambiente {
		// As for a send: the id named a message of the other environment.
		return ReceivedOutcome{}, invalidField("id_externo",
			msg.IDExternoOtherEnv.With(msg.WhatMessage.With(), prev.Ambiente, is.Company.Ambiente))
	}
	if !bytes.Equal(prev.RequestHash, hash) || prev.HeldAt(p.o.Clock()) {
		return p.replayReceived(prev, hash)
	}
	switch {
	case prev.Estado == tenant.StatePending && len(prev.SignedXML) == 0 && len(prev.Request) > 0:
		release, err := p.lanes.acquire(ctx, is.Company.ID, is.Branch.ID)
		if err != nil {
			return ReceivedOutcome{}, p.laneRefusal(err)
		}
		defer release()
		ctx, cancel := p.workCtx(ctx)
		defer cancel()
		log = log.With("clave", prev.Clave, "numero", prev.Numero)
		log.InfoContext(ctx, "a repeat resumes a message left pending")
		return p.resumeReceived(ctx, is, &prev, req, log, true)
	case prev.StoppedOnCredentials() && len(prev.SignedXML) > 0:
		// Stopped on the company's credentials: the repeat asks for another
		// attempt, which the background worker makes, status first.
		if err := sendable(is.Company); err != nil {
			return ReceivedOutcome{}, err
		}
		w := recRow(&prev)
		if err := move(w.Submission, tRescheduled, credentials, "The message will be sent again shortly.", p.o.Clock()); err != nil {
			return ReceivedOutcome{}, err
		}
		err := p.store(ctx, w, false)
		switch {
		case errors.Is(err, errLost):
			return ReceivedOutcome{}, p.inProgress(w)
		case err != nil:
			return ReceivedOutcome{}, fmt.Errorf("schedule a message again: %w", err)
		}
	}
	return receivedOutcome(prev), nil
}

// replayReceived answers a repeat with the stored message: a 400 when its
// body differs, a 503 while a call holds it.
func (p *Pipeline) replayReceived(prev tenant.ReceivedDocument, hash []byte) (ReceivedOutcome, error) {
	if !bytes.Equal(prev.RequestHash, hash) {
		return ReceivedOutcome{}, invalidField("id_externo", msg.IDExternoUsed.With(msg.WhatReceived.With()))
	}
	if prev.HeldAt(p.o.Clock()) {
		return ReceivedOutcome{}, p.inProgress(recRow(&prev))
	}
	return receivedOutcome(prev), nil
}

// receiveConflict explains a refused reservation: the id_externo or the
// answer to the clave was taken by a concurrent call.
func (p *Pipeline) receiveConflict(ctx context.Context, rs tenant.ReceivedStore, r *tenant.ReceivedDocument) error {
	if r.IDExterno != "" {
		if prev, err := rs.ReceivedByExternalID(ctx, r.BranchID, r.IDExterno); err == nil {
			_, err := p.replayReceived(prev, r.RequestHash)
			if err == nil {
				err = &OverloadError{Reason: msg.StoredMeanwhile.With(), After: p.o.OverloadRetryAfter}
			}
			return err
		}
	}
	if prev, err := rs.ReceivedByClave(ctx, r.CompanyID, r.Clave); err == nil {
		return alreadyAnswered(prev)
	}
	return fmt.Errorf("reserve a number: %w", tenant.ErrConflict)
}

// finishReceived completes, for the background worker, a message
// numbered but never signed (its call died, or it was stopped) from the
// answer stored with it and the supplier's XML, with its company as it is
// now (resumeReceived). One that cannot be finished is stopped with the
// reason.
func (p *Pipeline) finishReceived(ctx context.Context, r *tenant.ReceivedDocument, log *slog.Logger) (ReceivedOutcome, error) {
	if len(r.Request) == 0 || len(r.SignedXML) > 0 {
		// Signed yet still 00 (never written so): nothing safe to build it
		// from.
		return p.stopReceived(ctx, r, log, "The sending of this message was interrupted and it cannot be finished from what was stored; it keeps its number but is not sent.")
	}
	var req hacienda.ReceiveRequest
	if err := json.Unmarshal(r.Request, &req); err != nil {
		return p.stopReceived(ctx, r, log, "The sending of this message was interrupted and its stored answer could not be read again; it keeps its number but is not sent.")
	}
	req.XML = r.SupplierXML
	is, err := p.o.Issuers.Issuer(ctx, r.CompanyID, r.BranchID)
	if err != nil {
		// The company or branch could not be read now: try again later.
		p.retryLater(ctx, recRow(r), log)
		return ReceivedOutcome{}, fmt.Errorf("company: %w", err)
	}
	return p.resumeReceived(ctx, is, r, &req, log, false)
}

// resumeReceived completes a numbered message left 00 from req, its
// request (the stored answer with the supplier's XML, or the repeat's own,
// which is the same by its hash), checked again against the company is:
// given its consecutivo with its number and date, built, signed, stored
// and submitted, as the receive call would have. One that cannot be
// finished is stopped with the reason. The background worker
// (finishReceived) and a repeat of the request, with the issuer it has
// just read, call it; call says it is the repeat.
func (p *Pipeline) resumeReceived(ctx context.Context, is tenant.Issuer, r *tenant.ReceivedDocument, req *hacienda.ReceiveRequest, log *slog.Logger, call bool) (ReceivedOutcome, error) {
	if err := sendable(is.Company); err != nil {
		return p.stopReceived(ctx, r, log, "The message was numbered but cannot be sent: "+err.Error())
	}
	sp, err := p.supplierDocument(req, is.Company)
	if err != nil {
		return p.stopReceived(ctx, r, log, "The message was numbered but its answer no longer passes the checks ("+err.Error()+"); it keeps its number but is not sent.")
	}
	if hacienda.ReceptorMessageType(sp.msg.Mensaje) != r.Tipo {
		return p.stopReceived(ctx, r, log, "The message's stored answer does not match its numbering; it keeps its number but is not sent.")
	}
	return p.issueReceived(ctx, is, r, sp.doc, sp.msg, log, call)
}

// stopReceived stops a message that cannot be finished with reason and
// answers it.
func (p *Pipeline) stopReceived(ctx context.Context, r *tenant.ReceivedDocument, log *slog.Logger, reason string) (ReceivedOutcome, error) {
	p.stop(ctx, recRow(r), reason)
	log.WarnContext(ctx, "an interrupted message could not be finished", "reason", reason)
	return receivedOutcome(*r), nil
}

// Received returns a received document of the branch user's company that
// the user may see, without asking the tax authority. Only branch users
// read received documents (a received clave is the company's: two
// companies may hold the same one); anything else is tenant.ErrNotFound.
func (p *Pipeline) Received(ctx context.Context, pr tenant.Principal, clave string) (tenant.ReceivedDocument, error) {
	rs, err := p.receivedStore()
	if err != nil {
		return tenant.ReceivedDocument{}, err
	}
	clave = strings.TrimSpace(clave)
	if _, err := hacienda.ParseClave(clave); err != nil || pr.Role != tenant.RoleBranch || pr.CompanyID == 0 {
		return tenant.ReceivedDocument{}, fmt.Errorf("received document %q: %w", clave, tenant.ErrNotFound)
	}
	r, err := rs.ReceivedByClave(ctx, pr.CompanyID, clave)
	if err != nil {
		return tenant.ReceivedDocument{}, fmt.Errorf("received document %s: %w", clave, err)
	}
	if err := p.o.Issuers.AuthorizeDocument(ctx, pr, r.CompanyID); err != nil {
		if errors.Is(err, tenant.ErrNotFound) {
			return tenant.ReceivedDocument{}, fmt.Errorf("received document %s: %w", clave, tenant.ErrNotFound)
		}
		return tenant.ReceivedDocument{}, fmt.Errorf("received document %s: authorize: %w", clave, err)
	}
	return r, nil
}

// receivedOutcome is the receive call's answer for a stored message, as
// given the first time and replayed afterwards.
func receivedOutcome(r tenant.ReceivedDocument) ReceivedOutcome {
	o := ReceivedOutcome{Received: r, Answer: Answer{Estado: r.Estado, Message: r.LastError}}
	switch {
	case r.Estado == tenant.StatePending:
		o.Failed, o.Key = true, KeyExpiredClientCertificate
		if o.Message == "" {
			// Its call ended between numbering and storing the signed
			// message: nothing was sent yet; the background worker (or a
			// repeat of the request) finishes it.
			o.Key = KeySendingDocumentError
			o.Message = "The message was numbered but not yet signed or sent; it is finished and sent shortly."
		}
	case r.Estado == tenant.StateNotSentYet:
		o.Failed, o.Key = true, KeySendingDocumentError
		if o.Message == "" {
			o.Message = "The tax authority has not received the message yet."
		}
	case r.Phase == tenant.PhaseRefused:
		o.Failed, o.Key = true, KeySendingDocumentError
	}
	return o
}
