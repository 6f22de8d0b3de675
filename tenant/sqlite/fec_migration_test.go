package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"facturad/tenant"
	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

// TestFECPartiesMigration runs migration 0007 over documents stored the
// way they were before it (the company as emisor of a purchase invoice,
// its seller as receptor) and checks that a purchase invoice's parties are
// swapped and an invoice's are not.
func TestFECPartiesMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "facturad.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := storetest.AddCompany(t, s, "Compras")
	bs, err := s.Branches(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	seller := "205550666"
	stored := map[string]string{} // clave → tipo
	for i, tipo := range []string{"08", "01"} {
		cons := "00100001" + tipo + fmt.Sprintf("%010d", i+1)
		clave := "506" + "210126" + "00" + c.NumeroIdentificacion + cons + "1" + fmt.Sprintf("%08d", i+1)
		h := sha256.Sum256([]byte(clave))
		d := tenant.Document{CompanyID: c.ID,
			BranchID:       bs[0].ID,
			IDExterno:      "doc-" + tipo,
			RequestHash:    h[:],
			Tipo:           tipo,
			Terminal:       "00001",
			Numero:         int64(i + 1),
			Consecutivo:    cons,
			Clave:          clave,
			Situacion:      "1",
			FechaEmision:   time.Date(2026, 1, 21, 10, 0, 0, 0, time.UTC),
			EmisorTipo:     "02",
			EmisorNumero:   c.NumeroIdentificacion,
			ReceptorTipo:   "01",
			ReceptorNumero: seller,
			Submission:     tenant.Submission{Phase: tenant.PhaseRetrying, Estado: tenant.StateNotSentYet},
		}
		if err := s.ReserveDocument(ctx, &d); err != nil {
			t.Fatal(err)
		}
		stored[clave] = tipo
	}

	migration, err := os.ReadFile("migrations/0007_fec_parties.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, string(migration)); err != nil {
		t.Fatalf("migration 0007: %v", err)
	}

	for clave, tipo := range stored {
		d, err := s.DocumentByClave(ctx, clave)
		if err != nil {
			t.Fatal(err)
		}
		emisor, receptor := d.EmisorTipo+" "+d.EmisorNumero, d.ReceptorTipo+" "+d.ReceptorNumero
		company, sellerID := "02 "+c.NumeroIdentificacion, "01 "+seller
		switch {
		case tipo == "08" && (emisor != sellerID || receptor != company):
			t.Errorf("purchase invoice after the migration: emisor %s, receptor %s; want the seller and the company", emisor, receptor)
		case tipo == "01" && (emisor != company || receptor != sellerID):
			t.Errorf("invoice after the migration: emisor %s, receptor %s; want them unchanged", emisor, receptor)
		}
	}
}
