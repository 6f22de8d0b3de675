package tenant

import (
	"context"
	"fmt"
)

// Issuer is what the document pipeline needs to know about the company and
// branch a document is issued for: the Emisor data, the branch code of the
// consecutivo, the certificate's expiry and version. It carries the sealed
// secrets as stored; they are opened only by the methods below that say so.
type Issuer struct {
	Company Company
	Branch  Branch
}

// Issuer returns a company and one of its branches for the service's own
// pipeline. It checks no principal (the pipeline takes the ids from an
// authenticated principal or from a stored document); a branch of another
// company is ErrNotFound.
func (s *Service) Issuer(ctx context.Context, companyID, branchID int64) (Issuer, error) {
	c, b, err := s.store.CompanyBranch(ctx, companyID, branchID)
	if err != nil {
		return Issuer{}, err
	}
	// A company written by a release before environments, while a
	// rolling upgrade runs, issues in the default one until adopted.
	c.Ambiente = AmbienteFor(c, s.ambiente)
	return Issuer{Company: c, Branch: b}, nil
}

// AuthorizeDocument reports whether p may see the documents and the
// received documents of company companyID, whichever of its branches holds
// them: the rule of the listings (ListCompany), so that every document a
// listing shows its caller reads, checks, prints and downloads for it, and
// no other (decision 151). ErrNotFound otherwise, exactly as a missing
// document answers.
func (s *Service) AuthorizeDocument(ctx context.Context, p Principal, companyID int64) error {
	return s.documentsVisible(ctx, p, companyID)
}

// HaciendaCredentials opens a company's tax-authority user and password
// for the pipeline's calls to the tax authority. It checks no principal.
func (s *Service) HaciendaCredentials(ctx context.Context, companyID int64) (username string, password Secret, err error) {
	c, err := s.store.Company(ctx, companyID)
	if err != nil {
		return "", nil, fmt.Errorf("company %d: %w", companyID, err)
	}
	return s.HaciendaCredentialsOf(c)
}

// HaciendaCredentialsOf opens the tax-authority user and password of a
// company already read (from Issuer), sparing a second read of it.
func (s *Service) HaciendaCredentialsOf(c Company) (username string, password Secret, err error) {
	pass, err := s.sealer.Open(c.ID, PurposeHaciendaPassword, c.SealedContrasenaHacienda)
	if err != nil {
		return "", nil, fmt.Errorf("company %d: open tax-authority password: %w", c.ID, err)
	}
	return c.UsuarioHacienda, pass, nil
}

// CertificateVersion returns the version of the company's current
// certificate (it grows with every upload), for the signer's per-company
// cache. It checks no principal.
func (s *Service) CertificateVersion(ctx context.Context, companyID int64) (int64, error) {
	c, err := s.store.Company(ctx, companyID)
	if err != nil {
		return 0, fmt.Errorf("company %d: %w", companyID, err)
	}
	return c.CertificateVersion, nil
}

// CertificateP12 opens the company's .p12 file and its PIN, with the
// version they belong to, for the signer's per-company cache. It checks no
// principal; the caller must not log or keep the returned secrets.
func (s *Service) CertificateP12(ctx context.Context, companyID int64) (p12, pin []byte, version int64, err error) {
	c, err := s.store.Company(ctx, companyID)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("company %d: %w", companyID, err)
	}
	if len(c.SealedCertificate) == 0 {
		return nil, nil, 0, fmt.Errorf("company %d has no certificate: %w", companyID, ErrNotFound)
	}
	p12, err = s.sealer.Open(c.ID, PurposeCertificate, c.SealedCertificate)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("company %d: open certificate: %w", c.ID, err)
	}
	pin, err = s.sealer.Open(c.ID, PurposeCertificatePIN, c.SealedCertificatePIN)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("company %d: open certificate PIN: %w", c.ID, err)
	}
	return p12, pin, c.CertificateVersion, nil
}
