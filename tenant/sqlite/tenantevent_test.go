package sqlite_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func TestTenantEvents(t *testing.T) {
	storetest.RunTenantEvents(t, func(t *testing.T) storetest.TenantEventStore { return storetest.NewSQLiteStore(t) })
}

// Two stores on one file are two processes recording the same occasions.
func TestTenantEventReplicas(t *testing.T) {
	storetest.RunTenantEventReplicas(t, func(t *testing.T) (storetest.TenantEventStore, storetest.TenantEventStore) {
		return storetest.NewSQLiteReplicas(t, nil)
	})
}
