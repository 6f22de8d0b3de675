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
	// companyBranch reads a document's issuer on every send.
	companyBranch *sql.Stmt

	userByToken    *sql.Stmt
	userByUsername *sql.Stmt
	usersOfCompany *sql.Stmt
	usersOfBranch  *sql.Stmt

	documentByClave      *sql.Stmt
	documentStateByClave *sql.Stmt
	documentByExternalID *sql.Stmt
}

// stmtSQL pairs a statement's place with its SQL.
type stmtSQL struct {
	stmt  **sql.Stmt
	query string
}

// list pairs each statement with its SQL.
func (r *readStmts) list() []stmtSQL {
	return []stmtSQL{
		{&r.company, qCompany},
		{&r.companyExists, qCompanyExists},
		{&r.search, qSearchCompanies},
		{&r.searchByOwner, qSearchCompaniesByOwner},
		{&r.searchByID, qSearchCompanyByID},
		{&r.branch, qBranch},
		{&r.branches, qBranches},
		{&r.branchExists, qBranchExists},
		{&r.companyBranch, qCompanyBranch},
		{&r.userByToken, qAPIUserByTokenHash},
		{&r.userByUsername, qAPIUserByUsername},
		{&r.usersOfCompany, qAPIUsersOfCompany},
		{&r.usersOfBranch, qAPIUsersOfBranch},
		{&r.documentByClave, qDocumentByClave},
		{&r.documentStateByClave, qDocumentStateByClave},
		{&r.documentByExternalID, qDocumentByExternalID},
	}
}

func (r *readStmts) prepare(ctx context.Context, db *sql.DB) error {
	return prepareAll(ctx, db, r.list())
}

func (r *readStmts) close() error { return closeAll(r.list()) }

// writeStmts are the document writes, prepared once per Store on the one
// write connection. A transaction uses them through Tx.StmtContext, which
// reuses the statement prepared on its connection.
type writeStmts struct {
	nextNumber  *sql.Stmt
	number      *sql.Stmt
	raiseNumber *sql.Stmt
	insert      *sql.Stmt
	save        *sql.Stmt
	saveState   *sql.Stmt
	exists      *sql.Stmt

	quota         *sql.Stmt
	countMonth    *sql.Stmt
	insertUsage   *sql.Stmt
	stepUsage     *sql.Stmt
	externalTaken *sql.Stmt

	insertRequest *sql.Stmt
	insertIVA     *sql.Stmt
	saveSigned    *sql.Stmt
	saveResponse  *sql.Stmt

	hasHooks    *sql.Stmt
	outboxHooks *sql.Stmt
	outboxMail  *sql.Stmt

	sp savepointStmts
}

func (w *writeStmts) list() []stmtSQL {
	return []stmtSQL{
		{&w.nextNumber, qNextDocumentNumber},
		{&w.number, qDocumentNumber},
		{&w.raiseNumber, qRaiseDocumentNumber},
		{&w.insert, qInsertDocument},
		{&w.save, qSaveDocument},
		{&w.saveState, qSaveDocumentState},
		{&w.exists, qDocumentExists},
		{&w.quota, qQuota},
		{&w.countMonth, qCountMonth},
		{&w.insertUsage, qInsertUsage},
		{&w.stepUsage, qStepUsage},
		{&w.externalTaken, qExternalIDTaken},
		{&w.insertRequest, qInsertRequest},
		{&w.insertIVA, qInsertDocumentIVA},
		{&w.saveSigned, qSaveSignedXML},
		{&w.saveResponse, qSaveResponseXML},
		{&w.hasHooks, qHasWebhooks},
		{&w.outboxHooks, qOutboxHooks},
		{&w.outboxMail, qOutboxMail},
		{&w.sp.savepoint, "SAVEPOINT w"},
		{&w.sp.rollbackTo, "ROLLBACK TO w"},
		{&w.sp.release, "RELEASE w"},
	}
}

func (w *writeStmts) prepare(ctx context.Context, db *sql.DB) error {
	return prepareAll(ctx, db, w.list())
}

func (w *writeStmts) close() error { return closeAll(w.list()) }

// prepareAll prepares every statement on db. On failure the statements
// already prepared stay set, for closeAll.
func prepareAll(ctx context.Context, db *sql.DB, list []stmtSQL) error {
	for _, s := range list {
		st, err := db.PrepareContext(ctx, s.query)
		if err != nil {
			return fmt.Errorf("prepare %.40q: %w", s.query, err)
		}
		*s.stmt = st
	}
	return nil
}

// closeAll closes the statements that were prepared.
func closeAll(list []stmtSQL) error {
	var errs []error
	for _, s := range list {
		if *s.stmt != nil {
			errs = append(errs, (*s.stmt).Close())
			*s.stmt = nil
		}
	}
	return errors.Join(errs...)
}
