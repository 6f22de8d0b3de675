package postgres_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func TestDelivery(t *testing.T) {
	storetest.RunDelivery(t, func(t *testing.T) storetest.DeliveryStore { return storetest.NewPostgresStore(t) })
}

// Two stores on one schema are two replicas claiming endpoints and e-mails.
func TestDeliveryReplicas(t *testing.T) {
	storetest.RunDeliveryReplicas(t, func(t *testing.T) (storetest.DeliveryStore, storetest.DeliveryStore) {
		return storetest.NewPostgresReplicas(t, nil)
	})
}

func BenchmarkOutbox(b *testing.B) {
	storetest.BenchOutbox(b, func(tb testing.TB) storetest.DeliveryStore { return storetest.NewPostgresStore(tb) })
}
