package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"facturad/tenant"
)

var _ tenant.StateStore = (*Store)(nil)

const (
	// qUnsettledDocuments counts the issued documents and the received
	// documents' messages not settled yet. Each arm repeats its partial
	// index's condition so that the planner reads documents_waiting and
	// received_waiting alone (covering indexes: they hold next_attempt_at
	// too). Per kind and state: the rows the service works on (a next
	// attempt set), those waiting for their company (none), and the
	// creation of the oldest of the first.
	qUnsettledDocuments = `SELECT 'document', ambiente, estado,
    count(*) FILTER (WHERE next_attempt_at IS NOT NULL),
    count(*) FILTER (WHERE next_attempt_at IS NULL),
    min(created_at) FILTER (WHERE next_attempt_at IS NOT NULL)
FROM documents
WHERE ` + unsettledEstados + `
GROUP BY ambiente, estado
UNION ALL
SELECT 'received', ambiente, estado,
    count(*) FILTER (WHERE next_attempt_at IS NOT NULL),
    count(*) FILTER (WHERE next_attempt_at IS NULL),
    min(created_at) FILTER (WHERE next_attempt_at IS NOT NULL)
FROM received_documents
WHERE ` + unsettledEstados + `
GROUP BY ambiente, estado`
	// qCertificatesExpiring counts the active companies by how soon their
	// certificate expires: ?1 now, ?2 now+30d, ?3 now+7d. Times are
	// fixed-width UTC text, so they compare as text.
	qCertificatesExpiring = `SELECT
    count(*) FILTER (WHERE certificate_expiry > ?1 AND certificate_expiry <= ?2),
    count(*) FILTER (WHERE certificate_expiry > ?1 AND certificate_expiry <= ?3),
    count(*) FILTER (WHERE certificate_expiry <= ?1)
FROM companies
WHERE activo = 1 AND certificate_expiry IS NOT NULL`

	// qTakeLease inserts the lease, or takes it over when its holder is the
	// asker or its time has run out, in one statement on the one write
	// connection: ?1 name, ?2 holder, ?3 now, ?4 until. The store is one
	// process on one host: now is its clock (Options.Now).
	qTakeLease = `INSERT INTO leases AS l (name, holder, expires_at) VALUES (?1, ?2, ?4)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE l.holder = excluded.holder OR l.expires_at <= ?3
RETURNING holder`
	qReleaseLease = `DELETE FROM leases WHERE name = ? AND holder = ?`
)

// StoreState reads the counts of the state gauges as of now.
func (s *Store) StoreState(ctx context.Context, now time.Time) (tenant.StoreState, error) {
	st := tenant.NewStoreState()
	rows, err := s.read.QueryContext(ctx, qUnsettledDocuments)
	if err != nil {
		return tenant.StoreState{}, fmt.Errorf("store state: unsettled documents: %w", err)
	}
	for rows.Next() {
		var (
			kind, ambiente, estado string
			service, caller        int64
			oldest                 sql.NullString // NULL: none the service works on
		)
		if err := rows.Scan(&kind, &ambiente, &estado, &service, &caller, &oldest); err != nil {
			rows.Close()
			return tenant.StoreState{}, fmt.Errorf("store state: unsettled documents: %w", err)
		}
		first, err := parseNullTime(oldest)
		if err != nil {
			rows.Close()
			return tenant.StoreState{}, fmt.Errorf("store state: unsettled documents: %w", err)
		}
		st.AddUnsettled(tenant.UnsettledKind(kind), ambiente, tenant.State(estado), service, caller, first)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return tenant.StoreState{}, fmt.Errorf("store state: unsettled documents: %w", err)
	}
	err = s.read.QueryRowContext(ctx, qCertificatesExpiring, formatTime(now),
		formatTime(now.Add(30*24*time.Hour)), formatTime(now.Add(7*24*time.Hour))).
		Scan(&st.CertificatesWithin30d, &st.CertificatesWithin7d, &st.CertificatesExpired)
	if err != nil {
		return tenant.StoreState{}, fmt.Errorf("store state: certificates: %w", err)
	}
	return st, nil
}

// TakeLease gives the lease name to holder for ttl from the store's now
// (Options.Now) when it is free, already holder's, or ran out at or before
// now.
func (s *Store) TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if name == "" || holder == "" {
		return false, errors.New("take lease: empty name or holder")
	}
	if ttl < time.Microsecond {
		return false, fmt.Errorf("take lease %s: length %s is under a microsecond", name, ttl)
	}
	now := s.now()
	until := now.Add(ttl)
	var got string
	err := s.write.QueryRowContext(ctx, qTakeLease, name, holder, formatTime(now), formatTime(until)).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("take lease %s: %w", name, err)
	}
	return true, nil
}

// ReleaseLease drops holder's lease name, if it holds it.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	if _, err := s.write.ExecContext(ctx, qReleaseLease, name, holder); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}
