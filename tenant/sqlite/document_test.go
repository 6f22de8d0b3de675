package sqlite_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func openDocumentStore(tb testing.TB) storetest.DocumentStore {
	return storetest.NewSQLiteStore(tb)
}

func TestDocumentStore(t *testing.T) {
	storetest.RunDocuments(t, func(t *testing.T) storetest.DocumentStore { return openDocumentStore(t) })
}

// Two stores on one file stand for two processes sharing it: their
// IMMEDIATE transactions serialise through the file lock.
func TestDocumentStoreTwoOnOneFile(t *testing.T) {
	storetest.RunDocumentReplicas(t, func(t *testing.T) (storetest.DocumentStore, storetest.DocumentStore) {
		return storetest.NewSQLiteReplicas(t, nil)
	})
}

func BenchmarkDocumentStore(b *testing.B) {
	storetest.BenchDocuments(b, openDocumentStore)
}

func TestDocumentList(t *testing.T) {
	storetest.RunDocumentList(t, func(t *testing.T) storetest.ListStore { return storetest.NewSQLiteStore(t) })
}
