package client_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/hacienda"
)

// TestRegistryCalls goes through the registry lookups against the
// service and its sandbox's registries (docs/sandbox-registry.md), and a
// send the registries refuse.
func TestRegistryCalls(t *testing.T) {
	ctx := testContext(t)
	rec := &recorder{bodies: map[string][]byte{}}
	branch := newBranch(t, client.WithHTTPClient(&http.Client{Transport: rec}))

	c, err := branch.Contribuyente(ctx, "3101471100")
	if err != nil || c.Nombre == "" || len(c.Actividades) == 0 || c.Situacion.Estado != "Inscrito" || c.Desactualizado {
		t.Fatalf("contribuyente: %+v, %v", c, err)
	}
	strict(t, "contribuyente", rec.bodies["GET /api/registry/contribuyentes/3101471100/v4"], &client.Contribuyente{})
	var apiErr *client.Error
	if _, err := branch.Contribuyente(ctx, "3101230000"); !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
		t.Errorf("an unregistered taxpayer: %v, want a 404", err)
	}

	found, err := branch.SearchCabys(ctx, "ferreteria", 5)
	if err != nil || len(found.Items) == 0 || len(found.Items) > 5 {
		t.Errorf("search: %+v, %v", found, err)
	}
	if one, err := branch.Cabys(ctx, "8314100000000"); err != nil || len(one.Items) != 1 || one.Items[0].Impuesto.String() != "13" {
		t.Errorf("by code: %+v, %v", one, err)
	}
	if none, err := branch.Cabys(ctx, "8314100000999"); err != nil || len(none.Items) != 0 {
		t.Errorf("a code not in force: %+v, %v", none, err)
	}

	ex, err := branch.Exoneracion(ctx, "AL-00100002-26")
	if err != nil || ex.Identificacion != "114440555" || ex.PorcentajeExoneracion.String() != "10" || len(ex.Cabys) != 2 {
		t.Errorf("exoneración: %+v, %v", ex, err)
	}
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, hacienda.CostaRica)
	if tc, err := branch.TipoCambio(ctx, "", day); err != nil || tc.Moneda != "USD" || tc.Fecha != "2026-03-02" || tc.Venta.String() == "" {
		t.Errorf("tipo de cambio: %+v, %v", tc, err)
	}

	// A send to an unregistered receptor: a 400 on the field, no number.
	req := invoice("REG-REFUSED")
	req.Receptor.Identificacion.Numero = "3101230000"
	req.Receptor.Identificacion.Tipo = "02"
	_, err = branch.Send(ctx, req, client.SendOptions{})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || len(apiErr.Fields["ReceptorRequest.Identificacion"]) == 0 {
		t.Errorf("a send to an unregistered receptor: %v", err)
	}
}
