package pipeline

import (
	"context"
	"facturad/hacienda"
	"facturad/hacienda/msg"
	"facturad/hacienda/recepcion"
	"facturad/signer"
	"facturad/tenant"
	"time"
)

// The supplier's document a company answers (A.11): what it must be before
// a message is numbered for it (a v4.4 document addressed to the company,
// signed by its Emisor, accepted by the tax authority, not answered
// before).

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
func (p *Pipeline) supplierDocument(req *hacienda.ReceiveRequest, c tenant.Company) (supplier, error) {
	bad := func(m msg.Message) error { return invalidField(hacienda.FieldReceivedXML, m) }
	doc, err := hacienda.ParseXML(req.XML)
	if err != nil {
		return supplier{}, bad(msg.SupplierNotV44.With(err.Error()))
	}
	if err := hacienda.CheckAnswerable(doc.Type); err != nil {
		m, _ := msg.Of(err)
		return supplier{}, bad(m)
	}
	res, err := signer.VerifyWith(req.XML, signer.VerifyOptions{AnyPolicy: true, Cache: p.supplierCerts})
	if err != nil {
		return supplier{}, bad(msg.SupplierSignature.With(err.Error()))
	}
	trust, err := p.supplierSigner(doc, res)
	if err != nil {
		m, _ := msg.Of(err)
		return supplier{}, bad(m)
	}
	if doc.Receptor == nil || doc.Receptor.Identificacion.IsZero() {
		return supplier{}, bad(msg.SupplierNotAddressed.With())
	}
	if !hacienda.SameNumber(doc.Receptor.Identificacion.Numero, c.NumeroIdentificacion) {
		return supplier{}, bad(msg.SupplierOtherReceptor.With(doc.Receptor.Identificacion.Numero, c.NumeroIdentificacion))
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
		return "", &describedError{msg.SupplierCertNoID.With(err.Error())}
	}
	if !hacienda.SameNumber(id.Numero, doc.Emisor.Identificacion.Numero) {
		return "", &describedError{msg.SupplierSignedByOther.With(id.Numero, doc.Emisor.Identificacion.Numero)}
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
		return "", &describedError{msg.SupplierChain.With(err.Error())}
	}
	return "tax_authority", nil
}

// alreadyAnswered refuses a second answer of a company to a document.
func alreadyAnswered(prev tenant.ReceivedDocument) error {
	var by any = ""
	if prev.Consecutivo != "" {
		by = msg.AnsweredBy.With(prev.Consecutivo, prev.Mensaje)
	}
	return invalidField(hacienda.FieldReceivedXML, msg.AlreadyAnswered.With(by))
}

// supplierAccepted asks the tax authority, with the company's credentials,
// about the supplier's document. Only a document it accepted is answered:
// the tax authority rejects a message about any other (an unknown clave,
// a rejected document, one not judged yet), so a message is not numbered
// for it. When the tax authority cannot be asked, nothing is numbered
// either and the caller is told to try again (503).
func (p *Pipeline) supplierAccepted(ctx context.Context, c tenant.Company, clave, emisor string) error {
	sctx, cancel := context.WithTimeout(ctx, p.o.SubmitTimeout)
	st, known, err := p.statusOf(sctx, subject{companyID: c.ID, key: clave, clave: clave, issuer: emisor, ambiente: c.Ambiente}, false)
	cancel()
	switch {
	case err != nil && recepcion.Judge(err).Kind == recepcion.BadCredentials:
		return invalidField("UsuarioHacienda", msg.SupplierCredentials.With())
	case err != nil:
		return &OverloadError{
			Dependency: true,
			Reason:     msg.SupplierUnreachable.With(unreadableReason(err)),
			After:      5 * time.Second,
		}
	case !known:
		return invalidField(hacienda.FieldReceivedXML, msg.SupplierUnknown.With(clave))
	}
	switch st.Estado {
	case recepcion.EstadoAceptado:
		return nil
	case recepcion.EstadoRechazado:
		return invalidField(hacienda.FieldReceivedXML, msg.SupplierRejected.With(clave))
	}
	return invalidField(hacienda.FieldReceivedXML, msg.SupplierPending.With(string(st.Estado)))
}
