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
	"facturad/hacienda/registry"
	"facturad/tenant"
)

// Send runs the send call (A.5) for the branch user p with the request the
// gateway decoded (hacienda.DecodeSendRequest): validate and calculate,
// number (or check the caller's clave), build the XML, sign, store, submit,
// answer. It returns the Outcome the call answers with; an
// error is a request that cannot be taken (a validation error exposing
// FieldErrors, tenant.ErrNotFound, an *OverloadError) or a failure of the
// service itself.
//
// A repeat of an id_externo in the branch with the same body replays the
// stored document; with another body it is a validation error on
// id_externo.
func (p *Pipeline) Send(ctx context.Context, pr tenant.Principal, req *hacienda.SendDocumentRequest) (Outcome, error) {
	if err := p.admitIssuer(pr, "send"); err != nil {
		return Outcome{}, err
	}
	if req == nil {
		return Outcome{}, invalidField("body", msg.SendRequestRequired.With())
	}
	canon, hash, err := canonicalRequest(req)
	if err != nil {
		return Outcome{}, err
	}
	return p.inLane(ctx, pr, func(ctx context.Context) (Outcome, error) {
		j := &job{p: p, pr: pr, req: req, canon: canon, hash: hash, send: true}
		return j.run(ctx)
	})
}

// admitIssuer refuses a call that issues a document (what: "send",
// "anular"...) while the pipeline stops, or from anyone but a branch's
// user: documents are issued by a branch, and only its users issue them.
func (p *Pipeline) admitIssuer(pr tenant.Principal, what string) error {
	if err := p.running(); err != nil {
		p.metrics.refused.WithLabelValues("stopping").Inc()
		return err
	}
	if pr.Role != tenant.RoleBranch || pr.CompanyID == 0 || pr.BranchID == 0 {
		return fmt.Errorf("%s as %s: %w", what, pr.Role, tenant.ErrNotFound)
	}
	return nil
}

// inLane runs work, a call that issues a document, in its branch's lane
// with the work's own time bounds, and counts the outcome it answers
// with. A refused turn, or a caller whose time ran out while queued, did
// nothing.
func (p *Pipeline) inLane(ctx context.Context, pr tenant.Principal, work func(ctx context.Context) (Outcome, error)) (Outcome, error) {
	start := time.Now()
	release, err := p.lanes.acquire(ctx, pr.CompanyID, pr.BranchID)
	if err != nil {
		return Outcome{}, p.laneRefusal(err)
	}
	defer release()
	p.metrics.observe(stageQueue, start)

	ctx, cancel := p.workCtx(ctx)
	defer cancel()
	out, err := work(ctx)
	if err == nil {
		p.metrics.outcomes.WithLabelValues(opSend, string(out.Document.Estado)).Inc()
	}
	return out, err
}

// canonicalRequest is the request in a canonical form, and its SHA-256:
// the decoded request encoded again, so that spacing, key order and the
// case of the keys do not make two equal requests differ. The form is
// stored with the document (the background worker finishes an interrupted
// send from it) and the hash tells a replay from a conflict.
func canonicalRequest(req *hacienda.SendDocumentRequest) (canon, hash []byte, err error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, nil, fmt.Errorf("encode the request: %w", err)
	}
	h := sha256.Sum256(b)
	return b, h[:], nil
}

// job is one send call inside its lane, or the background worker finishing
// a document whose send call was interrupted.
type job struct {
	p     *Pipeline
	pr    tenant.Principal
	req   *hacienda.SendDocumentRequest
	canon []byte // the request's canonical form, stored with the document
	hash  []byte
	// send says the job runs a send call (not the background worker): the
	// test-only fault points apply to it.
	send bool
	// claim is a derived document's claim on the document it references
	// (derived.go), written when the document is numbered.
	claim *tenant.Claim

	is  tenant.Issuer
	log *slog.Logger
}

