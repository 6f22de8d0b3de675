package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"facturad/tenant"
)

var _ tenant.CredentialStopStore = (*Store)(nil)

const (
	qStopOnCredentials = `INSERT INTO credential_stops (company_id, since, attempts, next_probe_at)
VALUES (?, ?, 0, ?) ON CONFLICT (company_id) DO NOTHING`
	qDueCredentialStops = `SELECT company_id, attempts FROM credential_stops
WHERE next_probe_at <= ? ORDER BY next_probe_at, company_id LIMIT ?`
	qProbeCredentialStop  = `UPDATE credential_stops SET attempts = attempts + 1, next_probe_at = ? WHERE company_id = ?`
	qForgetCredentialStop = `DELETE FROM credential_stops WHERE company_id = ?`
	// qProbeDocument makes the company's oldest stopped document due; the
	// condition is the documents_list_estado index's prefix.
	qProbeDocument = `UPDATE documents SET next_attempt_at = ?1
WHERE id = (SELECT id FROM documents
    WHERE company_id = ?2 AND estado = '05' AND next_attempt_at IS NULL ORDER BY id LIMIT 1)`
	qResumeStoppedDocuments = `UPDATE documents SET next_attempt_at = ?1
WHERE company_id = ?2 AND estado = '05' AND next_attempt_at IS NULL`
	qRequeueStopped = `UPDATE documents SET next_attempt_at = ?1
WHERE ` + unsettledEstados + ` AND next_attempt_at IS NULL
    AND (?2 = 0 OR company_id = ?2) AND (?3 = '' OR (clave = ?3 AND clave <> ''))`
	qRequeueStoppedCompanies = `DELETE FROM credential_stops WHERE ?1 = 0 OR company_id = ?1`

	// The same for the company's receiver's messages (received_documents):
	// a probe takes a message when no document is left to probe.
	qProbeReceived = `UPDATE received_documents SET next_attempt_at = ?1
WHERE id = (SELECT id FROM received_documents
    WHERE company_id = ?2 AND estado = '05' AND next_attempt_at IS NULL ORDER BY id LIMIT 1)`
	qResumeStoppedReceived = `UPDATE received_documents SET next_attempt_at = ?1
WHERE company_id = ?2 AND estado = '05' AND next_attempt_at IS NULL`
	qRequeueStoppedReceived = `UPDATE received_documents SET next_attempt_at = ?1
WHERE ` + unsettledEstados + ` AND next_attempt_at IS NULL AND (?2 = 0 OR company_id = ?2)`
)

// StopOnCredentials records that the company's credentials were refused
// and, when the stop begins, ev in the same transaction.
func (s *Store) StopOnCredentials(ctx context.Context, companyID int64, now, next time.Time, ev *tenant.TenantEvent) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("record company %d's refused credentials: %w", companyID, mapErr(err))
		}
	}()
	if ev == nil {
		_, err := s.write.ExecContext(ctx, qStopOnCredentials, companyID, formatTime(now), formatTime(next))
		return err
	}
	if err := ev.Check(); err != nil {
		return err
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	res, err := tx.ExecContext(ctx, qStopOnCredentials, companyID, formatTime(now), formatTime(next))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 1 { // a stop already there was announced when it began
		if _, err := recordTenantEvent(ctx, tx, *ev); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// ProbeCredentialStops makes one stopped document of each company whose
// probe is due, due at now, and moves its next probe on.
func (s *Store) ProbeCredentialStops(ctx context.Context, now time.Time, base, max time.Duration, limit int) (_ []int64, err error) {
	if limit < 1 {
		return nil, nil
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("probe refused credentials: %w", err)
		}
	}()
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	rows, err := tx.QueryContext(ctx, qDueCredentialStops, formatTime(now), limit)
	if err != nil {
		return nil, err
	}
	type due struct {
		company  int64
		attempts int
	}
	var all []due
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.company, &d.attempts); err != nil {
			rows.Close()
			return nil, err
		}
		all = append(all, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var probed []int64
	for _, d := range all {
		n, err := updated(tx.ExecContext(ctx, qProbeDocument, formatTime(now), d.company))
		if err != nil {
			return nil, err
		}
		if !n {
			if n, err = updated(tx.ExecContext(ctx, qProbeReceived, formatTime(now), d.company)); err != nil {
				return nil, err
			}
		}
		if !n {
			if _, err := tx.ExecContext(ctx, qForgetCredentialStop, d.company); err != nil {
				return nil, err
			}
			continue
		}
		next := now.Add(tenant.ProbeWait(base, max, d.attempts+1))
		if _, err := tx.ExecContext(ctx, qProbeCredentialStop, formatTime(next), d.company); err != nil {
			return nil, err
		}
		probed = append(probed, d.company)
	}
	return probed, tx.Commit()
}

// ResumeCredentialStop forgets the company's stop and makes its stopped
// documents due.
func (s *Store) ResumeCredentialStop(ctx context.Context, companyID int64, now time.Time) (_ int, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("resume company %d's stopped documents: %w", companyID, err)
		}
	}()
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	stopped, err := updated(tx.ExecContext(ctx, qForgetCredentialStop, companyID))
	if err != nil || !stopped {
		return 0, err
	}
	n, err := affected(tx.ExecContext(ctx, qResumeStoppedDocuments, formatTime(now), companyID))
	if err != nil {
		return 0, err
	}
	m, err := affected(tx.ExecContext(ctx, qResumeStoppedReceived, formatTime(now), companyID))
	if err != nil {
		return 0, err
	}
	return n + m, tx.Commit()
}

// RequeueStopped makes the documents that wait for their company due.
func (s *Store) RequeueStopped(ctx context.Context, q tenant.RequeueQuery, now time.Time) (_ int, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("re-queue stopped documents: %w", err)
		}
	}()
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	if q.Clave == "" {
		// Every stopped document of the companies is made due: their
		// stops have nothing left to probe. One document alone leaves its
		// company's stop to probe the others.
		if _, err := tx.ExecContext(ctx, qRequeueStoppedCompanies, q.CompanyID); err != nil {
			return 0, err
		}
	}
	n, err := affected(tx.ExecContext(ctx, qRequeueStopped, formatTime(now), q.CompanyID, q.Clave))
	if err != nil {
		return 0, err
	}
	if q.Clave == "" {
		m, err := affected(tx.ExecContext(ctx, qRequeueStoppedReceived, formatTime(now), q.CompanyID))
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, tx.Commit()
}

// affected is the number of rows a statement changed.
func affected(res sql.Result, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, errors.Join(errors.New("rows affected"), err)
	}
	return int(n), nil
}
