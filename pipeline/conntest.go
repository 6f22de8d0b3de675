package pipeline

import (
	"context"
	"errors"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/api"
	"facturad/hacienda/recepcion"
	"facturad/signer"
	"facturad/tenant"
)

// The connection test of A.14: whether a company could issue now. It
// logs in afresh at the company's environment and opens its certificate,
// and sends nothing.

// ConnectionTest is what a connection test found.
type ConnectionTest struct {
	// Ambiente is the company's environment, where it logged in.
	Ambiente string
	// Token is api.ConnectionOK when the token service gave a token for the
	// company's user and password; otherwise why not: the token service's
	// own refusal text ("Invalid user credentials"), or, when it could not
	// be asked, a reason starting with "unreachable: " (or "not tried: ").
	Token string
	// Certificado is api.ConnectionOK when the company's certificate opens
	// with its PIN and is valid now; otherwise why not (none, the PIN,
	// the file, expired on…, not valid before…).
	Certificado string
	// IdentificacionCoincide says the certificate opened and carries the
	// company's identification number (hacienda.SameNumber).
	IdentificacionCoincide bool
	// VencimientoCertificado is when the certificate expires: the one
	// opened, else the expiry recorded when it was uploaded; zero when the
	// company has none.
	VencimientoCertificado time.Time
}

// Certificates gives a company's current signing certificate, the one its
// documents are signed with (*signer.Cache satisfies it). A certificate
// that is expired or not yet valid comes back with an error wrapping
// signer.ErrCertificateExpired.
type Certificates interface {
	Certificate(ctx context.Context, companyID int64) (*signer.Certificate, error)
}

// TestConnection runs the connection test of the company for pr, who must
// be allowed to read it (another tenant's company is tenant.ErrNotFound).
// Whatever the test finds is in the ConnectionTest, never an error: only
// a company that cannot be read is.
//
// The certificate is the one documents are signed with (Certificates:
// the signer's cache, which opens a newly uploaded one). The login is a
// password grant at the company's environment (CheckLogin, never the
// cached session's token), paced by the limiter like every call of the
// company to the tax authority and bounded by SubmitTimeout. A login that
// works resumes the company's documents stopped on its credentials, as a
// check call's does.
func (p *Pipeline) TestConnection(ctx context.Context, pr tenant.Principal, companyID int64) (ConnectionTest, error) {
	c, err := p.o.Issuers.VisibleCompany(ctx, pr, companyID)
	if err != nil {
		return ConnectionTest{}, err
	}
	ctx, cancel := p.workCtx(ctx)
	defer cancel()
	out := ConnectionTest{Ambiente: c.Ambiente}
	out.Certificado, out.IdentificacionCoincide, out.VencimientoCertificado = p.testCertificate(ctx, c)
	out.Token = p.testLogin(ctx, c)
	p.log.InfoContext(ctx, "connection test", "company", c.ID, "ambiente", c.Ambiente,
		"token_ok", out.Token == api.ConnectionOK, "certificado_ok", out.Certificado == api.ConnectionOK,
		"identificacion_coincide", out.IdentificacionCoincide)
	return out, nil
}

// testLogin logs in with the company's credentials at its environment and
// says how it went.
func (p *Pipeline) testLogin(ctx context.Context, c tenant.Company) string {
	creds, err := p.credentialsOf(c)
	if err != nil {
		p.log.WarnContext(ctx, "connection test: the company's tax-authority password cannot be opened", "company", c.ID, "err", err)
		return "not tried: the stored tax-authority password cannot be opened"
	}
	ctx, cancel := context.WithTimeout(ctx, p.o.SubmitTimeout)
	defer cancel()
	start := time.Now()
	err = p.o.Limiter.Wait(ctx, limitKey(c.ID))
	p.metrics.observe(stageLimit, start)
	if err != nil {
		return "not tried: the company's calls to the tax authority are paced, and its turn did not come in time"
	}
	err = p.submitter(c.Ambiente).CheckLogin(ctx, creds)
	var le *recepcion.LoginError
	switch {
	case err == nil:
		// The credentials work: the company's documents stopped on them
		// go on at once.
		p.resumeCompany(ctx, c.ID, "connection test")
		return api.ConnectionOK
	case errors.As(err, &le):
		return le.Reason
	}
	return "unreachable: " + recepcion.Judge(err).Reason
}

// testCertificate opens the company's certificate and judges it now.
func (p *Pipeline) testCertificate(ctx context.Context, c tenant.Company) (reason string, coincide bool, expiry time.Time) {
	expiry = c.CertificateExpiry
	if len(c.SealedCertificate) == 0 {
		return "the company has no certificate", false, expiry
	}
	cert, err := p.o.Certificates.Certificate(ctx, c.ID)
	if cert == nil {
		if err == nil {
			err = errors.New("no certificate given")
		}
		return p.unopened(ctx, c.ID, err), false, expiry
	}
	// An error with the certificate is its validity, judged below on the
	// pipeline's clock.
	leaf := cert.Leaf
	expiry = leaf.NotAfter
	id, err := signer.CertificateIdentification(leaf)
	coincide = err == nil && hacienda.SameNumber(id.Numero, c.NumeroIdentificacion)
	now := p.o.Clock()
	switch {
	case now.Before(leaf.NotBefore):
		return "not valid before " + api.LocalTime(leaf.NotBefore), coincide, expiry
	case !now.Before(leaf.NotAfter):
		return "expired on " + api.LocalTime(leaf.NotAfter), coincide, expiry
	}
	return api.ConnectionOK, coincide, expiry
}

// unopened says why the company's certificate could not be opened; a
// cause that is not the file's (the store, the master key) is logged and
// said in general words.
func (p *Pipeline) unopened(ctx context.Context, companyID int64, err error) string {
	switch {
	case errors.Is(err, tenant.ErrNotFound):
		return "the company has no certificate"
	case errors.Is(err, signer.ErrWrongPIN):
		return "the stored PIN does not open the certificate"
	case errors.Is(err, signer.ErrNotPKCS12):
		return "the stored certificate is not a PKCS#12 (.p12/.pfx) file"
	case errors.Is(err, signer.ErrNoPrivateKey), errors.Is(err, signer.ErrNoCertificate):
		return "the stored certificate file holds no private key with its certificate"
	case errors.Is(err, signer.ErrUnsupportedKey):
		return "the certificate's key is not one the tax authority accepts (RSA of at least 2048 bits)"
	case errors.Is(err, signer.ErrTooCostly):
		return "the stored certificate file asks for more key-derivation iterations than the service derives"
	case ctx.Err() != nil:
		return "not opened: the test ran out of time"
	}
	p.log.WarnContext(ctx, "connection test: the company's certificate cannot be opened", "company", companyID, "err", err)
	return "the stored certificate cannot be opened"
}
