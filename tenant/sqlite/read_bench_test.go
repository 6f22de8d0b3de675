package sqlite_test

import (
	"testing"

	"facturad/tenant/storetest"
)

// BenchmarkReads measures the store's reads on the request paths, one
// query each (storetest.BenchReads). Run it on one core:
//
//	go test -run '^$' -bench Reads -benchmem -cpu 1 ./tenant/sqlite
func BenchmarkReads(b *testing.B) {
	storetest.BenchReads(b, storetest.NewSQLite)
}
