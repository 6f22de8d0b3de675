package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

// TestLegacyParts: documents stored before migration 0015, whose request,
// signed XML and answer stay in the documents table's columns, read back
// whole and are saved as the others are.
func TestLegacyParts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "facturad.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	toLegacy := func(t *testing.T) {
		db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range []string{
			`UPDATE documents SET
    signed_xml = (SELECT xml FROM document_signed_xml WHERE document_id = documents.id),
    response_xml = (SELECT xml FROM document_response_xml WHERE document_id = documents.id),
    request = (SELECT request FROM document_requests WHERE document_id = documents.id)`,
			`DELETE FROM document_signed_xml`,
			`DELETE FROM document_response_xml`,
			`DELETE FROM document_requests`,
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%.60s: %v", q, err)
			}
		}
	}
	storetest.RunLegacyParts(t, s, toLegacy)
}
