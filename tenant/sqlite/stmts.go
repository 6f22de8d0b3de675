package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// readStmts are the read queries, prepared once per Store on the read pool.
//
// Preparing a statement (parsing the SQL, resolving the columns, planning)
// costs several times what running it does on a small table. A *sql.Stmt
// keeps one prepared SQLite statement per read connection (database/sql
// prepares it on a connection the first time it runs there) and reuses it
// for every later query on that connection: the driver resets it and binds
// the new arguments. Every statement here holds exactly one SQL statement,
// which is what lets the driver keep it.
type readStmts struct {
	company       *sql.Stmt
	companyExists *sql.Stmt
	search        *sql.Stmt
	searchByOwner *sql.Stmt
	searchByID    *sql.Stmt

	branch       *sql.Stmt
	branches     *sql.Stmt
	branchExists *sql.Stmt

	userByToken    *sql.Stmt
	userByUsername *sql.Stmt
	usersOfCompany *sql.Stmt
	usersOfBranch  *sql.Stmt

	documentByClave      *sql.Stmt
	documentByExternalID *sql.Stmt
}

// list pairs each statement with its SQL.
func (r *readStmts) list() []struct {
	stmt  **sql.Stmt
	query string
} {
	return []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&r.company, qCompany},
		{&r.companyExists, qCompanyExists},
		{&r.search, qSearchCompanies},
		{&r.searchByOwner, qSearchCompaniesByOwner},
		{&r.searchByID, qSearchCompanyByID},
		{&r.branch, qBranch},
		{&r.branches, qBranches},
		{&r.branchExists, qBranchExists},
		{&r.userByToken, qAPIUserByTokenHash},
		{&r.userByUsername, qAPIUserByUsername},
		{&r.usersOfCompany, qAPIUsersOfCompany},
		{&r.usersOfBranch, qAPIUsersOfBranch},
		{&r.documentByClave, qDocumentByClave},
		{&r.documentByExternalID, qDocumentByExternalID},
	}
}

// prepare prepares every statement on db. On failure the statements already
// prepared stay set, for close.
func (r *readStmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, s := range r.list() {
		st, err := db.PrepareContext(ctx, s.query)
		if err != nil {
			return fmt.Errorf("prepare %.40q: %w", s.query, err)
		}
		*s.stmt = st
	}
	return nil
}

// close closes the statements that were prepared.
func (r *readStmts) close() error {
	var errs []error
	for _, s := range r.list() {
		if *s.stmt != nil {
			errs = append(errs, (*s.stmt).Close())
			*s.stmt = nil
		}
	}
	return errors.Join(errs...)
}

// writeStmts are the document writes, prepared once per Store on the one
// write connection. A transaction uses them through Tx.StmtContext, which
// reuses the statement prepared on its connection.
type writeStmts struct {
	nextNumber  *sql.Stmt
	raiseNumber *sql.Stmt
	insert      *sql.Stmt
	save        *sql.Stmt
	exists      *sql.Stmt
}

func (w *writeStmts) list() []struct {
	stmt  **sql.Stmt
	query string
} {
	return []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&w.nextNumber, qNextDocumentNumber},
		{&w.raiseNumber, qRaiseDocumentNumber},
		{&w.insert, qInsertDocument},
		{&w.save, qSaveDocument},
		{&w.exists, qDocumentExists},
	}
}

func (w *writeStmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, s := range w.list() {
		st, err := db.PrepareContext(ctx, s.query)
		if err != nil {
			return fmt.Errorf("prepare %.40q: %w", s.query, err)
		}
		*s.stmt = st
	}
	return nil
}

func (w *writeStmts) close() error {
	var errs []error
	for _, s := range w.list() {
		if *s.stmt != nil {
			errs = append(errs, (*s.stmt).Close())
			*s.stmt = nil
		}
	}
	return errors.Join(errs...)
}
