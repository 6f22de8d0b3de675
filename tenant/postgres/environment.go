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
var adoptTables = []string{"companies", "document_sequences", "documents", "received_documents"}

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
