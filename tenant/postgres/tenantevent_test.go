package postgres_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func TestTenantEvents(t *testing.T) {
	storetest.RunTenantEvents(t, func(t *testing.T) storetest.TenantEventStore { return storetest.NewPostgresStore(t) })
}

// Two stores on one schema are two replicas recording the same occasions.
func TestTenantEventReplicas(t *testing.T) {
	storetest.RunTenantEventReplicas(t, func(t *testing.T) (storetest.TenantEventStore, storetest.TenantEventStore) {
		return storetest.NewPostgresReplicas(t, nil)
	})
}
