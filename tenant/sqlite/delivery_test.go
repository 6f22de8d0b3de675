package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

func TestDelivery(t *testing.T) {
	storetest.RunDelivery(t, func(t *testing.T) storetest.DeliveryStore { return storetest.NewSQLiteStore(t) })
}

// Two stores on one file are two processes claiming endpoints and e-mails.
func TestDeliveryReplicas(t *testing.T) {
	storetest.RunDeliveryReplicas(t, func(t *testing.T) (storetest.DeliveryStore, storetest.DeliveryStore) {
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

func BenchmarkOutbox(b *testing.B) {
	storetest.BenchOutbox(b, func(tb testing.TB) storetest.DeliveryStore { return storetest.NewSQLiteStore(tb) })
}
