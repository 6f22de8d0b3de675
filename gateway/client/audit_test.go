package client_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"

	"facturad/gateway/client"
)

// TestAuditLog reads a company's audit log after changes made to it: the
// entries newest first with who made them and the fields sent, page by
// page as in one walk, and only for those who manage the company.
func TestAuditLog(t *testing.T) {
	ctx := testContext(t)
	rec := &recorder{bodies: map[string][]byte{}}
	admin := newAdmin(t, client.WithHTTPClient(&http.Client{Transport: rec}))
	created, err := admin.CreateCompany(ctx, companyForm(nextIdent()))
	if err != nil {
		t.Fatal(err)
	}
	id := created.CompaniaID
	branch := admin.As(created.Credentials())
	nb, err := branch.CreateBranch(ctx, id, client.BranchInput{Sucursal: "002", RazonComercial: "Sucursal dos"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := branch.CreateAPIUser(ctx, id, nb.ID, "auditor-"+itoa(id)); err != nil {
		t.Fatal(err)
	}

	page, err := branch.AuditLog(ctx, id, 2, "")
	if err != nil || len(page.Items) != 2 || page.Next == "" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	strict(t, "audit log", rec.bodies["GET /api/companies/"+itoa(id)+"/auditoria/v4"], &client.AuditPage{})
	var walked []client.AuditEntry
	for e, err := range branch.AuditEntries(ctx, id) {
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, *e)
	}
	var actions []string
	for _, e := range walked {
		actions = append(actions, e.Accion)
	}
	if want := []string{"usuario.crear", "sucursal.crear", "compania.crear"}; !slices.Equal(actions, want) {
		t.Fatalf("actions %v, want %v", actions, want)
	}
	if walked[0].ID != page.Items[0].ID || walked[1].ID != page.Items[1].ID {
		t.Errorf("the walk and the first page disagree: %+v, %+v", walked[:2], page.Items)
	}
	second, err := branch.AuditLog(ctx, id, 2, page.Next)
	if err != nil || len(second.Items) != 1 || second.Next != "" || second.Items[0].ID != walked[2].ID {
		t.Fatalf("second page: %+v, %v", second, err)
	}
	u := walked[1]
	if u.Usuario.Nombre != created.Usuario || u.Usuario.ID == 0 || u.CompaniaID != id || u.RequestID == "" ||
		!slices.Equal(u.Campos, []string{"razonComercial", "sucursal"}) {
		t.Errorf("branch entry %+v", u)
	}
	if c := walked[2]; c.Usuario.Nombre != adminUser || !slices.Contains(c.Campos, "Certificado") || slices.Contains(c.Campos, "1234") {
		t.Errorf("company entry %+v", c)
	}

	other, err := admin.CreateCompany(ctx, companyForm(nextIdent()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := branch.AuditLog(ctx, other.CompaniaID, 0, ""); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("another company's log: want ErrNotFound, got %v", err)
	}
	if _, err := branch.AuditLog(ctx, id, 0, "not-a-cursor"); !errors.Is(err, client.ErrValidation) {
		t.Errorf("a bad cursor: want ErrValidation, got %v", err)
	}
}
