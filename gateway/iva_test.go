package gateway

import (
	"context"
	"strings"
	"testing"

	"facturad/hacienda/api"
	"facturad/tenant"
)

// incompleteIVA answers every summary with the refusal of a month whose
// documents cannot all be summed.
type incompleteIVA struct{}

func (incompleteIVA) IVASummary(_ context.Context, _ tenant.Principal, _ int64, periodo string) (tenant.IVASummary, error) {
	return tenant.IVASummary{}, &tenant.IVAIncompleteError{Periodo: periodo, Count: 1,
		Claves: []string{"50601042600310112345600100001010000000099100000099"}}
}

// TestIVARouteIncomplete: a month the summary cannot add up whole is a 409
// in the contract's error form naming the documents, as JSON and as CSV,
// never a summary without them nor a 500 that hides them.
func TestIVARouteIncomplete(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}, Routes: []Route{IVARoute(incompleteIVA{})}})
	for _, q := range []string{"", "&formato=csv"} {
		r := b.do(t, "GET", "/api/companies/2/reportes/iva/v4?periodo=2026-04"+q, &fakeBranch, "", nil)
		requireA7(t, r, 409)
		msg, _ := r.object(t)["message"].(string)
		if !strings.Contains(msg, "50601042600310112345600100001010000000099100000099") || !strings.Contains(msg, "2026-04") {
			t.Errorf("%q: the message does not name the month and the document: %q", q, msg)
		}
	}
}

// TestResumenIVACSVFormulas: a code a supplier wrote that starts like a
// formula reaches the CSV as text; negative amounts (a month of credit
// notes) stay numbers.
func TestResumenIVACSVFormulas(t *testing.T) {
	acr := "-1.30"
	s := api.ResumenIVA{Periodo: "2026-04",
		Ventas: []api.FilaIVA{{Codigo: "01", CodigoTarifaIVA: "08", Tarifa: "13", BaseImponible: "-10.00", Impuesto: "-1.30",
			Exento: "0.00", Exonerado: "0.00", NoSujeto: "0.00", Documentos: 1}},
		Compras: []api.FilaIVA{{Codigo: "=1+1", CodigoTarifaIVA: "@A1", Tarifa: "13", BaseImponible: "-10.00", Impuesto: "-1.30",
			Exento: "0.00", Exonerado: "0.00", NoSujeto: "0.00", Documentos: 1, ImpuestoAcreditable: &acr}},
	}
	body, err := ResumenIVACSV(s)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(ivaCSVHeader, ",") + "\r\n" +
		"ventas,01,08,13,-10.00,-1.30,0.00,0.00,0.00,1,\r\n" +
		"compras,'=1+1,'@A1,13,-10.00,-1.30,0.00,0.00,0.00,1,-1.30\r\n"
	if string(body) != want {
		t.Errorf("csv:\n%q\nwant\n%q", body, want)
	}
}
