package export_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"facturad/pipeline/export"
	"facturad/tenant"
)

// failingDocs lists n documents and fails to read the second.
type failingDocs struct{ n int }

func (f failingDocs) ListDocuments(_ context.Context, q tenant.ListQuery) ([]tenant.Document, error) {
	if q.After != nil {
		return nil, nil
	}
	var out []tenant.Document
	for i := range f.n {
		out = append(out, tenant.Document{ID: int64(f.n - i), CompanyID: q.CompanyID, Clave: fmt.Sprintf("%050d", i+1),
			FechaEmision: time.Now()})
	}
	return out, nil
}

func (f failingDocs) DocumentByClave(_ context.Context, clave string) (tenant.Document, error) {
	if clave == fmt.Sprintf("%050d", 2) {
		return tenant.Document{}, errors.New("disk on fire")
	}
	return tenant.Document{CompanyID: 1, Clave: clave, Submission: tenant.Submission{Estado: tenant.StateAccepted, SignedXML: []byte("<x/>")}}, nil
}

// TestExportFailsMidway: a store read that fails once the archive has
// started ends it with ERROR.txt and no central directory, so that no
// ZIP reader takes it for whole; WriteTo says so.
func TestExportFailsMidway(t *testing.T) {
	e, err := export.New(export.Options{Companies: allCompanies{}, Documents: failingDocs{n: 3}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.Start(context.Background(), tenant.Principal{Role: tenant.RoleAdmin}, 1, time.Now().Add(-time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	var out bytes.Buffer
	if err := x.WriteTo(context.Background(), &out); err == nil {
		t.Fatal("no error")
	}
	if _, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len())); err == nil {
		t.Error("the incomplete archive reads as a whole ZIP")
	}
	if !bytes.Contains(out.Bytes(), []byte(export.ErrorName)) || !bytes.Contains(out.Bytes(), []byte("INCOMPLETE")) {
		t.Error("no ERROR.txt entry")
	}
	if !bytes.Contains(out.Bytes(), []byte("emitidos/"+fmt.Sprintf("%050d", 1)+".xml")) {
		t.Error("the document before the failure is not in it")
	}
}
