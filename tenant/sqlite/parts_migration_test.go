package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

// TestPartsMigration: documents stored before migration 0012 (their
// request, signed XML and answer in the documents table) read back whole
// after it.
func TestPartsMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "facturad.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	remigrate := func(t *testing.T) storetest.DocumentStore {
		db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range []string{
			`ALTER TABLE documents ADD COLUMN signed_xml BLOB`,
			`ALTER TABLE documents ADD COLUMN response_xml BLOB`,
			`ALTER TABLE documents ADD COLUMN request BLOB`,
			`UPDATE documents SET
    signed_xml = (SELECT xml FROM document_signed_xml WHERE document_id = documents.id),
    response_xml = (SELECT xml FROM document_response_xml WHERE document_id = documents.id),
    request = (SELECT request FROM document_requests WHERE document_id = documents.id)`,
			`DROP TABLE document_signed_xml`,
			`DROP TABLE document_response_xml`,
			`DROP TABLE document_requests`,
			`DELETE FROM schema_migrations WHERE version = 12`,
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%.60s: %v", q, err)
			}
		}
		again, err := sqlite.Open(ctx, path, sqlite.Options{}) // migrates
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { again.Close() })
		return again
	}
	storetest.RunPartsMigration(t, s, remigrate)
}
