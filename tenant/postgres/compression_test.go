package postgres

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"facturad/tenant"
)

// A document's large parts are stored compressed with lz4 where the server
// has it (the schema sets it on the large columns), and with pglz where it
// does not.
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
		d := tenant.Document{
			CompanyID:  company.ID,
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
