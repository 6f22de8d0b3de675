package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

var _ tenant.CredentialStopStore = (*Store)(nil)

const (
	qStopOnCredentials = `INSERT INTO credential_stops (company_id, since, attempts, next_probe_at)
VALUES ($1, $2, 0, $3) ON CONFLICT (company_id) DO NOTHING`
	// qDueCredentialStops locks the due stops it reads, skipping those
	// another replica is probing: each company is probed by one at a time.
	qDueCredentialStops = `SELECT company_id, attempts FROM credential_stops
WHERE next_probe_at <= $1 ORDER BY next_probe_at, company_id LIMIT $2
FOR UPDATE SKIP LOCKED`
	qProbeCredentialStop  = `UPDATE credential_stops SET attempts = attempts + 1, next_probe_at = $2 WHERE company_id = $1`
	qForgetCredentialStop = `DELETE FROM credential_stops WHERE company_id = $1`
	qProbeDocument        = `UPDATE documents SET next_attempt_at = $1
WHERE id = (SELECT id FROM documents
    WHERE company_id = $2 AND estado = '05' AND next_attempt_at IS NULL ORDER BY id LIMIT 1)`
	qResumeStoppedDocuments = `UPDATE documents SET next_attempt_at = $1
WHERE company_id = $2 AND estado = '05' AND next_attempt_at IS NULL`
	qRequeueStopped = `UPDATE documents SET next_attempt_at = $1
WHERE estado IN ('00', '04', '05') AND next_attempt_at IS NULL
    AND ($2::bigint = 0 OR company_id = $2) AND ($3::text = '' OR (clave = $3 AND clave <> ''))`
	qRequeueStoppedCompanies = `DELETE FROM credential_stops WHERE $1::bigint = 0 OR company_id = $1`

	// The same for the company's receiver's messages (received_documents):
	// a probe takes a message when no document is left to probe.
	qProbeReceived = `UPDATE received_documents SET next_attempt_at = $1
WHERE id = (SELECT id FROM received_documents
    WHERE company_id = $2 AND estado = '05' AND next_attempt_at IS NULL ORDER BY id LIMIT 1)`
	qResumeStoppedReceived = `UPDATE received_documents SET next_attempt_at = $1
WHERE company_id = $2 AND estado = '05' AND next_attempt_at IS NULL`
	qRequeueStoppedReceived = `UPDATE received_documents SET next_attempt_at = $1
WHERE estado IN ('00', '04', '05') AND next_attempt_at IS NULL AND ($2::bigint = 0 OR company_id = $2)`
)

func pgTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// StopOnCredentials records that the company's credentials were refused
// and, when the stop begins, ev in the same transaction.
func (s *Store) StopOnCredentials(ctx context.Context, companyID int64, now, next time.Time, ev *tenant.TenantEvent) error {
	if ev == nil {
		if _, err := s.pool.Exec(ctx, qStopOnCredentials, companyID, pgTime(now), pgTime(next)); err != nil {
			return fmt.Errorf("record company %d's refused credentials: %w", companyID, err)
		}
		return nil
	}
	if err := ev.Check(); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, qStopOnCredentials, companyID, pgTime(now), pgTime(next))
		if err != nil || tag.RowsAffected() == 0 {
			return err // a stop already there: announced when it began
		}
		_, err = recordTenantEvent(ctx, tx, *ev)
		return err
	})
	if err != nil {
		return fmt.Errorf("record company %d's refused credentials: %w", companyID, mapErr(err))
	}
	return nil
}

// ProbeCredentialStops makes one stopped document of each company whose
// probe is due, due at now, and moves its next probe on.
func (s *Store) ProbeCredentialStops(ctx context.Context, now time.Time, base, max time.Duration, limit int) ([]int64, error) {
	if limit < 1 {
		return nil, nil
	}
	var probed []int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		probed = probed[:0]
		rows, err := tx.Query(ctx, qDueCredentialStops, pgTime(now), limit)
		if err != nil {
			return err
		}
		type due struct {
			company  int64
			attempts int
		}
		all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
			var d due
			err := r.Scan(&d.company, &d.attempts)
			return d, err
		})
		if err != nil {
			return err
		}
		for _, d := range all {
			tag, err := tx.Exec(ctx, qProbeDocument, pgTime(now), d.company)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				if tag, err = tx.Exec(ctx, qProbeReceived, pgTime(now), d.company); err != nil {
					return err
				}
			}
			if tag.RowsAffected() == 0 {
				if _, err := tx.Exec(ctx, qForgetCredentialStop, d.company); err != nil {
					return err
				}
				continue
			}
			next := now.Add(tenant.ProbeWait(base, max, d.attempts+1))
			if _, err := tx.Exec(ctx, qProbeCredentialStop, d.company, pgTime(next)); err != nil {
				return err
			}
			probed = append(probed, d.company)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("probe refused credentials: %w", err)
	}
	return probed, nil
}

// ResumeCredentialStop forgets the company's stop and makes its stopped
// documents due.
func (s *Store) ResumeCredentialStop(ctx context.Context, companyID int64, now time.Time) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, qForgetCredentialStop, companyID)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		tag, err = tx.Exec(ctx, qResumeStoppedDocuments, pgTime(now), companyID)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		tag, err = tx.Exec(ctx, qResumeStoppedReceived, pgTime(now), companyID)
		n += int(tag.RowsAffected())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("resume company %d's stopped documents: %w", companyID, err)
	}
	return n, nil
}

// RequeueStopped makes the documents that wait for their company due.
func (s *Store) RequeueStopped(ctx context.Context, q tenant.RequeueQuery, now time.Time) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if q.Clave == "" {
			// Every stopped document of the companies is made due: their
			// stops have nothing left to probe.
			if _, err := tx.Exec(ctx, qRequeueStoppedCompanies, q.CompanyID); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, qRequeueStopped, pgTime(now), q.CompanyID, q.Clave)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		if q.Clave == "" {
			tag, err = tx.Exec(ctx, qRequeueStoppedReceived, pgTime(now), q.CompanyID)
			n += int(tag.RowsAffected())
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("re-queue stopped documents: %w", err)
	}
	return n, nil
}
