package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"facturad/tenant"
)

// A document's large parts are stored compressed with lz4 where the server
// has it (migration 0017), and with pglz where it does not.
func TestLargePartsCompression(t *testing.T) {
	s := openPlanStore(t)
	ctx := context.Background()

	want, wantAttr := "pglz", ""
	if lz4Available(t, s) {
		want, wantAttr = "lz4", "l"
	} else {
		t.Log("this server has no lz4: checking that the columns keep pglz")
	}

	t.Run("columns", func(t *testing.T) {
		for _, c := range []struct{ table, column string }{
			{"documents", "request"}, {"documents", "signed_xml"}, {"documents", "response_xml"},
			{"received_documents", "supplier_xml"}, {"received_documents", "signed_xml"},
			{"received_documents", "response_xml"},
		} {
			var got string
			err := s.pool.QueryRow(ctx, `SELECT attcompression::text FROM pg_attribute
WHERE attrelid = $1::regclass AND attname = $2`, c.table, c.column).Scan(&got)
			if err != nil {
				t.Fatalf("%s.%s: %v", c.table, c.column, err)
			}
			if got != wantAttr {
				t.Errorf("%s.%s: compression %q, want %q", c.table, c.column, got, wantAttr)
			}
		}
	})

	t.Run("stored values", func(t *testing.T) {
		company := tenant.Company{ID: 1, RazonSocial: "Compresión S.A.", Activo: true, NumeroIdentificacion: "3101000001"}
		branch := tenant.Branch{Sucursal: "001", Activo: true}
		user := tenant.APIUser{Username: "compresion", TokenHash: bytes.Repeat([]byte{1}, 32), Role: tenant.RoleBranch, Activo: true}
		if err := s.CreateCompany(ctx, &company, &branch, &user); err != nil {
			t.Fatal(err)
		}
		// Large enough to be compressed (over 2 KB), and compressible.
		part := func(what string) []byte {
			var b bytes.Buffer
			for i := range 200 {
				fmt.Fprintf(&b, "<LineaDetalle><NumeroLinea>%d</NumeroLinea><Detalle>%s</Detalle></LineaDetalle>\n", i, what)
			}
			return b.Bytes()
		}
		d := tenant.Document{CompanyID: company.ID,
			BranchID:   branch.ID,
			IDExterno:  "lz4",
			Tipo:       "01",
			Terminal:   "00001",
			Situacion:  "1",
			Request:    part("request"),
			Submission: tenant.Submission{Phase: tenant.PhaseFor(tenant.StatePending), Estado: tenant.StatePending},
		}
		if err := s.ReserveDocument(ctx, &d); err != nil {
			t.Fatal(err)
		}
		d.SignedXML = part("signed")
		d.Place(tenant.StateNotSentYet)
		if err := s.SaveDocument(ctx, &d); err != nil {
			t.Fatal(err)
		}
		d.SignedXML, d.ResponseXML = nil, part("answer")
		d.Place(tenant.StateAccepted)
		if err := s.SaveDocument(ctx, &d); err != nil {
			t.Fatal(err)
		}
		var got [3]*string
		err := s.pool.QueryRow(ctx, `SELECT pg_column_compression(request), pg_column_compression(signed_xml),
    pg_column_compression(response_xml) FROM documents WHERE id = $1`, d.ID).Scan(&got[0], &got[1], &got[2])
		if err != nil {
			t.Fatal(err)
		}
		for i, name := range []string{"request", "signed_xml", "response_xml"} {
			if got[i] == nil || *got[i] != want {
				t.Errorf("%s stored with %v, want %s", name, deref(got[i]), want)
			}
		}
		back, err := s.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back.Request, part("request")) || !bytes.Equal(back.SignedXML, part("signed")) ||
			!bytes.Equal(back.ResponseXML, part("answer")) {
			t.Error("a large part read back differs from the one stored")
		}
	})
}

// lz4Available says whether the server can compress with lz4.
func lz4Available(t *testing.T, s *Store) bool {
	t.Helper()
	var methods []string
	if err := s.pool.QueryRow(context.Background(),
		`SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'`).Scan(&methods); err != nil {
		t.Fatal(err)
	}
	return slices.Contains(methods, "lz4")
}

func deref(p *string) string {
	if p == nil {
		return "no compression"
	}
	return *p
}

// Migration 0017 locks the documents' tables: it gives up after its lock
// timeout, changing nothing, rather than hold back every save behind a long
// transaction, and applies once that transaction ends.
func TestLZ4MigrationGivesWay(t *testing.T) {
	s := openPlanStore(t)
	ctx := context.Background()
	// Back to before 0017.
	for _, q := range []string{
		`DELETE FROM schema_migrations WHERE version = 17`,
		`ALTER TABLE documents ALTER COLUMN signed_xml SET COMPRESSION DEFAULT`,
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	holder, err := pgx.Connect(ctx, os.Getenv("TEST_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+pgx.Identifier{s.schema, "documents"}.Sanitize()+" IN ACCESS SHARE MODE"); err != nil {
		t.Fatal(err)
	}

	err = s.Migrate(ctx)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
		t.Fatalf("Migrate while a transaction holds documents: %v, want a lock timeout (55P03)", err)
	}
	var applied int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = 17`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if applied != 0 {
		t.Error("0017 recorded although it gave up")
	}

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate once the transaction ended: %v", err)
	}
	var got string
	if err := s.pool.QueryRow(ctx, `SELECT attcompression::text FROM pg_attribute
WHERE attrelid = 'documents'::regclass AND attname = 'signed_xml'`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "l" && lz4Available(t, s) {
		t.Errorf("documents.signed_xml compression %q after the migration, want lz4", got)
	}
}
