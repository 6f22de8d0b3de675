package sqlite_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func TestStateStore(t *testing.T) {
	storetest.RunState(t, func(t *testing.T) storetest.StateStore { return storetest.NewSQLiteStore(t) })
}
