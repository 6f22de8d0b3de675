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
	"facturad/signer"
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
	if err := p.running(); err != nil {
		p.metrics.refused.WithLabelValues("stopping").Inc()
		return Outcome{}, err
	}
	if pr.Role != tenant.RoleBranch || pr.CompanyID == 0 || pr.BranchID == 0 {
		// Documents are issued by a branch: only its users send them.
		return Outcome{}, fmt.Errorf("send as %s: %w", pr.Role, tenant.ErrNotFound)
	}
	if req == nil {
		return Outcome{}, invalidField("body", "a send request is required")
	}
	canon, hash, err := canonicalRequest(req)
	if err != nil {
		return Outcome{}, err
	}

	start := time.Now()
	release, err := p.lanes.acquire(ctx, pr.CompanyID, pr.BranchID)
	switch {
	case errors.Is(err, errCompanyFull):
		p.metrics.refused.WithLabelValues("company_full").Inc()
		return Outcome{}, &OverloadError{
			Reason: "Too many documents of this company are being sent at once; try again shortly.",
			After:  p.o.OverloadRetryAfter,
		}
	case errors.Is(err, errLaneFull):
		p.metrics.refused.WithLabelValues("lane_full").Inc()
		return Outcome{}, &OverloadError{
			Reason: "Too many documents of this branch are being sent at once; try again shortly.",
			After:  p.o.OverloadRetryAfter,
		}
	case errors.Is(err, errAllFull):
		p.metrics.refused.WithLabelValues("all_full").Inc()
		return Outcome{}, &OverloadError{
			Reason: "The service is sending as many documents as it can; try again shortly.",
			After:  p.o.OverloadRetryAfter,
		}
	case errors.Is(err, ErrStopping):
		p.metrics.refused.WithLabelValues("stopping").Inc()
		return Outcome{}, err
	case err != nil:
		// The caller's time ran out while queued: nothing was done.
		p.metrics.refused.WithLabelValues("queue_timeout").Inc()
		return Outcome{}, &OverloadError{
			Reason: "The branch's documents kept this one waiting too long; try again shortly.",
			After:  p.o.OverloadRetryAfter,
		}
	}
	defer release()
	p.metrics.observe(stageQueue, start)

	ctx, cancel := p.workCtx(ctx)
	defer cancel()
	j := &job{p: p, pr: pr, req: req, canon: canon, hash: hash, send: true}
	out, err := j.run(ctx)
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

	// Validate and calculate.
	start := time.Now()
	doc, err := hacienda.NewDocument(j.req, issuerParty(is, p.o.ProveedorSistemas))
	p.metrics.observe(stageValidate, start)
	if err != nil {
		return Outcome{}, err
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
	return j.issue(ctx, doc, d)
}

// repeat answers a send whose id_externo the branch used before. again
// says the stored document is to be issued again (it was left pending).
func (j *job) repeat(ctx context.Context, prev tenant.Document) (out Outcome, again bool, err error) {
	if !bytes.Equal(prev.RequestHash, j.hash) {
		return Outcome{}, false, invalidField("id_externo",
			"was already used in this branch for another document; send a new id_externo, or the same request to get its answer again")
	}
	now := j.p.o.Clock()
	fresh := now.Sub(prev.UpdatedAt) < j.p.o.InFlightGrace
	if prev.Estado == tenant.StatePending && prev.LastError == "" && !prev.NextAttemptAt.IsZero() {
		// Numbered by a send that holds it until NextAttemptAt (its
		// lease); after that the background worker finishes it.
		fresh = now.Before(prev.NextAttemptAt)
	}
	inProgress := &OverloadError{
		Reason: "A document with this id_externo is being sent right now; ask again shortly for its answer.",
		After:  j.p.heldRetryAfter(prev),
	}
	if prev.Estado == tenant.StateNotSentYet && prev.LastError == "" && prev.SubmittedAt.IsZero() && fresh {
		// Stored and being submitted by another call at this moment.
		j.p.metrics.refused.WithLabelValues("in_progress").Inc()
		return Outcome{}, false, inProgress
	}
	if prev.Estado == tenant.StateNotSentYet && prev.NextAttemptAt.IsZero() && len(prev.SignedXML) > 0 {
		// Stopped because the company's credentials were missing or
		// refused: sent again, the request asks for another attempt. The
		// background worker makes it, asking the status first.
		return j.reschedule(ctx, prev)
	}
	if prev.Estado != tenant.StatePending {
		return sendOutcome(prev), false, nil
	}
	// 00: numbered but not submitted. Either a send is still working on
	// it, or it stopped there (an expired certificate, a crash): then it is
	// issued again with its number, now that things may have changed.
	if prev.LastError == "" && fresh {
		j.p.metrics.refused.WithLabelValues("in_progress").Inc()
		return Outcome{}, false, inProgress
	}
	return Outcome{}, true, nil
}

