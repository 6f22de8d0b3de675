package pipeline

import (
	"context"
	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/signer"
	"facturad/tenant"
	"fmt"
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
	sctx, cancel := context.WithTimeout(ctx, p.o.SubmitTimeout)
	st, known, err := p.statusOf(sctx, subject{companyID: c.ID, key: clave, clave: clave, issuer: emisor, ambiente: c.Ambiente}, false)
	cancel()
	switch {
	case err != nil && recepcion.Judge(err).Kind == recepcion.BadCredentials:
		return invalidField("UsuarioHacienda", "the tax authority refused the company's user or password when asked about the supplier's document: correct UsuarioHacienda and ContrasenaHacienda; nothing was numbered")
	case err != nil:
		return &OverloadError{
			Dependency: true,
			Reason:     "The tax authority could not be asked about the supplier's document (" + unreadableReason(err) + "); nothing was numbered. Try again shortly.",
			After:      5 * time.Second,
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
