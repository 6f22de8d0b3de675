package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/signer"
	"facturad/tenant"
)

// The receiver's side (A.11): a company uploads a document a supplier
// issued to it and answers it with a receiver's message (MensajeReceptor),
// which the service numbers (types 05, 06, 07), signs, stores, submits and
// tracks. The message's state moves through the same transitions as a
// document's (lifecycle.go): each step works on a tenant.Document view of
// the received row (receivedView) so that move, afterSubmit, applyStatus
// and verifyAnswer apply unchanged, and the result is copied back
// (absorb) before the row is stored.

// ReceivedTerminal is the terminal a receiver's message is numbered under:
// A.11 names none, so every message of a branch takes the first one, as a
// document sent without a terminal does.
const ReceivedTerminal = "00001"

// ReceiveRequest is the body of POST /api/received/v4 (A.11), decoded:
// the supplier's signed XML (no longer base64), the company's answer and
// the caller's id_externo.
type ReceiveRequest struct {
	XML       []byte                  `json:"xml"`
	Answer    hacienda.ReceptorAnswer `json:"answer"`
	IDExterno string                  `json:"id_externo"`
}

// receiveBody is the JSON of A.11 as it arrives.
type receiveBody struct {
	XML                         *string         `json:"xml"`
	Mensaje                     json.RawMessage `json:"mensaje"`
	DetalleMensaje              string          `json:"detalleMensaje"`
	CodigoActividad             string          `json:"codigoActividad"`
	CondicionImpuesto           string          `json:"condicionImpuesto"`
	MontoTotalImpuestoAcreditar hacienda.Amount `json:"montoTotalImpuestoAcreditar"`
	MontoTotalDeGastoAplicable  hacienda.Amount `json:"montoTotalDeGastoAplicable"`
	IDExterno                   string          `json:"id_externo"`
}

// maxIDExterno is the longest id_externo, as for documents.
const maxIDExterno = 100

// DecodeReceiveRequest reads the A.11 body. mensaje may be given as a
// string or a number; xml must be base64 (line breaks allowed). Every
// problem of the body's shape is reported at once, on the contract's field
// names; the answer's own rules are checked by Receive.
func DecodeReceiveRequest(body []byte) (*ReceiveRequest, error) {
	var b receiveBody
	if err := json.Unmarshal(body, &b); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, invalidField(te.Field, "has the wrong JSON type ("+te.Value+")")
		}
		return nil, invalidField("body", "must be a JSON object with the fields of a received document")
	}
	fe := &fieldError{fields: map[string][]string{}}
	add := func(f, m string) { fe.fields[f] = append(fe.fields[f], m) }
	r := &ReceiveRequest{
		IDExterno: strings.TrimSpace(b.IDExterno),
		Answer: hacienda.ReceptorAnswer{
			DetalleMensaje:              b.DetalleMensaje,
			CodigoActividad:             b.CodigoActividad,
			CondicionImpuesto:           b.CondicionImpuesto,
			MontoTotalImpuestoAcreditar: b.MontoTotalImpuestoAcreditar,
			MontoTotalDeGastoAplicable:  b.MontoTotalDeGastoAplicable,
		},
	}
	switch {
	case b.XML == nil || strings.TrimSpace(*b.XML) == "":
		add(hacienda.FieldReceivedXML, "is required: the supplier's signed XML, in base64")
	default:
		x, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(*b.XML), ""))
		if err != nil {
			add(hacienda.FieldReceivedXML, "is not base64: send the supplier's signed XML encoded in base64")
		}
		r.XML = x
	}
	if m := bytes.TrimSpace(b.Mensaje); len(m) > 0 && string(m) != "null" {
		var s string
		if err := json.Unmarshal(m, &s); err != nil {
			var n json.Number
			if json.Unmarshal(m, &n) != nil {
				add("mensaje", "must be 1 (accepted), 2 (partially accepted) or 3 (rejected)")
			}
			s = n.String()
		}
		r.Answer.Mensaje = s
	}
	if utf8.RuneCountInString(r.IDExterno) > maxIDExterno {
		add("id_externo", fmt.Sprintf("must have at most %d characters", maxIDExterno))
	}
	if len(fe.fields) > 0 {
		return nil, fe
	}
	return r, nil
}