// reschedule makes a document stopped on its company's credentials due
// for the background worker again.
func (j *job) reschedule(ctx context.Context, prev tenant.Document) (Outcome, bool, error) {
	if err := sendable(j.is.Company); err != nil {
		return Outcome{}, false, err
	}
	if err := move(&prev, tRescheduled, prev.Estado, "The document will be sent again shortly.", j.p.o.Clock()); err != nil {
		return Outcome{}, false, err
	}
	err := j.p.save(ctx, &prev)
	switch {
	case errors.Is(err, tenant.ErrConflict):
		return Outcome{}, false, j.inProgress()
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
		return invalidField("FacturacionElectronica",
			"is off for this company: turn it on (with the tax-authority user, password and certificate) before sending documents; nothing was numbered")
	case strings.TrimSpace(c.UsuarioHacienda) == "":
		return invalidField("UsuarioHacienda",
			"the company has no tax-authority user: set UsuarioHacienda and ContrasenaHacienda before sending documents; nothing was numbered")
	case len(c.SealedContrasenaHacienda) == 0:
		return invalidField("ContrasenaHacienda",
			"the company has no tax-authority password: set ContrasenaHacienda before sending documents; nothing was numbered")
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
		return nil, invalidField("fecha_emision", "must be a date between the years 2000 and 2099")
	}
	if _, err := hacienda.NewConsecutivo(is.Branch.Sucursal, terminal, tipo, 1); err != nil {
		return nil, fmt.Errorf("branch %s, terminal %s: %w", is.Branch.Sucursal, terminal, err)
	}
	d := &tenant.Document{
		CompanyID:    is.Company.ID,
		BranchID:     is.Branch.ID,
		IDExterno:    strings.TrimSpace(j.req.IDExterno),
		RequestHash:  j.hash,
		Tipo:         tipo,
		Terminal:     terminal,
		Situacion:    situacion,
		FechaEmision: doc.FechaEmision,
		Estado:       tenant.StatePending,
		Request:      j.canon,
		// The send holds the document until then; should it die, the
		// background worker finishes the document afterwards.
		NextAttemptAt: now.Add(p.o.InFlightGrace),
	}
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
		if errors.Is(err, tenant.ErrConflict) {
			return nil, j.reserveConflict(ctx, d)
		}
		return nil, fmt.Errorf("reserve a number: %w", err)
	}
	if d.Clave == "" {
		if err := numberAs(doc, d, is.Branch.Sucursal, situacion); err != nil {
			j.keepPending(ctx, d, "the clave could not be built: "+err.Error())
			return nil, err
		}
	}
	doc.Clave, doc.NumeroConsecutivo = d.Clave, d.Consecutivo
	return d, nil
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
				return invalidField("id_externo", "was already used in this branch for another document")
			}
			return &OverloadError{
				Reason: "A document with this id_externo is being sent right now; ask again shortly for its answer.",
				After:  j.p.o.OverloadRetryAfter,
			}
		}
	}
	if d.Clave != "" {
		if _, err := j.p.o.Store.DocumentByClave(ctx, d.Clave); err == nil {
			return invalidField("clave", "is already used by another document")
		}
		return invalidField("clave", "its consecutivo "+d.Consecutivo+" is already used by another document of this branch")
	}
	return fmt.Errorf("reserve a number: %w", tenant.ErrConflict)
}

