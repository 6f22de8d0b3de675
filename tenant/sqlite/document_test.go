package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"facturad/tenant/sqlite"
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
		path := filepath.Join(t.TempDir(), "facturad.db")
		var stores [2]*sqlite.Store
		for i := range stores {
			s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
			if err != nil {
				t.Fatalf("open store %d: %v", i, err)
			}
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("close store %d: %v", i, err)
				}
			})
			stores[i] = s
		}
		return stores[0], stores[1]
	})
}

func BenchmarkDocumentStore(b *testing.B) {
	storetest.BenchDocuments(b, openDocumentStore)
}

func TestDocumentList(t *testing.T) {
	storetest.RunDocumentList(t, func(t *testing.T) storetest.ListStore { return storetest.NewSQLiteStore(t) })
}
