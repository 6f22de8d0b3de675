package sqlite_test

import (
	"testing"

	"facturad/tenant/storetest"
)

func TestIVA(t *testing.T) {
	storetest.RunIVA(t, func(t *testing.T) storetest.IVAStore { return storetest.NewSQLiteStore(t) })
}