// keepPending stores a numbered document that could not go on, with the
// reason, so that its number is kept and a repeat of the request resumes
// it.
func (j *job) keepPending(ctx context.Context, d *tenant.Document, reason string) {
	if err := move(d, tStopped, tenant.StatePending, reason, time.Time{}); err != nil {
		j.log.ErrorContext(ctx, "could not keep a document pending", "err", err)
		return
	}
	err := j.p.save(ctx, d)
	switch {
	case errors.Is(err, tenant.ErrConflict):
		// Another send of the same request resumed the document
		// meanwhile: its state stands.
		j.log.InfoContext(ctx, "a pending document changed meanwhile; not stored again", "reason", reason)
	case err != nil:
		j.log.ErrorContext(ctx, "could not store a pending document", "err", err)
	}
}

// inProgress is the answer to a send whose document another call is
// working on.
func (j *job) inProgress() error {
	j.p.metrics.refused.WithLabelValues("in_progress").Inc()
	return &OverloadError{
		Reason: "A document with this id_externo is being sent right now; ask again shortly for its answer.",
		After:  j.p.o.OverloadRetryAfter,
	}
}

// storedNow answers with the document as stored, when another worker
// changed it while this call held an older copy: the newer state stands
// and this call's result is dropped.
func (j *job) storedNow(ctx context.Context, d *tenant.Document) (Outcome, error) {
	cur, err := j.p.reload(ctx, *d)
	if err != nil {
		return Outcome{}, err
	}
	return sendOutcome(cur), nil
}

// issue builds, signs, stores and submits a numbered document.
func (j *job) issue(ctx context.Context, doc *hacienda.Document, d *tenant.Document) (Outcome, error) {
	p, is := j.p, j.is
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
		j.keepPending(ctx, d, "the XML could not be built")
		return Outcome{}, fmt.Errorf("build XML: %w", err)
	}
	j.fault(FaultBuilt)

	// Sign, unless the certificate is known to be expired or missing.
	now := p.o.Clock()
	if is.Company.CertificateExpired(now) {
		return j.expired(ctx, d, is.Company.CertificateExpiry)
	}
	start = time.Now()
	release, err := p.turns.acquire(ctx, is.Branch.ID)
	p.metrics.observe(stageTurn, start)
	if err != nil {
		// The caller left or the pipeline is stopping: the document stays
		// as stored. A fresh one is held until its lease ends and the
		// background worker finishes it then; one resumed after being kept
		// pending waits, as before, for its request to be sent again.
		return Outcome{}, err
	}
	start = time.Now()
	signed, err := p.o.Signer.Sign(ctx, is.Company.ID, xml, signer.WithCanonicalInput())
	release()
	p.metrics.observe(stageSign, start)
	switch {
	case errors.Is(err, signer.ErrCertificateExpired):
		return j.expired(ctx, d, is.Company.CertificateExpiry)
	case errors.Is(err, tenant.ErrNotFound):
		return j.expired(ctx, d, time.Time{})
	case err != nil:
		j.keepPending(ctx, d, "the document could not be signed")
		return Outcome{}, fmt.Errorf("sign: %w", err)
	}
	j.fault(FaultSigned)

	// Store before submitting (C.3). Until the submission's answer is
	// stored the document is 05 and leased for InFlightGrace: should this
	// process die, the background worker takes it up after that.
	d.SignedXML = signed
	if err := move(d, tHeld, tenant.StateNotSentYet, "", p.o.Clock().Add(p.o.InFlightGrace)); err != nil {
		return Outcome{}, err
	}
	start = time.Now()
	err = p.saveSigned(ctx, d)
	p.metrics.observe(stageStore, start)
	if errors.Is(err, tenant.ErrConflict) {
		// Another send of the same request resumed the document and
		// stored it first: that one submits it, not this one.
		j.log.InfoContext(ctx, "the document was taken up by another call; not submitted")
		return Outcome{}, j.inProgress()
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("store the signed document: %w", err)
	}
	j.fault(FaultStored)
	return j.submitStored(ctx, d)
}

