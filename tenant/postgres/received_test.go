package postgres_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func TestReceivedStore(t *testing.T) {
	storetest.RunReceived(t, func(t *testing.T) storetest.ReceivedStore { return storetest.NewPostgresStore(t) })
}

func TestReceivedList(t *testing.T) {
	storetest.RunReceivedList(t, func(t *testing.T) storetest.ReceivedStore { return storetest.NewPostgresStore(t) })
}
