package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

const apiUserColumns = `id, username, password_hash, token_hash, role, coalesce(company_id, 0),
    coalesce(branch_id, 0), activo, created_at`

const (
	qInsertAPIUser = `INSERT INTO api_users (username, password_hash, token_hash, role, company_id,
    branch_id, activo, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING id`

	qAPIUserByTokenHash = `SELECT ` + apiUserColumns + ` FROM api_users WHERE token_hash = $1`
	qAPIUserByUsername  = `SELECT ` + apiUserColumns + ` FROM api_users WHERE username = $1 AND company_id IS NOT DISTINCT FROM $2`
	qAPIUsersOfCompany  = `SELECT ` + apiUserColumns + ` FROM api_users
WHERE company_id = $1 ORDER BY id`
	qAPIUsersOfBranch = `SELECT ` + apiUserColumns + ` FROM api_users
WHERE company_id = $1 AND branch_id = $2 ORDER BY id`
	qSetAPIUserActive = `UPDATE api_users SET activo = $2 WHERE id = $1`
	// qSetAPIUserPasswordHash replaces a hash only while it is still the one
	// read, so that a rehash never undoes a change made meanwhile.
	qSetAPIUserPasswordHash = `UPDATE api_users SET password_hash = $3 WHERE id = $1 AND password_hash = $2`
	// qSetAPIUserToken replaces a token hash only while it is still the one
	// read: two rotations at once leave one new token, not a lost one.
	qSetAPIUserToken = `UPDATE api_users SET token_hash = $3 WHERE id = $1 AND token_hash = $2`
	qBranchExists    = `SELECT EXISTS (SELECT 1 FROM branches WHERE id = $1 AND company_id = $2)`
)

func scanAPIUser(r pgx.Row) (tenant.APIUser, error) {
	var (
		u    tenant.APIUser
		role string
	)
	err := r.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.TokenHash, &role, &u.CompanyID,
		&u.BranchID, &u.Activo, &u.CreatedAt)
	if err != nil {
		return tenant.APIUser{}, err
	}
	u.Role = tenant.Role(role)
	u.CreatedAt = u.CreatedAt.UTC()
	return u, nil
}

// queryRower is a pgx.Tx or the pool.
type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func insertAPIUser(ctx context.Context, q queryRower, u *tenant.APIUser, now time.Time) error {
	if len(u.TokenHash) == 0 {
		return fmt.Errorf("api user %q: empty token hash", u.Username)
	}
	err := q.QueryRow(ctx, qInsertAPIUser, u.Username, u.PasswordHash, u.TokenHash,
		string(u.Role), nullID(u.CompanyID), nullID(u.BranchID), u.Activo, now).Scan(&u.ID)
	if err != nil {
		return fmt.Errorf("api user %q: %w", u.Username, mapErr(err))
	}
	u.CreatedAt = now
	return nil
}

// CreateAPIUser inserts a user and sets ID and CreatedAt. A taken Username
// or token hash is ErrConflict; a company or branch that does not exist (or
// a branch of another company) is ErrNotFound.
func (s *Store) CreateAPIUser(ctx context.Context, u *tenant.APIUser) error {
	nu := *u
	if err := insertAPIUser(ctx, s.pool, &nu, s.clock()); err != nil {
		return fmt.Errorf("create %w", err)
	}
	*u = nu
	return nil
}

// APIUserByTokenHash finds the user whose token digest is h.
func (s *Store) APIUserByTokenHash(ctx context.Context, h []byte) (tenant.APIUser, error) {
	u, err := scanAPIUser(s.pool.QueryRow(ctx, qAPIUserByTokenHash, h))
	if err != nil {
		return tenant.APIUser{}, fmt.Errorf("api user by token: %w", mapErr(err))
	}
	return u, nil
}

// APIUserByUsername finds a company's user by name; companyID zero means
// the users without a company.
func (s *Store) APIUserByUsername(ctx context.Context, companyID int64, username string) (tenant.APIUser, error) {
	u, err := scanAPIUser(s.pool.QueryRow(ctx, qAPIUserByUsername, username, nullID(companyID)))
	if err != nil {
		return tenant.APIUser{}, fmt.Errorf("api user %q: %w", username, mapErr(err))
	}
	return u, nil
}

// APIUsers lists the users of a company, or of one of its branches when
// branchID is not zero, ordered by id. An unknown company or branch is
// ErrNotFound.
func (s *Store) APIUsers(ctx context.Context, companyID, branchID int64) ([]tenant.APIUser, error) {
	var (
		rows pgx.Rows
		err  error
	)
	if branchID != 0 {
		rows, err = s.pool.Query(ctx, qAPIUsersOfBranch, companyID, branchID)
	} else {
		rows, err = s.pool.Query(ctx, qAPIUsersOfCompany, companyID)
	}
	if err != nil {
		return nil, fmt.Errorf("api users of company %d branch %d: %w", companyID, branchID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tenant.APIUser, error) {
		return scanAPIUser(r)
	})
	if err != nil {
		return nil, fmt.Errorf("api users of company %d branch %d: %w", companyID, branchID, err)
	}
	if len(out) == 0 {
		err := s.companyExists(ctx, companyID)
		if err == nil && branchID != 0 {
			var ok bool
			if err = s.pool.QueryRow(ctx, qBranchExists, branchID, companyID).Scan(&ok); err == nil && !ok {
				err = tenant.ErrNotFound
			}
		}
		if err != nil {
			return nil, fmt.Errorf("api users of company %d branch %d: %w", companyID, branchID, err)
		}
		out = []tenant.APIUser{}
	}
	return out, nil
}

// SetAPIUserActive switches a user on or off.
func (s *Store) SetAPIUserActive(ctx context.Context, id int64, active bool) error {
	tag, err := s.pool.Exec(ctx, qSetAPIUserActive, id, active)
	if err != nil {
		return fmt.Errorf("set api user %d active: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set api user %d active: %w", id, tenant.ErrNotFound)
	}
	return nil
}

// SetAPIUserPasswordHash replaces a user's password hash when it is still
// oldHash (a rehash on use); a changed one is left as it is.
func (s *Store) SetAPIUserPasswordHash(ctx context.Context, id int64, oldHash, newHash string) error {
	if _, err := s.pool.Exec(ctx, qSetAPIUserPasswordHash, id, oldHash, newHash); err != nil {
		return fmt.Errorf("set api user %d password hash: %w", id, err)
	}
	return nil
}

// SetAPIUserToken replaces a user's token hash when it is still oldHash; a
// token changed meanwhile is ErrConflict.
func (s *Store) SetAPIUserToken(ctx context.Context, id int64, oldHash, newHash []byte) error {
	tag, err := s.pool.Exec(ctx, qSetAPIUserToken, id, oldHash, newHash)
	if err != nil {
		return fmt.Errorf("set api user %d token: %w", id, mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set api user %d token: %w", id, tenant.ErrConflict)
	}
	return nil
}
