package postgres_test

import (
	"context"
	"testing"

	"facturad/tenant/postgres"
	"facturad/tenant/storetest"
)

func TestDelivery(t *testing.T) {
	storetest.RunDelivery(t, func(t *testing.T) storetest.DeliveryStore { return storetest.NewPostgresStore(t) })
}

// Two stores on one schema are two replicas claiming endpoints and e-mails.
func TestDeliveryReplicas(t *testing.T) {
	storetest.RunDeliveryReplicas(t, func(t *testing.T) (storetest.DeliveryStore, storetest.DeliveryStore) {
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

func BenchmarkOutbox(b *testing.B) {
	storetest.BenchOutbox(b, func(tb testing.TB) storetest.DeliveryStore { return storetest.NewPostgresStore(tb) })
}