func (j *job) run(ctx context.Context) (Outcome, error) {
	p := j.p
	is, err := p.o.Issuers.Issuer(ctx, j.pr.CompanyID, j.pr.BranchID)
	if err != nil {
		return Outcome{}, fmt.Errorf("issuer: %w", err)
	}
	j.is = is
	j.log = p.log.With("company", is.Company.ID, "branch", is.Branch.ID)

	// Idempotency: a known id_externo replays, conflicts, or resumes a
	// document left pending.
	var resume *tenant.Document
	if id := strings.TrimSpace(j.req.IDExterno); id != "" {
		prev, err := p.o.Store.DocumentByExternalID(ctx, is.Branch.ID, id)
		switch {
		case err == nil:
			out, again, err := j.repeat(ctx, prev)
			if !again {
				if err == nil {
					// A repeat never counts; its answer says what
					// remains, as the first one did.
					out.Quota = j.quotaNow(ctx)
				}
				return out, err
			}
			resume = &prev
		case errors.Is(err, tenant.ErrNotFound):
		default:
			return Outcome{}, fmt.Errorf("look up id_externo: %w", err)
		}
	}

	// A company that cannot reach the tax authority gets no number: the
	// document would only wait, numbered and signed, for credentials.
	if err := sendable(is.Company); err != nil {
		return Outcome{}, err
	}

	// Validate and calculate, with the exchange rate the caller left
	// out; then judge the document against the registries, before a
	// number is taken. A resumed document keeps its date, and its
	// number: it is not judged again.
	var numbered time.Time
	if resume != nil {
		numbered = resume.FechaEmision
	}
	req, err := j.withRate(ctx, j.req, resume != nil, numbered)
	if err != nil {
		return Outcome{}, err
	}
	start := time.Now()
	doc, err := hacienda.NewDocument(req, issuerParty(is, p.o.ProveedorSistemas))
	p.metrics.observe(stageValidate, start)
	if err != nil {
		return Outcome{}, err
	}
	var advertencias []registry.Finding
	if resume == nil {
		if advertencias, err = j.checkRegistries(ctx, doc); err != nil {
			return Outcome{}, err
		}
	}

	// Number.
	start = time.Now()
	d, err := j.number(ctx, doc, resume)
	p.metrics.observe(stageNumber, start)
	if err != nil {
		return Outcome{}, err
	}
	j.log = j.log.With("clave", d.Clave)
	j.fault(FaultNumbered)
	out, err := j.issue(ctx, doc, d)
	out.Advertencias = advertencias
	if resume == nil {
		out.Quota = d.Quota
	} else {
		out.Quota = j.quotaNow(ctx)
	}
	return out, err
}

// quotaNow reads what remains of the company's monthly quota for the
// answer to a send that numbered nothing (a replay, a resumed document):
// nil when the company has no quota, or when it cannot be read (the
// answer then goes without it; the failure is logged).
func (j *job) quotaNow(ctx context.Context) *tenant.QuotaUse {
	if j.is.Company.CuotaMensual == nil {
		return nil
	}
	q, err := j.p.o.Store.QuotaUse(ctx, j.is.Company.ID, j.p.o.Clock())
	if err != nil {
		j.log.WarnContext(ctx, "read the monthly quota for a replayed send's answer", "err", err)
		return nil
	}
	return q
}

// repeat answers a send whose id_externo the branch used before. again
// says the stored document is to be issued again (it was left 00: its
// call died, or it was stopped).
func (j *job) repeat(ctx context.Context, prev tenant.Document) (out Outcome, again bool, err error) {
	if prev.Ambiente != "" && prev.Ambiente != j.is.Company.Ambiente {
		// The company moved since: that id_externo named a document of
		// the other environment, which is no answer to a send in this one.
		return Outcome{}, false, invalidField("id_externo",
			msg.IDExternoOtherEnv.With(msg.WhatDocument.With(), prev.Ambiente, j.is.Company.Ambiente))
	}
	if !bytes.Equal(prev.RequestHash, j.hash) {
		return Outcome{}, false, invalidField("id_externo", msg.IDExternoUsed.With(msg.WhatDocument.With()))
	}
	switch {
	case prev.HeldAt(j.p.o.Clock()):
		// Numbered or signed by a call that holds it until NextAttemptAt
		// (its lease); after that the background worker finishes it.
		j.p.metrics.refused.WithLabelValues("in_progress").Inc()
		return Outcome{}, false, &OverloadError{
			Reason: msg.InProgress.With(msg.WhatDocument.With()),
			After:  j.p.heldRetryAfter(docRow(&prev)),
		}
	case prev.StoppedOnCredentials():
		// Sent again, the request asks for another attempt. The
		// background worker makes it, asking the status first.
		return j.reschedule(ctx, prev)
	case prev.Estado == tenant.StatePending:
		// Stopped, or its call died: issued again with its number, now
		// that things may have changed.
		return Outcome{}, true, nil
	}
	return sendOutcome(prev), false, nil
}

