package postgres_test

import (
	"testing"

	"facturad/tenant/storetest"
)

// BenchmarkReads measures the store's reads on the request paths, one
// query each (storetest.BenchReads); the database server runs on the same
// machine (TEST_DATABASE_URL), and its CPU time is not in cpu-ns/op, which
// counts this process only. Run it on one core:
//
//	go test -run '^$' -bench Reads -benchmem -cpu 1 ./tenant/postgres
func BenchmarkReads(b *testing.B) {
	storetest.BenchReads(b, storetest.NewPostgres)
}
