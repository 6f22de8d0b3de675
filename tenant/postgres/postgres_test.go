package postgres_test

import (
	"testing"

	"facturad/tenant"
	"facturad/tenant/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) tenant.Store { return storetest.NewPostgres(t) })
}