// submitStored submits a stored, signed document, settles what the tax
// authority's answer (or its absence) means with afterSubmit, and stores
// and answers the result. A store refused after the tax authority heard of
// the document is left for the background worker, which asks first.
func (j *job) submitStored(ctx context.Context, d *tenant.Document) (Outcome, error) {
	p := j.p
	sctx, cancel := context.WithTimeout(ctx, p.o.SubmitTimeout)
	defer cancel()
	deadline := p.o.Clock().Add(p.o.SubmitTimeout)
	// The company was read for this call (Issuer): its credentials are
	// opened from it rather than read again.
	creds, err := p.credentialsOf(j.is.Company)
	if err == nil {
		err = p.submitAs(sctx, creds, d)
	}
	if err == nil {
		j.fault(FaultSubmitted)
	} else {
		j.log.WarnContext(ctx, "submission failed", "err", err)
	}
	v, heard, err := p.afterSubmit(ctx, d, err, deadline)
	if err != nil {
		return Outcome{}, err
	}
	serr := p.save(ctx, d)
	switch {
	case serr == nil:
	case heard:
		// The tax authority has the document (this call's submission, or
		// its answer to the status asked): its word is the answer even
		// should the store refuse it. A refusal means the background worker
		// took the document up meanwhile (this call ran past
		// InFlightGrace); it asks the status before anything else, so it
		// learns of it. Any other failure leaves the stored 05 for the
		// worker, which asks first too.
		level := slog.LevelError
		if errors.Is(serr, tenant.ErrConflict) {
			level = slog.LevelInfo
		}
		j.log.Log(ctx, level, "could not store the tax authority's word on a document; the background worker settles it", "err", serr)
	case errors.Is(serr, tenant.ErrConflict):
		// The background worker took the document up and stored a newer
		// state: answer that.
		j.log.InfoContext(ctx, "the document changed meanwhile; answering its stored state")
		return j.storedNow(ctx, d)
	default:
		return Outcome{}, fmt.Errorf("store a document after its submission: %w", serr)
	}
	if heard {
		return sendOutcome(*d), nil
	}
	return Outcome{Document: *d, Failed: true, Key: KeySendingDocumentError, Message: v.Message, Estado: d.Estado}, nil
}

// expired stores a document that cannot be signed because the company's
// certificate is expired or missing (estado 00, numbered, nothing
// submitted) and answers ExpiredClientCertificate.
func (j *job) expired(ctx context.Context, d *tenant.Document, expiry time.Time) (Outcome, error) {
	msg := "The company has no signing certificate; upload one (Certificado) and send the document again."
	if !expiry.IsZero() {
		msg = fmt.Sprintf("The company's signing certificate expired on %s; upload a new one (Certificado) and send the document again.",
			expiry.In(hacienda.CostaRica).Format(time.DateOnly))
	}
	j.keepPending(ctx, d, msg)
	j.log.InfoContext(ctx, "document kept pending: certificate expired or missing")
	return Outcome{Document: *d, Failed: true, Key: KeyExpiredClientCertificate, Message: msg, Estado: d.Estado}, nil
}

// sendOutcome is the send call's answer for a stored document, as given
// the first time and replayed afterwards.
func sendOutcome(d tenant.Document) Outcome {
	o := Outcome{Document: d, Estado: d.Estado}
	switch {
	case d.Estado == tenant.StatePending:
		o.Failed, o.Key, o.Message = true, KeyExpiredClientCertificate, d.LastError
	case d.Estado == tenant.StateNotSentYet:
		o.Failed, o.Key, o.Message = true, KeySendingDocumentError, d.LastError
		if o.Message == "" {
			o.Message = "The tax authority has not received the document yet; it will be sent again."
		}
	case d.Estado == tenant.StateError && d.SubmittedAt.IsZero():
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
