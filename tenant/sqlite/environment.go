package sqlite

import (
	"context"
	"errors"
	"fmt"

	"facturad/tenant"
)

var _ tenant.EnvironmentStore = (*Store)(nil)

const (
	qAdoptPending = `SELECT EXISTS (SELECT 1 FROM companies WHERE ambiente = '')`

	// qUnsettled counts the company's documents and messages of one
	// environment not settled yet.
	qUnsettled = `SELECT
    (SELECT count(*) FROM documents
     WHERE company_id = ?1 AND ambiente = ?2 AND ` + unsettledEstados + `) +
    (SELECT count(*) FROM received_documents
     WHERE company_id = ?1 AND ambiente = ?2 AND ` + unsettledEstados + `)`
)

// adoptTables are the tables whose rows written before environments
// existed are adopted, companies first (its count is the answer).
var adoptTables = []string{"companies", "documents", "received_documents"}

// AdoptEnvironment puts every row stored before environments existed into
// ambiente, in one transaction; it reads nothing more when no company is
// left to adopt.
func (s *Store) AdoptEnvironment(ctx context.Context, ambiente string) (companies int, err error) {
	var pending bool
	if err := s.write.QueryRowContext(ctx, qAdoptPending).Scan(&pending); err != nil {
		return 0, fmt.Errorf("adopt environment: %w", mapErr(err))
	}
	if !pending {
		return 0, nil
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("adopt environment %s: %w", ambiente, mapErr(err))
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	for i, table := range adoptTables {
		res, err := tx.ExecContext(ctx, `UPDATE `+table+` SET ambiente = ? WHERE ambiente = ''`, ambiente)
		if err != nil {
			return 0, fmt.Errorf("adopt environment %s: %s: %w", ambiente, table, mapErr(err))
		}
		if i == 0 {
			n, err := res.RowsAffected()
			if err != nil {
				return 0, fmt.Errorf("adopt environment %s: %w", ambiente, mapErr(err))
			}
			companies = int(n)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("adopt environment %s: commit: %w", ambiente, mapErr(err))
	}
	return companies, nil
}

// UnsettledDocuments counts the company's documents and messages numbered
// in ambiente that are not settled yet.
func (s *Store) UnsettledDocuments(ctx context.Context, companyID int64, ambiente string) (int, error) {
	var n int
	if err := s.read.QueryRowContext(ctx, qUnsettled, companyID, ambiente).Scan(&n); err != nil {
		return 0, fmt.Errorf("documents of company %d not settled in %s: %w", companyID, ambiente, mapErr(err))
	}
	return n, nil
}

// The statements of ResetSequences: drop the company's sequences, then set
// each to the greatest number its documents and messages of the
// environment hold (none: the next number is 1).
const (
	qDropSequences = `DELETE FROM document_sequences
WHERE branch_id IN (SELECT id FROM branches WHERE company_id = ?)`
	qHeldSequences = `INSERT INTO document_sequences (branch_id, terminal, tipo, last_numero)
SELECT branch_id, terminal, tipo, max(numero) FROM (
    SELECT branch_id, terminal, tipo, numero FROM documents WHERE company_id = ?1 AND ambiente = ?2
    UNION ALL
    SELECT branch_id, terminal, tipo, numero FROM received_documents WHERE company_id = ?1 AND ambiente = ?2
) GROUP BY branch_id, terminal, tipo`
)

// ResetSequences starts the company's numbering where its documents of
// ambiente left it, in one transaction.
func (s *Store) ResetSequences(ctx context.Context, companyID int64, ambiente string) (err error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("reset the sequences of company %d to %s: %w", companyID, ambiente, mapErr(err))
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	if _, err := tx.ExecContext(ctx, qDropSequences, companyID); err != nil {
		return fmt.Errorf("reset the sequences of company %d to %s: %w", companyID, ambiente, mapErr(err))
	}
	if _, err := tx.ExecContext(ctx, qHeldSequences, companyID, ambiente); err != nil {
		return fmt.Errorf("reset the sequences of company %d to %s: %w", companyID, ambiente, mapErr(err))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("reset the sequences of company %d to %s: commit: %w", companyID, ambiente, mapErr(err))
	}
	return nil
}
