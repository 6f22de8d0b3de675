package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"facturad/tenant/storetest"
)

// TestSQLStates: the state and phase lists the schema and the queries
// write out are tenant's.
func TestSQLStates(t *testing.T) {
	sources := map[string][]byte{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, "migrations/0001_schema.sql") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources[f] = b
	}
	storetest.CheckSQLStates(t, sources)
}
