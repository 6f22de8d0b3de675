// Package storetest is the conformance suite of the tenant.Store contract
// and the helpers other packages' tests use to get a real store.
//
// Run checks every behaviour of the contract against a store that the
// caller opens fresh for each subtest; tenant/sqlite and tenant/postgres
// both run it. NewSQLite and NewPostgres give an isolated, migrated store
// that is removed when the test ends (a temporary file; a schema of its own
// on TEST_DATABASE_URL). PostgresURL and RedisURL read the test
// environment: when a service is not configured a test skips, unless
// TEST_REQUIRE_SERVICES is on (deploy/testenv), in which case it fails.
//
// Bench, BenchReads and BenchDocuments are the benchmarks both stores run;
// ReportCPU adds a cpu-ns/op figure to a benchmark. AddCompany makes a
// minimal company for a test. BlackholeRedis and ClosedAddr stand in for a
// Redis that never answers or refuses connections, for timeout tests.
package storetest
