package tenant

import (
	"context"
	"errors"
	"fmt"

	"facturad/hacienda/msg"
)

// CreateAPIUser adds an API user with the given name to a branch. The
// password and token are generated and returned once. Names are unique
// within a company only, so a taken name says nothing about other tenants;
// one taken in this company is a validation error on usuario.
func (s *Service) CreateAPIUser(ctx context.Context, p Principal, companyID, branchID int64, username string) (Credentials, error) {
	if _, _, err := s.branchFor(ctx, p, companyID, branchID); err != nil {
		return Credentials{}, err
	}
	if err := CheckUsername("usuario", username); err != nil {
		return Credentials{}, err
	}
	u, creds, err := s.newUser(username, RoleBranch, "", "")
	if err != nil {
		return Credentials{}, err
	}
	u.CompanyID, u.BranchID = companyID, branchID
	if err := s.createUser(ctx, &u); err != nil {
		return Credentials{}, err
	}
	return creds, nil
}

// CreateReseller creates a reseller user (admins only; anyone else gets
// ErrNotFound, as the contract has no 403).
func (s *Service) CreateReseller(ctx context.Context, p Principal, username string) (Credentials, error) {
	if p.Role != RoleAdmin {
		return Credentials{}, ErrNotFound
	}
	if err := CheckUsername("usuario", username); err != nil {
		return Credentials{}, err
	}
	u, creds, err := s.newUser(username, RoleReseller, "", "")
	if err != nil {
		return Credentials{}, err
	}
	if err := s.createUser(ctx, &u); err != nil {
		return Credentials{}, err
	}
	return creds, nil
}

func (s *Service) createUser(ctx context.Context, u *APIUser) error {
	if err := s.store.CreateAPIUser(ctx, u); err != nil {
		if errors.Is(err, ErrConflict) {
			if u.CompanyID == 0 {
				return invalidField("usuario", msg.UsernameTaken.With(u.Username))
			}
			return invalidField("usuario", msg.UsernameTakenCompany.With(u.Username))
		}
		return fmt.Errorf("create API user: %w", err)
	}
	return nil
}

// SetAPIUserActive switches one of a company's API users on or off.
// Switching it off drops its cached credentials, so its next request on
// any replica is refused.
func (s *Service) SetAPIUserActive(ctx context.Context, p Principal, companyID, userID int64, active bool) error {
	if _, err := s.companyFor(ctx, p, companyID); err != nil {
		return err
	}
	users, err := s.store.APIUsers(ctx, companyID, 0)
	if err != nil {
		return fmt.Errorf("users of company %d: %w", companyID, err)
	}
	var target *APIUser
	for i := range users {
		if users[i].ID == userID {
			target = &users[i]
		}
	}
	if target == nil {
		return fmt.Errorf("user %d: %w", userID, ErrNotFound)
	}
	if err := s.store.SetAPIUserActive(ctx, userID, active); err != nil {
		return fmt.Errorf("user %d: %w", userID, err)
	}
	if !active {
		return s.forgetUsers(ctx, []APIUser{*target})
	}
	return nil
}

// The bootstrap admin's default user name, and the minimum lengths of its
// configured secrets.
const (
	DefaultAdminUser = "admin"
	MinAdminPassword = 12
	MinAdminToken    = 32
)

// EnsureAdmin creates the bootstrap admin at first start. Empty values are
// generated (user name "admin", a random password and token) and returned
// so that they can be printed once. When the named admin already exists
// nothing is changed and created is false: configured values are not
// compared with the stored ones (SetAdminCredentials applies them). A new
// name configured later creates a second admin.
func (s *Service) EnsureAdmin(ctx context.Context, username, password, token string) (creds Credentials, created bool, err error) {
	exists, err := s.adminExists(ctx, username)
	if err != nil || exists {
		return Credentials{}, false, err
	}
	if username == "" {
		username = DefaultAdminUser
	}
	e := newValidationError()
	checkUsername(e, "FACTURAD_ADMIN_USER", username)
	if password != "" && len(password) < MinAdminPassword {
		e.Add("FACTURAD_ADMIN_PASSWORD", msg.MinLength.With(MinAdminPassword))
	}
	if token != "" && len(token) < MinAdminToken {
		e.Add("FACTURAD_ADMIN_TOKEN", msg.MinLength.With(MinAdminToken))
	}
	if err := e.orNil(); err != nil {
		return Credentials{}, false, err
	}
	ch, err := s.createAdmin(ctx, username, password, token)
	if errors.Is(err, ErrConflict) {
		// Another replica starting at the same time made it first: it
		// printed the credentials, and this one proceeds. A name taken by
		// a user that is not an admin stays an error.
		exists, rerr := s.adminExists(ctx, username)
		switch {
		case rerr != nil:
			return Credentials{}, false, rerr
		case exists:
			return Credentials{}, false, nil
		}
		return Credentials{}, false, fmt.Errorf("bootstrap admin: user name %q is taken by a user that is not an admin: %w", username, err)
	}
	if err != nil {
		return Credentials{}, false, err
	}
	return ch.Credentials, true, nil
}

