package client_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"facturad/gateway/client"
)

// TestExportDownload downloads a company's export through the client: a
// ZIP whose last entry is the index, for the company's user; another
// company's user gets ErrNotFound, a reversed period a 400.
func TestExportDownload(t *testing.T) {
	ctx := testContext(t)
	admin := newAdmin(t)
	created, err := admin.CreateCompany(ctx, companyForm(nextIdent()))
	if err != nil {
		t.Fatal(err)
	}
	other, err := admin.CreateCompany(ctx, companyForm(nextIdent()))
	if err != nil {
		t.Fatal(err)
	}
	user := admin.As(created.Credentials())
	now := time.Now()
	body, err := user.Export(ctx, created.CompaniaID, now.Add(-24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(body)
	if cerr := body.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	if n := len(zr.File); n == 0 || zr.File[n-1].Name != "indice.csv" {
		t.Fatalf("entries %v", zr.File)
	}
	if _, err := admin.As(other.Credentials()).Export(ctx, created.CompaniaID, now.Add(-time.Hour), now); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("another company's user: %v", err)
	}
	var ae *client.Error
	if _, err := user.Export(ctx, created.CompaniaID, now, now.Add(-time.Hour)); !errors.As(err, &ae) || ae.StatusCode != 400 {
		t.Errorf("reversed period: %v", err)
	}
}