// reschedule makes a document stopped on its company's credentials due
// for the background worker again.
func (j *job) reschedule(ctx context.Context, prev tenant.Document) (Outcome, bool, error) {
	if err := sendable(j.is.Company); err != nil {
		return Outcome{}, false, err
	}
	if err := move(&prev.Submission, tRescheduled, credentials, "The document will be sent again shortly.", j.p.o.Clock()); err != nil {
		return Outcome{}, false, err
	}
	err := j.p.store(ctx, docRow(&prev), false)
	switch {
	case errors.Is(err, errLost):
		return Outcome{}, false, j.p.inProgress(docRow(&prev))
	case err != nil:
		return Outcome{}, false, fmt.Errorf("schedule a document again: %w", err)
	}
	return sendOutcome(prev), false, nil
}

// sendable refuses, before anything is numbered, a company that cannot
// send documents to the tax authority: electronic invoicing off, or no
// tax-authority user or password. The answer is a validation error on the
// company's field to correct, as nothing was done.
func sendable(c tenant.Company) error {
	switch {
	case !c.FacturacionElectronica:
		return invalidField("FacturacionElectronica", msg.FEOff.With())
	case strings.TrimSpace(c.UsuarioHacienda) == "":
		return invalidField("UsuarioHacienda", msg.NoHaciendaUser.With())
	case len(c.SealedContrasenaHacienda) == 0:
		return invalidField("ContrasenaHacienda", msg.NoHaciendaPassword.With())
	}
	return nil
}

// number gives the document its consecutivo and clave: the store's next
// number of the branch, terminal and type, or the caller's clave after
// checking it. The document is stored (estado 00) from this moment on, so
// that its number is never lost.
func (j *job) number(ctx context.Context, doc *hacienda.Document, resume *tenant.Document) (*tenant.Document, error) {
	p, is := j.p, j.is
	now := p.o.Clock()
	terminal := j.req.TerminalOrDefault()
	situacion := j.req.SituacionOrDefault()
	tipo := string(doc.Type)

	if resume != nil {
		d := *resume
		if d.Clave != "" {
			// Keep the clave handed out, with the issue time it carries.
			doc.FechaEmision = d.FechaEmision
			doc.Clave, doc.NumeroConsecutivo = d.Clave, d.Consecutivo
			return &d, nil
		}
		// The number was reserved but the clave never saved: build it now,
		// with the issue time stamped when the number was handed out.
		switch {
		case !d.FechaEmision.IsZero():
			doc.FechaEmision = d.FechaEmision
		case doc.FechaEmision.IsZero():
			doc.FechaEmision = now.In(hacienda.CostaRica).Truncate(time.Second)
		}
		if err := numberAs(doc, &d, is.Branch.Sucursal, situacion); err != nil {
			return nil, err
		}
		return &d, nil
	}

	// A caller's date must fall in the window the tax authority accepts;
	// a document resumed above keeps the date it was numbered with.
	if err := p.o.Emission.Check(doc.FechaEmision, situacion, now); err != nil {
		return nil, err
	}
	if doc.FechaEmision.IsZero() {
		doc.FechaEmision = now.In(hacienda.CostaRica).Truncate(time.Second)
	}
	// Check what the clave needs before a number is taken, so that a
	// request that cannot be numbered takes none.
	if y := doc.FechaEmision.In(hacienda.CostaRica).Year(); y < 2000 || y > 2099 {
		return nil, invalidField("fecha_emision", msg.FechaYears.With())
	}
	if _, err := hacienda.NewConsecutivo(is.Branch.Sucursal, terminal, tipo, 1); err != nil {
		return nil, fmt.Errorf("branch %s, terminal %s: %w", is.Branch.Sucursal, terminal, err)
	}
	d := &tenant.Document{
		CompanyID:    is.Company.ID,
		BranchID:     is.Branch.ID,
		Ambiente:     is.Company.Ambiente,
		IDExterno:    strings.TrimSpace(j.req.IDExterno),
		RequestHash:  j.hash,
		Tipo:         tipo,
		Terminal:     terminal,
		Situacion:    situacion,
		FechaEmision: doc.FechaEmision,
		Request:      j.canon,
		// The send holds the document until NextAttemptAt; should it die,
		// the background worker finishes the document afterwards.
		Submission: tenant.Submission{Phase: tenant.PhaseNumbered, Estado: tenant.StatePending,
			NextAttemptAt: now.Add(p.o.InFlightGrace)},
	}
	d.Claim = j.claimFor(doc)
	d.IVABreakdown = storedBreakdown(ctx, tenant.BreakdownOf(doc), j.log)
	if c := strings.TrimSpace(j.req.Clave); c != "" {
		// The caller numbered the document: its clave, once it agrees with
		// the company, branch, terminal, type, situación and date, keeps its
		// own number, and the store raises the sequence past it so that the
		// service never hands it out.
		k, err := hacienda.NumberDocument(doc, hacienda.Numbering{
			Branch: is.Branch.Sucursal, Terminal: terminal, Situacion: situacion, Clave: c})
		if err != nil {
			return nil, err
		}
		d.Clave, d.Consecutivo, d.Numero = doc.Clave, doc.NumeroConsecutivo, k.Consecutivo.Number
	}
	if err := p.o.Store.ReserveDocument(ctx, d); err != nil {
		switch {
		case errors.Is(err, tenant.ErrConflict):
			return nil, j.reserveConflict(ctx, d)
		case errors.Is(err, tenant.ErrQuota):
			// The company has numbered its monthly quota (A.14): nothing
			// was numbered; the gateway answers 402.
			p.metrics.quota.Inc()
		}
		return nil, fmt.Errorf("reserve a number: %w", err)
	}
	if d.Clave == "" {
		if err := numberAs(doc, d, is.Branch.Sucursal, situacion); err != nil {
			j.p.stop(ctx, docRow(d), "the clave could not be built: "+err.Error())
			return nil, err
		}
	}
	doc.Clave, doc.NumeroConsecutivo = d.Clave, d.Consecutivo
	return d, nil
}