// adminExists reports whether the named bootstrap admin (default
// "admin") exists as an admin. Another name configured later is created
// beside it: that is how admin access is recovered.
func (s *Service) adminExists(ctx context.Context, username string) (bool, error) {
	if username == "" {
		username = DefaultAdminUser
	}
	u, err := s.store.APIUserByUsername(ctx, 0, username)
	switch {
	case errors.Is(err, ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("bootstrap admin: %w", err)
	}
	return u.Role == RoleAdmin, nil
}

// BranchUsers lists the API users of a branch, for whoever may manage the
// branch (its company's users, the company's reseller, an admin).
func (s *Service) BranchUsers(ctx context.Context, p Principal, companyID, branchID int64) ([]APIUser, error) {
	if _, _, err := s.branchFor(ctx, p, companyID, branchID); err != nil {
		return nil, err
	}
	users, err := s.store.APIUsers(ctx, companyID, branchID)
	if err != nil {
		return nil, fmt.Errorf("users of branch %d: %w", branchID, err)
	}
	return users, nil
}

// branchUser finds one API user of a branch p may manage; any other user
// (another branch's, another tenant's, a missing one) is ErrNotFound.
func (s *Service) branchUser(ctx context.Context, p Principal, companyID, branchID, userID int64) (APIUser, error) {
	users, err := s.BranchUsers(ctx, p, companyID, branchID)
	if err != nil {
		return APIUser{}, err
	}
	for _, u := range users {
		if u.ID == userID {
			return u, nil
		}
	}
	return APIUser{}, fmt.Errorf("user %d of branch %d: %w", userID, branchID, ErrNotFound)
}

// SetBranchUserActive switches one API user of a branch on or off. Off, its
// cached credentials are dropped: its next request on any replica is
// refused.
func (s *Service) SetBranchUserActive(ctx context.Context, p Principal, companyID, branchID, userID int64, active bool) (APIUser, error) {
	u, err := s.branchUser(ctx, p, companyID, branchID, userID)
	if err != nil {
		return APIUser{}, err
	}
	if err := s.store.SetAPIUserActive(ctx, u.ID, active); err != nil {
		return APIUser{}, fmt.Errorf("user %d: %w", u.ID, err)
	}
	u.Activo = active
	if !active {
		if err := s.forgetUsers(ctx, []APIUser{u}); err != nil {
			return APIUser{}, err
		}
	}
	return u, nil
}

// RotateAPIToken gives one API user of a branch a new token, returned once;
// the old one stops working at once on every replica (its cached entry is
// dropped). The password is unchanged.
func (s *Service) RotateAPIToken(ctx context.Context, p Principal, companyID, branchID, userID int64) (Credentials, error) {
	u, err := s.branchUser(ctx, p, companyID, branchID, userID)
	if err != nil {
		return Credentials{}, err
	}
	_, token, err := newSecrets()
	if err != nil {
		return Credentials{}, err
	}
	if err := s.store.SetAPIUserToken(ctx, u.ID, u.TokenHash, HashToken(token)); err != nil {
		if errors.Is(err, ErrConflict) {
			return Credentials{}, invalidField("apiToken", msg.TokenRotated.With())
		}
		return Credentials{}, fmt.Errorf("rotate the token of user %d: %w", u.ID, err)
	}
	if err := s.forgetUsers(ctx, []APIUser{u}); err != nil {
		return Credentials{}, err
	}
	return Credentials{Usuario: u.Username, APIToken: token}, nil
}
