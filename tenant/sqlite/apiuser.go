package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"facturad/tenant"
)

const apiUserColumns = `id, username, password_hash, token_hash, role, coalesce(company_id, 0),
    coalesce(branch_id, 0), activo, created_at`

const (
	qInsertAPIUser = `INSERT INTO api_users (username, password_hash, token_hash, role, company_id,
    branch_id, activo, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
RETURNING id`

	qAPIUserByTokenHash = `SELECT ` + apiUserColumns + ` FROM api_users WHERE token_hash = ?`
	qAPIUserByUsername  = `SELECT ` + apiUserColumns + ` FROM api_users WHERE username = ? AND company_id IS ?`
	qAPIUsersOfCompany  = `SELECT ` + apiUserColumns + ` FROM api_users
WHERE company_id = ? ORDER BY id`
	qAPIUsersOfBranch = `SELECT ` + apiUserColumns + ` FROM api_users
WHERE company_id = ? AND branch_id = ? ORDER BY id`
	qSetAPIUserActive = `UPDATE api_users SET activo = ? WHERE id = ?`
	// qSetAPIUserPasswordHash replaces a hash only while it is still the one
	// read, so that a rehash never undoes a change made meanwhile.
	qSetAPIUserPasswordHash = `UPDATE api_users SET password_hash = ? WHERE id = ? AND password_hash = ?`
	// qSetAPIUserToken replaces a token hash only while it is still the one
	// read: two rotations at once leave one new token, not a lost one.
	qSetAPIUserToken = `UPDATE api_users SET token_hash = ? WHERE id = ? AND token_hash = ?`
	qBranchExists    = `SELECT EXISTS (SELECT 1 FROM branches WHERE id = ? AND company_id = ?)`
)

// apiUserRow scans API user rows into one set of destinations, so that a
// list allocates nothing per row beyond the values read.
type apiUserRow struct {
	u             tenant.APIUser
	role, created string
	dest          []any
}

func newAPIUserRow() *apiUserRow {
	r := &apiUserRow{}
	u := &r.u
	r.dest = []any{&u.ID, &u.Username, &u.PasswordHash, &u.TokenHash, &r.role, &u.CompanyID,
		&u.BranchID, &u.Activo, &r.created}
	return r
}

func (r *apiUserRow) scan(s scanner) (tenant.APIUser, error) {
	r.u = tenant.APIUser{}
	if err := s.Scan(r.dest...); err != nil {
		return tenant.APIUser{}, err
	}
	r.u.Role = tenant.Role(r.role)
	var err error
	if r.u.CreatedAt, err = parseTime(r.created); err != nil {
		return tenant.APIUser{}, err
	}
	return r.u, nil
}

func scanAPIUser(s scanner) (tenant.APIUser, error) { return newAPIUserRow().scan(s) }

func insertAPIUser(ctx context.Context, q querier, u *tenant.APIUser, now time.Time) error {
	if len(u.TokenHash) == 0 {
		return fmt.Errorf("api user %q: empty token hash", u.Username)
	}
	err := q.QueryRowContext(ctx, qInsertAPIUser, u.Username, u.PasswordHash, u.TokenHash,
		string(u.Role), nullID(u.CompanyID), nullID(u.BranchID), u.Activo,
		formatTime(now)).Scan(&u.ID)
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
	if err := insertAPIUser(ctx, s.write, &nu, s.clock()); err != nil {
		return fmt.Errorf("create %w", err)
	}
	*u = nu
	return nil
}

// APIUserByTokenHash finds the user whose token digest is h.
func (s *Store) APIUserByTokenHash(ctx context.Context, h []byte) (tenant.APIUser, error) {
	u, err := scanAPIUser(s.stmts.userByToken.QueryRowContext(ctx, h))
	if err != nil {
		return tenant.APIUser{}, fmt.Errorf("api user by token: %w", mapErr(err))
	}
	return u, nil
}

// APIUserByUsername finds a company's user by name; companyID zero means
// the users without a company.
func (s *Store) APIUserByUsername(ctx context.Context, companyID int64, username string) (tenant.APIUser, error) {
	u, err := scanAPIUser(s.stmts.userByUsername.QueryRowContext(ctx, username, nullID(companyID)))
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
		rows *sql.Rows
		err  error
	)
	if branchID != 0 {
		rows, err = s.stmts.usersOfBranch.QueryContext(ctx, companyID, branchID)
	} else {
		rows, err = s.stmts.usersOfCompany.QueryContext(ctx, companyID)
	}
	if err != nil {
		return nil, fmt.Errorf("api users of company %d branch %d: %w", companyID, branchID, err)
	}
	defer rows.Close()
	out := []tenant.APIUser{}
	row := newAPIUserRow()
	for rows.Next() {
		u, err := row.scan(rows)
		if err != nil {
			return nil, fmt.Errorf("api users of company %d branch %d: %w", companyID, branchID, err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("api users of company %d branch %d: %w", companyID, branchID, err)
	}
	if len(out) == 0 {
		err := s.companyExists(ctx, companyID)
		if err == nil && branchID != 0 {
			var ok bool
			if err = s.stmts.branchExists.QueryRowContext(ctx, branchID, companyID).Scan(&ok); err == nil && !ok {
				err = tenant.ErrNotFound
			}
		}
		if err != nil {
			return nil, fmt.Errorf("api users of company %d branch %d: %w", companyID, branchID, err)
		}
	}
	return out, nil
}

// SetAPIUserActive switches a user on or off.
func (s *Store) SetAPIUserActive(ctx context.Context, id int64, active bool) error {
	res, err := s.write.ExecContext(ctx, qSetAPIUserActive, active, id)
	if err != nil {
		return fmt.Errorf("set api user %d active: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("set api user %d active: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("set api user %d active: %w", id, tenant.ErrNotFound)
	}
	return nil
}

// SetAPIUserPasswordHash replaces a user's password hash when it is still
// oldHash (a rehash on use); a changed one is left as it is.
func (s *Store) SetAPIUserPasswordHash(ctx context.Context, id int64, oldHash, newHash string) error {
	if _, err := s.write.ExecContext(ctx, qSetAPIUserPasswordHash, newHash, id, oldHash); err != nil {
		return fmt.Errorf("set api user %d password hash: %w", id, err)
	}
	return nil
}

// SetAPIUserToken replaces a user's token hash when it is still oldHash; a
// token changed meanwhile is ErrConflict.
func (s *Store) SetAPIUserToken(ctx context.Context, id int64, oldHash, newHash []byte) error {
	res, err := s.write.ExecContext(ctx, qSetAPIUserToken, newHash, id, oldHash)
	if err != nil {
		return fmt.Errorf("set api user %d token: %w", id, mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("set api user %d token: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("set api user %d token: %w", id, tenant.ErrConflict)
	}
	return nil
}
