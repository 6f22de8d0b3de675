package postgres_test

import (
	"context"
	"testing"

	"facturad/tenant/postgres"
	"facturad/tenant/storetest"
)

func TestReceivedStore(t *testing.T) {
	storetest.RunReceived(t, func(t *testing.T) storetest.ReceivedStore { return storetest.NewPostgresStore(t) })
}

// Two stores on one schema are two replicas: separate pools, one database.
func TestReceivedStoreReplicas(t *testing.T) {
	storetest.RunReceivedReplicas(t, func(t *testing.T) (storetest.ReceivedStore, storetest.ReceivedStore) {
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

func TestReceivedList(t *testing.T) {
	storetest.RunReceivedList(t, func(t *testing.T) storetest.ReceivedStore { return storetest.NewPostgresStore(t) })
}
