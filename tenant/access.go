package tenant

import (
	"context"
	"fmt"
)

// companyVisible answers the question companyFor answers, whether p may see
// company id, without loading the company when the principal alone settles
// it. An admin may see every company, and a branch user exactly the company
// its verified credentials name, so for them nothing is read; the caller's
// next store call must then itself answer ErrNotFound for a company that does
// not exist, as Store.Branches does. Whether a reseller may see a company
// depends on the company's owner, which is read, as companyFor does. Another
// tenant's company is ErrNotFound, exactly as a missing one is.
func (s *Service) companyVisible(ctx context.Context, p Principal, id int64) error {
	if id <= 0 {
		return ErrNotFound
	}
	switch p.Role {
	case RoleAdmin:
		return nil
	case RoleBranch:
		if p.CompanyID == id {
			return nil
		}
		return fmt.Errorf("company %d: %w", id, ErrNotFound)
	}
	_, err := s.companyFor(ctx, p, id)
	return err
}
