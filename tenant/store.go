package tenant

import "context"

// Store keeps companies, branches and API users. Implementations are
// tenant/postgres (production, shared by every replica) and tenant/sqlite
// (the embedded default); tenant/storetest runs one conformance suite over
// both. Methods return ErrNotFound for a missing record and ErrConflict for a
// broken unique rule, wrapped with context.
//
// A Store does no authorization: the Service decides who may call what.
type Store interface {
	// NextCompanyID reserves a company id for CreateCompany, so that the
	// company's secrets can be sealed with its id as associated data before
	// the row exists. A reserved id that is never used is skipped, never
	// handed out again.
	NextCompanyID(ctx context.Context) (int64, error)
	// CreateCompany inserts the company, its first branch and that branch's
	// first API user in one transaction, and sets the branch's and user's IDs,
	// their CompanyID and BranchID, and every CreatedAt and UpdatedAt. c.ID
	// must come from NextCompanyID. If any insert fails none is kept.
	CreateCompany(ctx context.Context, c *Company, b *Branch, u *APIUser) error
	// UpdateCompany replaces every field of the company with c.ID but ID,
	// OwnerID, CreatedAt, UpdatedAt and the certificate, sets UpdatedAt, and
	// reads the stored company back into c.
	//
	// The certificate (SealedCertificate, SealedCertificatePIN,
	// CertificateExpiry) is written only when newCertificate is true, and
	// then the same statement sets CertificateVersion to the stored version
	// plus one: uploads that race, on one replica or several, each get a
	// distinct version, greater than any before it, and the last one stored
	// has the greatest. When newCertificate is false the stored certificate
	// and version are kept, whatever c holds, so that an update built from
	// an older read cannot put back a replaced certificate under the new
	// version. c.CertificateVersion is never written.
	UpdateCompany(ctx context.Context, c *Company, newCertificate bool) error
	// Company returns one company.
	Company(ctx context.Context, id int64) (Company, error)
	// SearchCompanies returns the companies that match q, ordered by legal
	// name then id, at most min(q.Limit, 100) of them (100 when q.Limit <= 0).
	SearchCompanies(ctx context.Context, q CompanyQuery) ([]Company, error)

	// CreateBranch inserts a branch and its first API user in one
	// transaction. A second branch with the same Sucursal code in one company
	// is ErrConflict.
	CreateBranch(ctx context.Context, b *Branch, u *APIUser) error
	// UpdateBranch replaces every field of the branch with b.ID but ID,
	// CompanyID and CreatedAt, and sets UpdatedAt.
	UpdateBranch(ctx context.Context, b *Branch) error
	// Branch returns one branch.
	Branch(ctx context.Context, id int64) (Branch, error)
	// CompanyBranch returns a branch with its company, read together (a
	// document's issuer, read on every send). A branch that does not exist
	// or is another company's is ErrNotFound.
	CompanyBranch(ctx context.Context, companyID, branchID int64) (Company, Branch, error)
	// Branches lists a company's branches ordered by id. A company that
	// does not exist is ErrNotFound, not an empty list (the Service relies
	// on it to list an admin's or a branch user's branches in one read).
	Branches(ctx context.Context, companyID int64) ([]Branch, error)

	// CreateAPIUser inserts a user and sets ID and CreatedAt. A Username
	// taken in the same company (or, for a user without a company, by
	// another such user) is ErrConflict.
	CreateAPIUser(ctx context.Context, u *APIUser) error
	// APIUserByTokenHash finds the user whose TokenHash equals h.
	APIUserByTokenHash(ctx context.Context, h []byte) (APIUser, error)
	// APIUserByUsername finds a company's user by name; companyID zero
	// means the users without a company (admins and resellers). Names are
	// unique only within those scopes.
	APIUserByUsername(ctx context.Context, companyID int64, username string) (APIUser, error)
	// APIUsers lists the users of a company, of one branch when branchID is
	// not zero, ordered by id. The Service uses it to drop cached
	// credentials when a company or branch is deactivated.
	APIUsers(ctx context.Context, companyID, branchID int64) ([]APIUser, error)
	// SetAPIUserActive switches a user on or off.
	SetAPIUserActive(ctx context.Context, id int64, active bool) error
	// SetAPIUserPasswordHash replaces user id's password hash with newHash
	// if it is still oldHash (nothing happens otherwise): a hash is
	// re-encoded on a successful login, and must not undo a change made
	// meanwhile.
	SetAPIUserPasswordHash(ctx context.Context, id int64, oldHash, newHash string) error
	// SetAPIUserToken replaces user id's token hash with newHash if it is
	// still oldHash; otherwise (a rotation raced this one) ErrConflict.
	SetAPIUserToken(ctx context.Context, id int64, oldHash, newHash []byte) error

	// Ping reports whether the store is reachable (for /readyz).
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}
