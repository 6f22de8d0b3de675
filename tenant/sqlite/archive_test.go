package sqlite_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func TestArchiveStore(t *testing.T) {
	storetest.RunArchive(t, func(t *testing.T) storetest.ArchiveStore { return storetest.NewSQLiteStore(t) })
}

// Two stores on one file stand for two processes sharing it.
func TestArchiveStoreReplicas(t *testing.T) {
	storetest.RunArchiveReplicas(t, func(t *testing.T) (storetest.ArchiveStore, storetest.ArchiveStore) {
		return storetest.NewSQLiteReplicas(t, nil)
	})
}