// claimFor is the claim a document being numbered writes: a derived
// document's on the document it references (a credit note's amount being
// its TotalComprobante), or the balance a credit sale (CondicionVenta 08 or
// 10) of a type a payment receipt pays (FE, ND, TE) opens for them; nil
// for any other.
func (j *job) claimFor(doc *hacienda.Document) *tenant.Claim {
	if j.claim != nil {
		c := *j.claim
		if c.Kind == tenant.ClaimCredit {
			c.Amount = doc.ResumenFactura.TotalComprobante.Decimal().String()
		}
		return &c
	}
	if _, ok := repCondicion[doc.CondicionVenta]; ok && payable(string(doc.Type)) {
		return &tenant.Claim{Kind: tenant.ClaimBalance, Amount: doc.ResumenFactura.TotalComprobante.Decimal().String()}
	}
	return nil
}

// numberAs numbers doc with the number the store reserved for d (its
// branch, terminal, type and Numero) and records the consecutivo, the clave
// and the issue time in d.
func numberAs(doc *hacienda.Document, d *tenant.Document, sucursal, situacion string) error {
	if _, err := hacienda.NumberDocument(doc, hacienda.Numbering{
		Branch: sucursal, Terminal: d.Terminal, Situacion: situacion, Number: d.Numero}); err != nil {
		return err
	}
	d.Consecutivo, d.Clave = doc.NumeroConsecutivo, doc.Clave
	d.FechaEmision = doc.FechaEmision
	return nil
}

// reserveConflict explains a refused reservation: the id_externo was taken
// meanwhile (by a concurrent send), or the caller's clave is taken.
func (j *job) reserveConflict(ctx context.Context, d *tenant.Document) error {
	if d.IDExterno != "" {
		prev, err := j.p.o.Store.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
		if err == nil {
			if !bytes.Equal(prev.RequestHash, j.hash) {
				return invalidField("id_externo", msg.IDExternoReused.With())
			}
			return &OverloadError{
				Reason: msg.InProgress.With(msg.WhatDocument.With()),
				After:  j.p.o.OverloadRetryAfter,
			}
		}
	}
	if d.Clave != "" {
		if _, err := j.p.o.Store.DocumentByClave(ctx, d.Clave); err == nil {
			return invalidField("clave", msg.ClaveInUse.With())
		}
		return invalidField("clave", msg.ConsecutivoInUse.With(d.Consecutivo))
	}
	return fmt.Errorf("reserve a number: %w", tenant.ErrConflict)
}

