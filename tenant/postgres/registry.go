package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"facturad/tenant"
)

const (
	// The store's clock ($2), not the server's, says what is forgotten, so
	// that every replica and the tests agree with the times they write.
	qRegistryGet = `SELECT value FROM registry_cache
WHERE key = $1 AND (forget_at IS NULL OR forget_at > $2)`
	qRegistryPut = `INSERT INTO registry_cache (key, value, forget_at) VALUES ($1, $2, $3)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, forget_at = excluded.forget_at`
	qRegistryPurge = `DELETE FROM registry_cache WHERE key IN (
    SELECT key FROM registry_cache WHERE forget_at <= $1 ORDER BY forget_at LIMIT $2)`
)

var _ tenant.RegistryStore = (*Store)(nil)

// RegistryGet returns the value under key unless it is forgotten.
func (s *Store) RegistryGet(ctx context.Context, key string) ([]byte, bool, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, qRegistryGet, key, s.clock()).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("registry cache get: %w", err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

// RegistryPut stores value under key for keep (0: never forgotten), and
// every tenant.RegistryPurgeEvery puts deletes a batch of forgotten rows.
func (s *Store) RegistryPut(ctx context.Context, key string, value []byte, keep time.Duration) error {
	if keep < 0 {
		return fmt.Errorf("registry cache put: keep %s is negative", keep)
	}
	now := s.clock()
	var forget *time.Time
	if keep > 0 {
		t := now.Add(keep)
		forget = &t
	}
	if value == nil {
		value = []byte{} // the column is NOT NULL; an empty value is a value
	}
	if _, err := s.pool.Exec(ctx, qRegistryPut, key, value, forget); err != nil {
		return fmt.Errorf("registry cache put: %w", err)
	}
	if s.registryPuts.Add(1)%tenant.RegistryPurgeEvery == 0 {
		// The put stands whatever happens here; the next batch retries.
		_, _ = s.PurgeRegistry(ctx, now, tenant.RegistryPurgeBatch)
	}
	return nil
}

// PurgeRegistry deletes up to limit rows forgotten at now, the longest
// forgotten first.
func (s *Store) PurgeRegistry(ctx context.Context, now time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, qRegistryPurge, now.UTC(), limit)
	if err != nil {
		return 0, fmt.Errorf("registry cache purge: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
