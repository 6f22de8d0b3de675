package postgres_test

import (
	"context"
	"testing"

	"facturad/tenant/postgres"
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
		url := storetest.PostgresURL(t)
		schema := storetest.UniqueName(t)
		ctx := context.Background()
		var stores [2]*postgres.Store
		for i := range stores {
			s, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, MaxConns: 4})
			if err != nil {
				t.Fatalf("open replica %d: %v", i, err)
			}
			stores[i] = s
		}
		t.Cleanup(func() {
			if err := stores[0].DropSchema(context.Background()); err != nil {
				t.Errorf("drop test schema: %v", err)
			}
			for _, s := range stores {
				s.Close()
			}
		})
		for i, s := range stores {
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrate replica %d: %v", i, err)
			}
		}
		return stores[0], stores[1]
	})
}

func BenchmarkDocumentStore(b *testing.B) {
	storetest.BenchDocuments(b, openDocumentStore)
}

func TestDocumentList(t *testing.T) {
	storetest.RunDocumentList(t, func(t *testing.T) storetest.ListStore { return storetest.NewPostgresStore(t) })
}
