package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

var _ tenant.EnvironmentStore = (*Store)(nil)

const (
	qAdoptPending = `SELECT EXISTS (SELECT 1 FROM companies WHERE ambiente = '')`

	// qUnsettled counts the company's documents and messages of one
	// environment not settled yet.
	qUnsettled = `SELECT
    (SELECT count(*) FROM documents
     WHERE company_id = $1 AND ambiente = $2 AND estado IN ('00', '04', '05')) +
    (SELECT count(*) FROM received_documents
     WHERE company_id = $1 AND ambiente = $2 AND estado IN ('00', '04', '05'))`
)

// adoptTables are the tables whose rows written before environments
// existed are adopted, companies first (its count is the answer).
var adoptTables = []string{"companies", "documents", "received_documents"}

// AdoptEnvironment puts every row stored before environments existed into
// ambiente, in one transaction; it reads nothing more when no company is
// left to adopt.
func (s *Store) AdoptEnvironment(ctx context.Context, ambiente string) (int, error) {
	var pending bool
	if err := s.pool.QueryRow(ctx, qAdoptPending).Scan(&pending); err != nil {
		return 0, fmt.Errorf("adopt environment: %w", mapErr(err))
	}
	if !pending {
		return 0, nil
	}
	var companies int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for i, table := range adoptTables {
			tag, err := tx.Exec(ctx, `UPDATE `+table+` SET ambiente = $1 WHERE ambiente = ''`, ambiente)
			if err != nil {
				return fmt.Errorf("%s: %w", table, mapErr(err))
			}
			if i == 0 {
				companies = int(tag.RowsAffected())
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("adopt environment %s: %w", ambiente, err)
	}
	return companies, nil
}

// UnsettledDocuments counts the company's documents and messages numbered
// in ambiente that are not settled yet.
func (s *Store) UnsettledDocuments(ctx context.Context, companyID int64, ambiente string) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, qUnsettled, companyID, ambiente).Scan(&n); err != nil {
		return 0, fmt.Errorf("documents of company %d not settled in %s: %w", companyID, ambiente, mapErr(err))
	}
	return n, nil
}

// qResetSequences sets the sequences of the company's branches ($1) to the
// greatest number its documents and messages of environment $2 hold for
// each, and drops those of which it holds none (the next number is then 1).
const qResetSequences = `WITH held AS (
    SELECT branch_id, terminal, tipo, max(numero) AS numero FROM (
        SELECT branch_id, terminal, tipo, numero FROM documents WHERE company_id = $1 AND ambiente = $2
        UNION ALL
        SELECT branch_id, terminal, tipo, numero FROM received_documents WHERE company_id = $1 AND ambiente = $2
    ) AS n GROUP BY branch_id, terminal, tipo
), dropped AS (
    DELETE FROM document_sequences AS s USING branches AS b
    WHERE s.branch_id = b.id AND b.company_id = $1
        AND NOT EXISTS (SELECT 1 FROM held WHERE held.branch_id = s.branch_id AND held.terminal = s.terminal AND held.tipo = s.tipo)
)
INSERT INTO document_sequences AS s (branch_id, terminal, tipo, last_numero)
SELECT branch_id, terminal, tipo, numero FROM held
ON CONFLICT (branch_id, terminal, tipo) DO UPDATE SET last_numero = EXCLUDED.last_numero`

// ResetSequences starts the company's numbering where its documents of
// ambiente left it, in one statement.
func (s *Store) ResetSequences(ctx context.Context, companyID int64, ambiente string) error {
	if _, err := s.pool.Exec(ctx, qResetSequences, companyID, ambiente); err != nil {
		return fmt.Errorf("reset the sequences of company %d to %s: %w", companyID, ambiente, mapErr(err))
	}
	return nil
}
