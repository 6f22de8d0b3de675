package postgres_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func TestReceivedStore(t *testing.T) {
	storetest.RunReceived(t, func(t *testing.T) storetest.ReceivedStore { return storetest.NewPostgresStore(t) })
}

// Two stores on one schema are two replicas: separate pools, one database.
func TestReceivedStoreReplicas(t *testing.T) {
	storetest.RunReceivedReplicas(t, func(t *testing.T) (storetest.ReceivedStore, storetest.ReceivedStore) {
		return storetest.NewPostgresReplicas(t, nil)
	})
}

func TestReceivedList(t *testing.T) {
	storetest.RunReceivedList(t, func(t *testing.T) storetest.ReceivedStore { return storetest.NewPostgresStore(t) })
}