// issue builds, signs, stores and submits a numbered document.
func (j *job) issue(ctx context.Context, doc *hacienda.Document, d *tenant.Document) (Outcome, error) {
	p := j.p
	// The submission names the XML's parties (spec §15.3): in a purchase
	// invoice the emisor is the seller and the company, which signs and
	// sends it, is the receptor.
	d.EmisorTipo, d.EmisorNumero = doc.Emisor.Identificacion.Tipo, doc.Emisor.Identificacion.Numero
	d.ReceptorTipo, d.ReceptorNumero = "", ""
	if r := doc.Receptor; r != nil && !r.Identificacion.IsZero() {
		d.ReceptorTipo, d.ReceptorNumero = r.Identificacion.Tipo, r.Identificacion.Numero
	}

	start := time.Now()
	xml, err := hacienda.MarshalXML(doc)
	p.metrics.observe(stageBuild, start)
	if err != nil {
		p.stop(ctx, docRow(d), "the XML could not be built")
		return Outcome{}, fmt.Errorf("build XML: %w", err)
	}
	j.fault(FaultBuilt)
	var fault func(string)
	if j.send {
		fault = faultAt
	}
	res, err := p.signAndSubmit(ctx, j.is, docRow(d), xml, j.log, fault)
	if err != nil {
		return Outcome{}, err
	}
	if res.Failed {
		res.Estado = d.Estado
		return Outcome{Document: *d, Answer: res}, nil
	}
	return sendOutcome(*d), nil
}

// sendOutcome is the send call's answer for a stored document, as given
// the first time and replayed afterwards.
func sendOutcome(d tenant.Document) Outcome {
	o := Outcome{Document: d, Answer: Answer{Estado: d.Estado}}
	switch {
	case d.Estado == tenant.StatePending:
		o.Failed, o.Key, o.Message = true, KeyExpiredClientCertificate, d.LastError
	case d.Estado == tenant.StateNotSentYet:
		o.Failed, o.Key, o.Message = true, KeySendingDocumentError, d.LastError
		if o.Message == "" {
			o.Message = "The tax authority has not received the document yet; it will be sent again."
		}
	case d.Phase == tenant.PhaseRefused:
		// Refused at reception: the send did not succeed.
		o.Failed, o.Key, o.Message = true, KeySendingDocumentError, d.LastError
	}
	return o
}

// issuerParty is the company and branch as the document's issuer.
func issuerParty(is tenant.Issuer, proveedor string) hacienda.Issuer {
	c, b := is.Company, is.Branch
	pt := hacienda.Party{
		Nombre:          c.RazonSocial,
		Identificacion:  hacienda.Identificacion{Tipo: c.TipoIdentificacion, Numero: c.NumeroIdentificacion},
		NombreComercial: firstNonEmpty(b.RazonComercial, c.RazonComercial),
	}
	if b.Provincia != "" && b.Canton != "" && b.Distrito != "" {
		pt.Ubicacion = &hacienda.Ubicacion{Provincia: b.Provincia, Canton: b.Canton, Distrito: b.Distrito,
			Barrio: b.Barrio, OtrasSenas: firstNonEmpty(b.OtrasSenas, c.OtrasSenas)}
	} else if c.Provincia != "" && c.Canton != "" && c.Distrito != "" {
		pt.Ubicacion = &hacienda.Ubicacion{Provincia: c.Provincia, Canton: c.Canton, Distrito: c.Distrito,
			Barrio: c.Barrio, OtrasSenas: c.OtrasSenas}
	}
	if tel := digitsOnly(firstNonEmpty(b.Telefono, c.Telefono)); tel != "" {
		pt.Telefono = &hacienda.Telefono{CodigoPais: "506", NumTelefono: tel}
	}
	for _, m := range strings.Split(firstNonEmpty(b.CorreoElectronico, c.CorreoElectronico), ";") {
		if m = strings.TrimSpace(m); m != "" {
			pt.CorreoElectronico = append(pt.CorreoElectronico, m)
		}
	}
	if proveedor == "" {
		proveedor = c.NumeroIdentificacion
	}
	return hacienda.Issuer{Party: pt, CodigoActividad: c.ActividadComercial, ProveedorSistemas: proveedor}
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func digitsOnly(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
