package postgres_test

import (
	"testing"
	"time"

	"facturad/tenant/postgres"
	"facturad/tenant/storetest"
)

func TestQuotas(t *testing.T) {
	storetest.RunQuotas(t, func(t *testing.T, now func() time.Time) storetest.QuotaStore {
		return storetest.NewPostgresStoreWith(t, postgres.Options{Now: now})
	})
}

// Two stores on one schema are two replicas: separate pools, one database.
func TestQuotaReplicas(t *testing.T) {
	storetest.RunQuotaReplicas(t, func(t *testing.T) (storetest.QuotaStore, storetest.QuotaStore) {
		return storetest.NewPostgresReplicas(t, nil)
	})
}
