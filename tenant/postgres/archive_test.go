package postgres_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func TestArchiveStore(t *testing.T) {
	storetest.RunArchive(t, func(t *testing.T) storetest.ArchiveStore { return storetest.NewPostgresStore(t) })
}

// Two stores on one schema are two replicas: separate pools, one database.
func TestArchiveStoreReplicas(t *testing.T) {
	storetest.RunArchiveReplicas(t, func(t *testing.T) (storetest.ArchiveStore, storetest.ArchiveStore) {
		return storetest.NewPostgresReplicas(t, nil)
	})
}
