package client_test

import (
	"errors"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/hacienda"
)

// TestIVASummaryCalls: a company's accepted invoice in its month's
// summary, as JSON and CSV; a malformed periodo is a validation error on
// periodo, another tenant's company not found.
func TestIVASummaryCalls(t *testing.T) {
	ctx := testContext(t)
	admin := newAdmin(t)
	created, err := admin.CreateCompany(ctx, companyForm(nextIdent()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(serviceURL)
	if err != nil {
		t.Fatal(err)
	}
	branch := c.As(created.Credentials())
	doc, err := branch.Send(ctx, invoice("IVA-1"), client.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if doc, err = branch.WaitFinal(ctx, doc.Clave, 100*time.Millisecond); err != nil || doc.Estado != client.EstadoAccepted {
		t.Fatalf("verdict: %+v, %v", doc, err)
	}
	periodo := time.Now().In(hacienda.CostaRica).Format("2006-01")

	s, err := branch.IVASummary(ctx, created.CompaniaID, periodo)
	if err != nil {
		t.Fatal(err)
	}
	// 3 × 1250.50 = 3751.50 at 13 %: 487.695, rounded once to 487.70.
	if s.Periodo != periodo || len(s.Ventas) != 1 || len(s.Compras) != 0 {
		t.Fatalf("summary: %+v", s)
	}
	v := s.Ventas[0]
	if v.Codigo != "01" || v.CodigoTarifaIVA != "08" || v.Tarifa != "13" || v.BaseImponible != "3751.50" ||
		v.Impuesto != "487.70" || v.Documentos != 1 || v.ImpuestoAcreditable != nil {
		t.Errorf("sales row: %+v", v)
	}
	if s.Totales.Ventas.Impuesto != "487.70" || s.Totales.Compras.ImpuestoAcreditable == nil || *s.Totales.Compras.ImpuestoAcreditable != "0.00" {
		t.Errorf("totals: %+v", s.Totales)
	}
	csv, err := branch.IVASummaryCSV(ctx, created.CompaniaID, periodo)
	if err != nil {
		t.Fatal(err)
	}
	want := "lado,codigo,codigoTarifaIVA,tarifa,baseImponible,impuesto,exento,exonerado,noSujeto,documentos,impuestoAcreditable\r\n" +
		"ventas,01,08,13,3751.50,487.70,0.00,0.00,0.00,1,\r\n"
	if string(csv) != want {
		t.Errorf("csv:\n%q\nwant\n%q", csv, want)
	}

	_, err = branch.IVASummary(ctx, created.CompaniaID, "2025-13")
	var ae *client.Error
	if !errors.Is(err, client.ErrValidation) || !errors.As(err, &ae) || len(ae.Fields["periodo"]) != 1 {
		t.Errorf("bad periodo: %v", err)
	}
	if _, err := newBranch(t).IVASummary(ctx, created.CompaniaID, periodo); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("another tenant's company: %v", err)
	}
}
