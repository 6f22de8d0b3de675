package client_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"facturad/gateway/client"
)

// TestOperatorCalls lists the certificates expiring and the documents
// stuck through the real gateway, as an operator; a company's user gets
// ErrNotFound; the client's types cover every field of the answers.
func TestOperatorCalls(t *testing.T) {
	ctx := testContext(t)
	rec := &recorder{bodies: map[string][]byte{}}
	admin := newAdmin(t, client.WithHTTPClient(&http.Client{Transport: rec}))
	created, err := admin.CreateCompany(ctx, companyForm(nextIdent()))
	if err != nil {
		t.Fatal(err)
	}
	far := time.Now().AddDate(50, 0, 0)
	p, err := admin.ExpiringCertificates(ctx, far, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	strict(t, "certificados", rec.bodies["GET /api/admin/certificados/v4"], &client.ExpiringCertificatePage{})
	if len(p.Items) != 1 || p.Items[0].ExpiracionCertificado == "" {
		t.Fatalf("first page: %+v", p)
	}
	var ids []int64
	for c, err := range admin.AllExpiringCertificates(ctx, far) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.CompaniaID)
	}
	if !slices.Contains(ids, created.CompaniaID) {
		t.Errorf("the company created (%d) is not among %v", created.CompaniaID, ids)
	}
	// None expires before today.
	p, err = admin.ExpiringCertificates(ctx, time.Now().AddDate(-1, 0, 0), 0, "")
	if err != nil || len(p.Items) != 0 || p.Next != "" {
		t.Errorf("a year ago: %+v, %v", p, err)
	}
	sp, err := admin.StuckDocuments(ctx, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	strict(t, "documentos-detenidos", rec.bodies["GET /api/admin/documentos-detenidos/v4"], &client.StuckDocumentPage{})
	for d, err := range admin.AllStuckDocuments(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if d.Clave == "" || d.CompaniaID == 0 {
			t.Errorf("stuck document %+v", d)
		}
	}
	if sp.Items == nil {
		t.Error("a page of no stuck documents has nil items")
	}

	branch := newBranch(t)
	if _, err := branch.ExpiringCertificates(ctx, far, 0, ""); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("a company's user listed certificates: %v", err)
	}
	if _, err := branch.StuckDocuments(ctx, 0, ""); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("a company's user listed stuck documents: %v", err)
	}
	var ae *client.Error
	if _, err := admin.ExpiringCertificates(ctx, far, 501, ""); !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Fields["limit"] == nil {
		t.Errorf("limit 501: %v", err)
	}
	if client.EventCertificateExpiring != "certificado.por_vencer" || client.EventDocumentsStuck != "documentos.detenidos" {
		t.Error("the event names")
	}
}
