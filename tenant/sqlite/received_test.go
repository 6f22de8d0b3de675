package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

func TestReceivedStore(t *testing.T) {
	storetest.RunReceived(t, func(t *testing.T) storetest.ReceivedStore { return storetest.NewSQLiteStore(t) })
}

// Two stores on one file stand for two processes sharing it.
func TestReceivedStoreTwoOnOneFile(t *testing.T) {
	storetest.RunReceivedReplicas(t, func(t *testing.T) (storetest.ReceivedStore, storetest.ReceivedStore) {
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

func TestReceivedList(t *testing.T) {
	storetest.RunReceivedList(t, func(t *testing.T) storetest.ReceivedStore { return storetest.NewSQLiteStore(t) })
}
