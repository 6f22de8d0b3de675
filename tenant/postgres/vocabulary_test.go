package postgres_test

import (
	"testing"

	"facturad/tenant/storetest"
)

// TestSQLVocabulary: the document types, states and phases the schema and
// the queries write out are those of hacienda's and tenant's tables.
func TestSQLVocabulary(t *testing.T) { storetest.CheckSQLVocabulary(t) }
