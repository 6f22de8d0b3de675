package sqlite_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func TestReceivedStore(t *testing.T) {
	storetest.RunReceived(t, func(t *testing.T) storetest.ReceivedStore { return storetest.NewSQLiteStore(t) })
}

// Two stores on one file stand for two processes sharing it.
func TestReceivedStoreTwoOnOneFile(t *testing.T) {
	storetest.RunReceivedReplicas(t, func(t *testing.T) (storetest.ReceivedStore, storetest.ReceivedStore) {
		return storetest.NewSQLiteReplicas(t, nil)
	})
}

func TestReceivedList(t *testing.T) {
	storetest.RunReceivedList(t, func(t *testing.T) storetest.ReceivedStore { return storetest.NewSQLiteStore(t) })
}
