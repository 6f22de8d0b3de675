package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"facturad/tenant/postgres"
	"facturad/tenant/storetest"
)

// TestPartsMigration: documents stored before migration 0012 (their
// request, signed XML and answer in the documents table) read back whole
// after it.
func TestPartsMigration(t *testing.T) {
	url := storetest.PostgresURL(t)
	schema := storetest.UniqueName(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func() {
		if err := s.DropSchema(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	remigrate := func(t *testing.T) storetest.DocumentStore {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `SET search_path TO `+pgx.Identifier{schema}.Sanitize()+`;
ALTER TABLE documents ADD COLUMN signed_xml bytea, ADD COLUMN response_xml bytea, ADD COLUMN request bytea;
UPDATE documents SET
    signed_xml = (SELECT xml FROM document_signed_xml WHERE document_id = documents.id),
    response_xml = (SELECT xml FROM document_response_xml WHERE document_id = documents.id),
    request = (SELECT request FROM document_requests WHERE document_id = documents.id);
DROP TABLE document_signed_xml, document_response_xml, document_requests;
DELETE FROM schema_migrations WHERE version = 12`)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	storetest.RunPartsMigration(t, s, remigrate)
}
