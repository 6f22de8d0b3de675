package sqlite_test

import (
	"testing"
	"time"

	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

func TestQuotas(t *testing.T) {
	storetest.RunQuotas(t, func(t *testing.T, now func() time.Time) storetest.QuotaStore {
		return storetest.NewSQLiteStoreWith(t, sqlite.Options{Now: now})
	})
}

// Two stores on one file stand for two processes sharing it.
func TestQuotaReplicas(t *testing.T) {
	storetest.RunQuotaReplicas(t, func(t *testing.T) (storetest.QuotaStore, storetest.QuotaStore) {
		return storetest.NewSQLiteReplicas(t, nil)
	})
}
