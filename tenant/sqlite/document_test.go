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
		return storetest.NewSQLiteReplicas(t, nil)
	})
}

// TestDocumentStoreIndexes runs the document contract with PRAGMA
// integrity_check after each case: a save that sets only the state leaves
// the indexes over the document's identity alone (qSaveDocumentState), and
// the check finds any index entry that no longer matches its row.
func TestDocumentStoreIndexes(t *testing.T) {
	storetest.RunDocuments(t, func(t *testing.T) storetest.DocumentStore {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "facturad.db")
		s, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if err := sqlite.IntegrityCheck(ctx, path); err != nil {
				t.Error(err)
			}
		})
		return s
	})
}

func BenchmarkDocumentStore(b *testing.B) {
	storetest.BenchDocuments(b, openDocumentStore)
}

func TestDocumentList(t *testing.T) {
	storetest.RunDocumentList(t, func(t *testing.T) storetest.ListStore { return storetest.NewSQLiteStore(t) })
}

func TestCredentialStops(t *testing.T) {
	storetest.RunCredentialStops(t, func(t *testing.T) storetest.CredentialStopStore { return storetest.NewSQLiteStore(t) })
}
