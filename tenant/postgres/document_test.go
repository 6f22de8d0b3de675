package postgres_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func openDocumentStore(tb testing.TB) storetest.DocumentStore {
	return storetest.NewPostgresStore(tb)
}

func TestDocumentStore(t *testing.T) {
	storetest.RunDocuments(t, func(t *testing.T) storetest.DocumentStore { return openDocumentStore(t) })
}

// Two stores on one schema are two replicas: separate pools, one database.
func TestDocumentStoreReplicas(t *testing.T) {
	storetest.RunDocumentReplicas(t, func(t *testing.T) (storetest.DocumentStore, storetest.DocumentStore) {
		return storetest.NewPostgresReplicas(t, nil)
	})
}

func BenchmarkDocumentStore(b *testing.B) {
	storetest.BenchDocuments(b, openDocumentStore)
}

func TestDocumentList(t *testing.T) {
	storetest.RunDocumentList(t, func(t *testing.T) storetest.ListStore { return storetest.NewPostgresStore(t) })
}

func TestCredentialStops(t *testing.T) {
	storetest.RunCredentialStops(t, func(t *testing.T) storetest.CredentialStopStore { return storetest.NewPostgresStore(t) })
}