// ReceivedOutcome is the answer of a receive or check call: the received
// document as stored and what the call says about it. Failed calls answer
// 500 with the received document as the body, as a failed send does.
type ReceivedOutcome struct {
	Received tenant.ReceivedDocument
	Failed   bool
	Key      string
	Message  string
	// Estado is the estado the answer shows; it differs from the stored
	// one only when a check could not read the tax authority's answer.
	Estado tenant.State
}

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
func (p *Pipeline) Receive(ctx context.Context, pr tenant.Principal, req *ReceiveRequest) (ReceivedOutcome, error) {
	if err := p.running(); err != nil {
		p.metrics.refused.WithLabelValues("stopping").Inc()
		return ReceivedOutcome{}, err
	}
	if pr.Role != tenant.RoleBranch || pr.CompanyID == 0 || pr.BranchID == 0 {
		// Like documents, messages are numbered by a branch.
		return ReceivedOutcome{}, fmt.Errorf("receive as %s: %w", pr.Role, tenant.ErrNotFound)
	}
	if req == nil {
		return ReceivedOutcome{}, invalidField("body", "a received document is required")
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
			return p.repeatReceived(ctx, rs, is, req, prev, hash, log)
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
	// finish it should this call die before it is signed.
	answer, err := answerRequest(req)
	if err != nil {
		return ReceivedOutcome{}, fmt.Errorf("encode the answer: %w", err)
	}
	now := p.o.Clock()
	r := &tenant.ReceivedDocument{
		CompanyID: is.Company.ID, BranchID: is.Branch.ID,
		IDExterno: req.IDExterno, RequestHash: hash, Request: answer,
		Clave: doc.Clave, TipoDocumento: string(doc.Type),
		EmisorTipo: doc.Emisor.Identificacion.Tipo, EmisorNumero: doc.Emisor.Identificacion.Numero,
		EmisorNombre: doc.Emisor.Nombre,
		ReceptorTipo: doc.Receptor.Identificacion.Tipo, ReceptorNumero: doc.Receptor.Identificacion.Numero,
		FechaEmision:     doc.FechaEmision,
		TotalImpuesto:    m.MontoTotalImpuesto.String(),
		TotalComprobante: m.TotalFactura.String(),
		SupplierXML:      req.XML,
		FirmaPolitica:    sp.policy,
		Mensaje:          fmt.Sprint(m.Mensaje),
		Tipo:             tipo, Terminal: ReceivedTerminal,
		FechaMensaje:  now.In(crTime).Truncate(time.Second),
		Estado:        tenant.StatePending,
		NextAttemptAt: now.Add(p.o.InFlightGrace),
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
	out, err := p.issueReceived(ctx, rs, is, r, m, log, true)
	if err == nil {
		p.metrics.outcomes.WithLabelValues(opReceive, string(out.Estado)).Inc()
	}
	return out, err
}

// answerRequest is what a message keeps of its request to be finished
// later (tenant.ReceivedDocument.Request): the request without the
// supplier's XML, which the row holds already.
func answerRequest(req *ReceiveRequest) ([]byte, error) {
	return json.Marshal(&ReceiveRequest{Answer: req.Answer, IDExterno: req.IDExterno})
}

// issueReceived gives a numbered message its consecutivo, builds and signs
// it with the company's certificate, stores it (05, held for
// InFlightGrace) before submitting it (C.3), submits it and stores what
// the submission means. The receive call, a repeat of it and the
// background worker finishing an interrupted message all go through it;
// call says it is a receive call (the crash test's fault points stop only
// those).
func (p *Pipeline) issueReceived(ctx context.Context, rs tenant.ReceivedStore, is tenant.Issuer, r *tenant.ReceivedDocument, m *hacienda.MensajeReceptor, log *slog.Logger, call bool) (ReceivedOutcome, error) {
	fault := func(step string) {
		if call {
			faultAt(step)
		}
	}
	c, err := hacienda.NewConsecutivo(is.Branch.Sucursal, r.Terminal, r.Tipo, r.Numero)
	if err != nil {
		p.keepReceivedPending(ctx, rs, r, "the consecutivo could not be built: "+err.Error())
		return ReceivedOutcome{}, fmt.Errorf("consecutivo: %w", err)
	}
	r.Consecutivo = c.String()
	m.NumeroConsecutivoReceptor, m.FechaEmisionDoc = r.Consecutivo, r.FechaMensaje
	log = log.With("consecutivo", r.Consecutivo)

	// Build and sign with the company's certificate.
	start := time.Now()
	unsigned, err := hacienda.MarshalMensajeReceptor(m)
	p.metrics.observe(stageBuild, start)
	if err != nil {
		p.keepReceivedPending(ctx, rs, r, "the message could not be built")
		return ReceivedOutcome{}, fmt.Errorf("build the message: %w", err)
	}
	fault(FaultBuilt)
	if is.Company.CertificateExpired(p.o.Clock()) {
		return p.receivedExpired(ctx, rs, r, is.Company.CertificateExpiry), nil
	}
	start = time.Now()
	turn, err := p.turns.acquire(ctx, is.Branch.ID)
	p.metrics.observe(stageTurn, start)
	if err != nil {
		return ReceivedOutcome{}, err
	}
	start = time.Now()
	signed, err := p.o.Signer.Sign(ctx, is.Company.ID, unsigned, signer.WithCanonicalInput())
	turn()
	p.metrics.observe(stageSign, start)
	switch {
	case errors.Is(err, signer.ErrCertificateExpired):
		return p.receivedExpired(ctx, rs, r, is.Company.CertificateExpiry), nil
	case errors.Is(err, tenant.ErrNotFound):
		return p.receivedExpired(ctx, rs, r, time.Time{}), nil
	case err != nil:
		p.keepReceivedPending(ctx, rs, r, "the message could not be signed")
		return ReceivedOutcome{}, fmt.Errorf("sign the message: %w", err)
	}
	fault(FaultSigned)

	// Store before submitting (C.3), held for InFlightGrace: should this
	// process die, the background worker takes it up after that, status
	// first.
	r.SignedXML = signed
	v := receivedView(r)
	if err := move(&v, tHeld, tenant.StateNotSentYet, "", p.o.Clock().Add(p.o.InFlightGrace)); err != nil {
		return ReceivedOutcome{}, err
	}
	absorb(r, v)
	start = time.Now()
	err = p.saveReceived(ctx, rs, r)
	p.metrics.observe(stageStore, start)
	if errors.Is(err, tenant.ErrConflict) {
		// Another call (a repeat, the background worker) took the message
		// up and stored it first: that one submits it, not this one.
		log.InfoContext(ctx, "the message was taken up by another call; not submitted")
		return ReceivedOutcome{}, p.receivedInProgress()
	}
	if err != nil {
		return ReceivedOutcome{}, fmt.Errorf("store the signed message: %w", err)
	}
	fault(FaultStored)
	return p.submitReceived(ctx, rs, is.Company, r, log, fault)
}

// receivedInProgress is the answer to a receive whose message another call
// is working on.
func (p *Pipeline) receivedInProgress() error {
	p.metrics.refused.WithLabelValues("in_progress").Inc()
	return &OverloadError{
		Reason: "A message with this id_externo is being sent right now; ask again shortly for its answer.",
		After:  p.o.OverloadRetryAfter,
	}
}

// supplier is a supplier's document that passed supplierDocument's
// checks, with the message made from the answer.
type supplier struct {
	doc *hacienda.Document
	msg *hacienda.MensajeReceptor
	// policy is the policy the supplier's signature commits to, "" for
	// none; trust what its certificate rests on, the label of
	// supplier_signatures_total (supplierSigner).
	policy, trust string
}

// supplierDocument reads and checks the supplier's document and builds
// the message from the answer: a v4.4 document of a type that is
// answered, whose XAdES signature verifies over the whole document and was
// made by its Emisor (supplierSigner), whose Receptor is the calling
// company, and an answer that agrees with its totals. Any signature policy
// is accepted, since the tax authority judges the document and Receive
// asks it before answering. Problems of the document are reported on xml.
func (p *Pipeline) supplierDocument(req *ReceiveRequest, c tenant.Company) (supplier, error) {
	bad := func(msg string) error { return invalidField(hacienda.FieldReceivedXML, msg) }
	doc, err := hacienda.ParseXML(req.XML)
	if err != nil {
		return supplier{}, bad("is not a v4.4 electronic document (FE, ND, NC or FEE): " + err.Error())
	}
	if err := hacienda.CheckAnswerable(doc.Type); err != nil {
		return supplier{}, bad(err.Error())
	}
	res, err := signer.VerifyWith(req.XML, signer.VerifyOptions{AnyPolicy: true, Cache: p.supplierCerts})
	if err != nil {
		return supplier{}, bad("the supplier's signature does not verify (the document was altered after it was signed, or its signature is malformed): " + err.Error())
	}
	trust, err := p.supplierSigner(doc, res)
	if err != nil {
		return supplier{}, bad(err.Error())
	}
	if doc.Receptor == nil || doc.Receptor.Identificacion.IsZero() {
		return supplier{}, bad("the document names no Receptor, so it is not addressed to this company")
	}
	if !hacienda.SameNumber(doc.Receptor.Identificacion.Numero, c.NumeroIdentificacion) {
		return supplier{}, bad(fmt.Sprintf("the document is addressed to %s, not to this company (%s): only the receptor answers it",
			doc.Receptor.Identificacion.Numero, c.NumeroIdentificacion))
	}
	m, err := hacienda.NewMensajeReceptor(doc, req.Answer)
	if err != nil {
		return supplier{}, err
	}
	sp := supplier{doc: doc, msg: m, trust: trust}
	if res.Policy != nil {
		sp.policy = res.Policy.Identifier
	}
	return sp, nil
}

// supplierSigner checks who signed a supplier's document: a certificate
// of its Emisor (the same identification), and, with SupplierPKI, one the
// national PKI vouches for unless it was issued outside it (see
// Options.SupplierPKI). It returns what the certificate rests on:
// national_pki, tax_authority, or unchecked without SupplierPKI.
func (p *Pipeline) supplierSigner(doc *hacienda.Document, res *signer.VerifyResult) (string, error) {
	id, err := signer.CertificateIdentification(res.Certificate)
	if err != nil {
		return "", fmt.Errorf("the supplier's signing certificate carries no identification, so it cannot be told to be the Emisor's: %v", err)
	}
	if !hacienda.SameNumber(id.Numero, doc.Emisor.Identificacion.Numero) {
		return "", fmt.Errorf("the document is signed with the certificate of %s, not of its Emisor %s", id.Numero, doc.Emisor.Identificacion.Numero)
	}
	pki := p.o.SupplierPKI
	if pki == nil {
		return "unchecked", nil
	}
	err = res.ChainTo(pki.Roots, pki.Intermediates)
	switch {
	case err == nil:
		return "national_pki", nil
	case pki.NamesAuthority(res.Certificate):
		return "", fmt.Errorf("the supplier's certificate names an authority of the national PKI as its issuer but does not chain to it at its signing time: %v", err)
	}
	return "tax_authority", nil
}

// alreadyAnswered refuses a second answer of a company to a document.
func alreadyAnswered(prev tenant.ReceivedDocument) error {
	msg := "this document was already answered by this company"
	if prev.Consecutivo != "" {
		msg += " (message " + prev.Consecutivo + ", mensaje " + prev.Mensaje + ")"
	}
	return invalidField(hacienda.FieldReceivedXML, msg+"; the tax authority takes one answer per document and receiver")
}

// supplierAccepted asks the tax authority, with the company's credentials,
// about the supplier's document. Only a document it accepted is answered:
// the tax authority rejects a message about any other (an unknown clave,
// a rejected document, one not judged yet), so a message is not numbered
// for it. When the tax authority cannot be asked, nothing is numbered
// either and the caller is told to try again (503).
func (p *Pipeline) supplierAccepted(ctx context.Context, c tenant.Company, clave, emisor string) error {
	probe := tenant.Document{CompanyID: c.ID, Clave: clave, EmisorNumero: emisor}
	sctx, cancel := context.WithTimeout(ctx, p.o.SubmitTimeout)
	st, known, err := p.statusOf(sctx, &probe)
	cancel()
	switch {
	case err != nil && recepcion.Judge(err).Kind == recepcion.BadCredentials:
		return invalidField("UsuarioHacienda", "the tax authority refused the company's user or password when asked about the supplier's document: correct UsuarioHacienda and ContrasenaHacienda; nothing was numbered")
	case err != nil:
		return &OverloadError{
			Reason: "The tax authority could not be asked about the supplier's document (" + unreadableReason(err) + "); nothing was numbered. Try again shortly.",
			After:  5 * time.Second,
		}
	case !known:
		return invalidField(hacienda.FieldReceivedXML, "the tax authority does not know this document (clave "+clave+"): the supplier has not sent it or it was not received, and only a document the tax authority accepted can be answered")
	}
	switch st.Estado {
	case recepcion.EstadoAceptado:
		return nil
	case recepcion.EstadoRechazado:
		return invalidField(hacienda.FieldReceivedXML, "the tax authority rejected this document (clave "+clave+"); only a document it accepted can be answered, ask the supplier for a new one")
	}
	return invalidField(hacienda.FieldReceivedXML, "the tax authority has not judged this document yet (ind-estado "+string(st.Estado)+"); answer it once it is accepted")
}

// laneRefusal is the answer to a call that got no turn in its lane.
func (p *Pipeline) laneRefusal(err error) error {
	reason := "The branch's work kept this request waiting too long; try again shortly."
	label := "queue_timeout"
	switch {
	case errors.Is(err, ErrStopping):
		p.metrics.refused.WithLabelValues("stopping").Inc()
		return err
	case errors.Is(err, errCompanyFull):
		reason, label = "Too many documents of this company are being worked on at once; try again shortly.", "company_full"
	case errors.Is(err, errLaneFull):
		reason, label = "Too many documents of this branch are being worked on at once; try again shortly.", "lane_full"
	case errors.Is(err, errAllFull):
		reason, label = "The service is working on as many documents as it can; try again shortly.", "all_full"
	}
	p.metrics.refused.WithLabelValues(label).Inc()
	return &OverloadError{Reason: reason, After: p.o.OverloadRetryAfter}
}

// repeatReceived answers a receive whose id_externo the branch used
// before: a 400 with another body; with the same body, a 503 while a call
// still holds the message, the message finished now when it was left 00
// (its call died, or its certificate had expired: it is built and signed
// again with its number and date), made due again when it was stopped on
// the company's credentials, and the stored message otherwise.
func (p *Pipeline) repeatReceived(ctx context.Context, rs tenant.ReceivedStore, is tenant.Issuer, req *ReceiveRequest, prev tenant.ReceivedDocument, hash []byte, log *slog.Logger) (ReceivedOutcome, error) {
	if !bytes.Equal(prev.RequestHash, hash) || p.heldReceived(prev) {
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
		return p.resumeReceived(ctx, rs, is, &prev, req, log, true)
	case prev.Estado == tenant.StateNotSentYet && prev.NextAttemptAt.IsZero() && len(prev.SignedXML) > 0:
		// Stopped on the company's credentials: the repeat asks for another
		// attempt, which the background worker makes, status first.
		if err := sendable(is.Company); err != nil {
			return ReceivedOutcome{}, err
		}
		v := receivedView(&prev)
		if err := move(&v, tRescheduled, prev.Estado, "The message will be sent again shortly.", p.o.Clock()); err != nil {
			return ReceivedOutcome{}, err
		}
		absorb(&prev, v)
		err := p.saveReceived(ctx, rs, &prev)
		switch {
		case errors.Is(err, tenant.ErrConflict):
			return ReceivedOutcome{}, p.receivedInProgress()
		case err != nil:
			return ReceivedOutcome{}, fmt.Errorf("schedule a message again: %w", err)
		}
	}
	return receivedOutcome(prev), nil
}

// heldReceived reports whether a call (a receive, or the background worker
// that claimed it) holds the message: numbered or stored, not submitted,
// no reason recorded, and its hold not over.
func (p *Pipeline) heldReceived(r tenant.ReceivedDocument) bool {
	return (r.Estado == tenant.StatePending || r.Estado == tenant.StateNotSentYet) &&
		r.LastError == "" && r.SubmittedAt.IsZero() && p.o.Clock().Before(r.NextAttemptAt)
}

// replayReceived answers a repeat with the stored message: a 400 when its
// body differs, a 503 while a call holds it.
func (p *Pipeline) replayReceived(prev tenant.ReceivedDocument, hash []byte) (ReceivedOutcome, error) {
	if !bytes.Equal(prev.RequestHash, hash) {
		return ReceivedOutcome{}, invalidField("id_externo",
			"was already used in this branch for another received document; send a new id_externo, or the same request to get its answer again")
	}
	if p.heldReceived(prev) {
		return ReceivedOutcome{}, p.receivedInProgress()
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
				err = &OverloadError{Reason: "A message with this id_externo was stored meanwhile; ask again for its answer.", After: p.o.OverloadRetryAfter}
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
// numbered but never signed (its call died, or it was kept 00 with a
// reason) from the answer stored with it and the supplier's XML, with its
// company as it is now (resumeReceived). One that cannot be finished stays
// 00 with the reason, and no next attempt.
func (p *Pipeline) finishReceived(ctx context.Context, rs tenant.ReceivedStore, r *tenant.ReceivedDocument, log *slog.Logger) (ReceivedOutcome, error) {
	if len(r.Request) == 0 || len(r.SignedXML) > 0 {
		// Stored without its answer, or signed yet still 00 (the receive
		// call writes neither): nothing safe to build it from.
		return p.stopReceived(ctx, rs, r, log, "The sending of this message was interrupted and it cannot be finished from what was stored; it keeps its number but is not sent.")
	}
	var req ReceiveRequest
	if err := json.Unmarshal(r.Request, &req); err != nil {
		return p.stopReceived(ctx, rs, r, log, "The sending of this message was interrupted and its stored answer could not be read again; it keeps its number but is not sent.")
	}
	req.XML = r.SupplierXML
	is, err := p.o.Issuers.Issuer(ctx, r.CompanyID, r.BranchID)
	if err != nil {
		// The company or branch could not be read now: try again later.
		v := receivedView(r)
		if merr := move(&v, tRetryLater, tenant.StatePending, r.LastError,
			p.o.Clock().Add(backoff(p.o.BackoffBase, p.o.BackoffMax, r.Attempts, 0))); merr != nil {
			return ReceivedOutcome{}, merr
		}
		v.Attempts++
		absorb(r, v)
		if serr := p.saveReceived(ctx, rs, r); serr != nil && !errors.Is(serr, tenant.ErrConflict) {
			log.ErrorContext(ctx, "store a message", "err", serr)
		}
		return ReceivedOutcome{}, fmt.Errorf("company: %w", err)
	}
	return p.resumeReceived(ctx, rs, is, r, &req, log, false)
}

// resumeReceived completes a numbered message left 00 from req, its
// request (the stored answer with the supplier's XML, or the repeat's own,
// which is the same by its hash), checked again against the company is:
// given its consecutivo with its number and date, built, signed, stored
// and submitted, as the receive call would have. One that cannot be
// finished stays 00 with the reason, and no next attempt. The background
// worker (finishReceived) and a repeat of the request, with the issuer it
// has just read, call it; call says it is the repeat.
func (p *Pipeline) resumeReceived(ctx context.Context, rs tenant.ReceivedStore, is tenant.Issuer, r *tenant.ReceivedDocument, req *ReceiveRequest, log *slog.Logger, call bool) (ReceivedOutcome, error) {
	if err := sendable(is.Company); err != nil {
		return p.stopReceived(ctx, rs, r, log, "The message was numbered but cannot be sent: "+err.Error())
	}
	sp, err := p.supplierDocument(req, is.Company)
	if err != nil {
		return p.stopReceived(ctx, rs, r, log, "The message was numbered but its answer no longer passes the checks ("+err.Error()+"); it keeps its number but is not sent.")
	}
	if hacienda.ReceptorMessageType(sp.msg.Mensaje) != r.Tipo {
		return p.stopReceived(ctx, rs, r, log, "The message's stored answer does not match its numbering; it keeps its number but is not sent.")
	}
	return p.issueReceived(ctx, rs, is, r, sp.msg, log, call)
}

// stopReceived keeps a message that cannot be finished 00 with reason and
// answers it.
func (p *Pipeline) stopReceived(ctx context.Context, rs tenant.ReceivedStore, r *tenant.ReceivedDocument, log *slog.Logger, reason string) (ReceivedOutcome, error) {
	p.keepReceivedPending(ctx, rs, r, reason)
	log.WarnContext(ctx, "an interrupted message could not be finished", "reason", reason)
	return receivedOutcome(*r), nil
}

// submitReceived submits a stored, signed message with its
// consecutivoReceptor, records what the answer (or its absence) means
// with afterSubmit, stores and answers it.
func (p *Pipeline) submitReceived(ctx context.Context, rs tenant.ReceivedStore, c tenant.Company, r *tenant.ReceivedDocument, log *slog.Logger, fault func(string)) (ReceivedOutcome, error) {
	sctx, cancel := context.WithTimeout(ctx, p.o.SubmitTimeout)
	defer cancel()
	deadline := p.o.Clock().Add(p.o.SubmitTimeout)
	creds, err := p.credentialsOf(c)
	if err == nil {
		err = p.submitMessage(sctx, creds, r)
	}
	if err == nil && fault != nil {
		fault(FaultSubmitted)
	}
	if err != nil {
		log.WarnContext(ctx, "submission of a receiver's message failed", "err", err)
	}
	v := receivedView(r)
	verdict, heard, err := p.afterSubmit(ctx, &v, err, deadline)
	if err != nil {
		return ReceivedOutcome{}, err
	}
	absorb(r, v)
	serr := p.saveReceived(ctx, rs, r)
	switch {
	case serr == nil:
	case errors.Is(serr, tenant.ErrConflict):
		log.InfoContext(ctx, "the message changed meanwhile; answering its stored state")
		cur, err := rs.ReceivedByClave(ctx, r.CompanyID, r.Clave)
		if err != nil {
			return ReceivedOutcome{}, fmt.Errorf("read the message again: %w", err)
		}
		return receivedOutcome(cur), nil
	case heard:
		log.ErrorContext(ctx, "could not store the tax authority's word on a message", "err", serr)
	default:
		return ReceivedOutcome{}, fmt.Errorf("store a message after its submission: %w", serr)
	}
	if heard {
		return receivedOutcome(*r), nil
	}
	return ReceivedOutcome{Received: *r, Failed: true, Key: KeySendingDocumentError, Message: verdict.Message, Estado: r.Estado}, nil
}

// submitMessage hands a signed receiver's message to the tax authority,
// paced by the company's limiter: the supplier's clave, the supplier as
// emisor, the company as receptor, and the message's consecutivo (spec
// §15.3).
func (p *Pipeline) submitMessage(ctx context.Context, creds recepcion.Credentials, r *tenant.ReceivedDocument) error {
	start := time.Now()
	err := p.o.Limiter.Wait(ctx, limitKey(r.CompanyID))
	p.metrics.observe(stageLimit, start)
	if err != nil {
		return err
	}
	s := recepcion.Submission{
		Clave:               r.Clave,
		Fecha:               r.FechaMensaje,
		Emisor:              recepcion.Party{TipoIdentificacion: r.EmisorTipo, NumeroIdentificacion: r.EmisorNumero},
		Receptor:            recepcion.APIParty(r.ReceptorTipo, r.ReceptorNumero),
		ConsecutivoReceptor: r.Consecutivo,
		SignedXML:           r.SignedXML,
	}
	start = time.Now()
	_, err = p.o.Submitter.Submit(ctx, creds, s)
	p.metrics.observe(stageSubmit, start)
	return err
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
	if err := p.o.Issuers.AuthorizeDocument(ctx, pr, r.CompanyID, r.BranchID); err != nil {
		if errors.Is(err, tenant.ErrNotFound) {
			return tenant.ReceivedDocument{}, fmt.Errorf("received document %s: %w", clave, tenant.ErrNotFound)
		}
		return tenant.ReceivedDocument{}, fmt.Errorf("received document %s: authorize: %w", clave, err)
	}
	return r, nil
}

// CheckReceived runs the check call of a received document (A.11): it
// asks the tax authority about the message (clave-consecutivoReceptor) and
// stores its answer. A message the tax authority does not know and that
// no call holds (05, or 04 it lost) is submitted again at once: the status
// was just asked, so this is the status-first rule of the background
// worker. When the answer cannot be had the outcome is Failed with estado
// 05 and the stored message is unchanged, or, for a settled message, its
// stored verdict with a note.
func (p *Pipeline) CheckReceived(ctx context.Context, pr tenant.Principal, clave string) (ReceivedOutcome, error) {
	if err := p.running(); err != nil {
		return ReceivedOutcome{}, err
	}
	r, err := p.Received(ctx, pr, clave)
	if err != nil {
		return ReceivedOutcome{}, err
	}
	rs, _ := p.receivedStore()
	ctx, cancel := p.workCtx(ctx)
	defer cancel()
	log := p.log.With("company", r.CompanyID, "branch", r.BranchID, "clave", r.Clave, "consecutivo", r.Consecutivo)
	if r.Estado == tenant.StatePending || len(r.SignedXML) == 0 {
		// Numbered but never signed: nothing was sent to ask about.
		return receivedOutcome(r), nil
	}
	v := receivedView(&r)
	sctx, scancel := context.WithTimeout(ctx, p.o.SubmitTimeout)
	st, known, err := p.statusOf(sctx, &v)
	scancel()
	switch {
	case err != nil && r.Estado.Final():
		log.WarnContext(ctx, "check: the tax authority's answer could not be had; answering the stored verdict", "err", err)
		return ReceivedOutcome{Received: r, Estado: r.Estado,
			Message: "The tax authority could not be asked this time (" + unreadableReason(err) + "); this is the verdict it gave before."}, nil
	case err != nil:
		log.WarnContext(ctx, "check: the tax authority's answer could not be had", "err", err)
		return ReceivedOutcome{Received: r, Failed: true, Estado: tenant.StateNotSentYet,
			Message: "The tax authority's answer could not be read (" + unreadableReason(err) + "); the message's stored state is unchanged. Check again later."}, nil
	case known:
		p.applyStatus(ctx, &v, st)
		absorb(&r, v)
		if err := p.saveReceived(ctx, rs, &r); err != nil {
			if !errors.Is(err, tenant.ErrConflict) {
				return ReceivedOutcome{}, fmt.Errorf("store the tax authority's answer: %w", err)
			}
			if r, err = rs.ReceivedByClave(ctx, r.CompanyID, r.Clave); err != nil {
				return ReceivedOutcome{}, fmt.Errorf("read the message again: %w", err)
			}
		}
		out := receivedOutcome(r)
		out.Failed, out.Key = false, ""
		return out, nil
	}
	// Not known to the tax authority.
	held := r.Estado == tenant.StateNotSentYet && r.LastError == "" && r.SubmittedAt.IsZero() && p.o.Clock().Before(r.NextAttemptAt)
	if held || r.Estado.Final() {
		out := receivedOutcome(r)
		out.Failed, out.Key = false, ""
		if out.Message == "" {
			out.Message = "The tax authority has not received this message yet."
		}
		return out, nil
	}
	if r.Estado == tenant.StateSent {
		if err := move(&v, tUnknown, tenant.StateNotSentYet, "The tax authority does not know this message; it is sent again.", p.o.Clock()); err != nil {
			return ReceivedOutcome{}, err
		}
		absorb(&r, v)
	}
	c, err := p.o.Issuers.Issuer(ctx, r.CompanyID, r.BranchID)
	if err != nil {
		return ReceivedOutcome{}, fmt.Errorf("company: %w", err)
	}
	return p.submitReceived(ctx, rs, c.Company, &r, log, nil)
}

// receivedExpired keeps a message that cannot be signed (certificate
// expired or missing) numbered with estado 00 and the reason, and answers
// ExpiredClientCertificate.
func (p *Pipeline) receivedExpired(ctx context.Context, rs tenant.ReceivedStore, r *tenant.ReceivedDocument, expiry time.Time) ReceivedOutcome {
	msg := "The company has no signing certificate; upload one (Certificado). The message keeps its number but was not sent."
	if !expiry.IsZero() {
		msg = fmt.Sprintf("The company's signing certificate expired on %s; upload a new one (Certificado). The message keeps its number but was not sent.",
			expiry.In(crTime).Format(time.DateOnly))
	}
	p.keepReceivedPending(ctx, rs, r, msg)
	return ReceivedOutcome{Received: *r, Failed: true, Key: KeyExpiredClientCertificate, Message: msg, Estado: r.Estado}
}

// keepReceivedPending stores a numbered message that could not go on,
// with the reason, so that its number is kept.
func (p *Pipeline) keepReceivedPending(ctx context.Context, rs tenant.ReceivedStore, r *tenant.ReceivedDocument, reason string) {
	v := receivedView(r)
	if err := move(&v, tStopped, tenant.StatePending, reason, time.Time{}); err != nil {
		p.log.ErrorContext(ctx, "could not keep a message pending", "err", err)
		return
	}
	absorb(r, v)
	if err := p.saveReceived(ctx, rs, r); err != nil {
		p.log.ErrorContext(ctx, "could not store a pending message", "err", err)
	}
}

// saveReceived stores r under a context of its own, like save.
func (p *Pipeline) saveReceived(ctx context.Context, rs tenant.ReceivedStore, r *tenant.ReceivedDocument) error {
	ctx, cancel := p.detached(ctx)
	defer cancel()
	p.receivedEvent(r)
	return rs.SaveReceived(ctx, r)
}

// receivedOutcome is the receive call's answer for a stored message, as
// given the first time and replayed afterwards.
func receivedOutcome(r tenant.ReceivedDocument) ReceivedOutcome {
	o := ReceivedOutcome{Received: r, Estado: r.Estado, Message: r.LastError}
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
	case r.Estado == tenant.StateError && r.SubmittedAt.IsZero():
		o.Failed, o.Key = true, KeySendingDocumentError
	}
	return o
}

// receivedView is the message's state as a tenant.Document, so that the
// document lifecycle applies to it: its Clave is the key the tax authority
// knows the message by (clave-consecutivoReceptor, spec §15.4), its issuer
// the supplier (who the tax authority's answer names).
func receivedView(r *tenant.ReceivedDocument) tenant.Document {
	return tenant.Document{
		ID: r.ID, CompanyID: r.CompanyID, BranchID: r.BranchID,
		Clave: r.Clave + "-" + r.Consecutivo, Consecutivo: r.Consecutivo, Tipo: r.Tipo, Terminal: r.Terminal,
		EmisorTipo: r.EmisorTipo, EmisorNumero: r.EmisorNumero,
		ReceptorTipo: r.ReceptorTipo, ReceptorNumero: r.ReceptorNumero,
		FechaEmision: r.FechaMensaje, SignedXML: r.SignedXML,
		Estado: r.Estado, IndEstado: r.IndEstado, CodigoMensaje: r.CodigoMensaje, MensajeHacienda: r.MensajeHacienda,
		DetalleMensaje: r.DetalleMensaje, ResponseXML: r.ResponseXML, LastError: r.LastError,
		Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt, SubmittedAt: r.SubmittedAt, CheckedAt: r.CheckedAt,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Event: r.Event,
	}
}

// absorb copies the state a step recorded on the view back into r.
func absorb(r *tenant.ReceivedDocument, v tenant.Document) {
	r.Estado, r.IndEstado, r.CodigoMensaje, r.MensajeHacienda = v.Estado, v.IndEstado, v.CodigoMensaje, v.MensajeHacienda
	r.DetalleMensaje, r.ResponseXML, r.LastError = v.DetalleMensaje, v.ResponseXML, v.LastError
	r.Attempts, r.NextAttemptAt, r.SubmittedAt, r.CheckedAt = v.Attempts, v.NextAttemptAt, v.SubmittedAt, v.CheckedAt
	r.Event = v.Event
}
