package archive_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"facturad/tenant"
	"facturad/tenant/archive"
	"facturad/tenant/archive/archivetest"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		raw     string
		want    archive.Config
		wantErr string
	}{
		{raw: "s3://bucket/some/prefix/?region=us-east-1", want: archive.Config{Bucket: "bucket", Prefix: "some/prefix", Region: "us-east-1"}},
		{raw: "s3://b?endpoint=https://s3.example.com:9000&region=x", want: archive.Config{Bucket: "b", Endpoint: "https://s3.example.com:9000", Region: "x"}},
		{raw: "https://bucket/p", wantErr: "scheme"},
		{raw: "s3:///p", wantErr: "no bucket"},
		{raw: "s3://key:secret@bucket/p", wantErr: "carries credentials"},
		{raw: "s3://b?endpoint=ftp://x", wantErr: "endpoint"},
		{raw: "s3://b?endpoint=https://x/path", wantErr: "endpoint"},
		{raw: "s3://b?acl=public", wantErr: "unknown parameter"},
	}
	for _, tt := range tests {
		got, err := archive.ParseURL(tt.raw)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseURL(%q) = %v, want an error with %q", tt.raw, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("ParseURL(%q): the error shows the secret: %v", tt.raw, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
		}
	}
}

func TestKey(t *testing.T) {
	// 01:30 UTC on the 1st is still the 31st in Costa Rica.
	row := tenant.ArchiveRow{Kind: tenant.ArchiveIssued, CompanyID: 7, Ambiente: tenant.AmbientePruebas,
		Clave: "50601012600310123456700100001010000000001199999999", FechaEmision: time.Date(2026, 2, 1, 1, 30, 0, 0, time.UTC)}
	want := "p/7/pruebas/emitidos/2026/01/31/50601012600310123456700100001010000000001199999999"
	if got := archive.Key("p", row); got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
	row.Kind, row.FechaEmision, row.CreatedAt = tenant.ArchiveReceived, time.Time{}, time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	if got := archive.Key("", row); got != "7/pruebas/recibidos/2026/03/04/"+row.Clave {
		t.Errorf("Key without a prefix or issue date = %q", got)
	}
}

// unreachable is a client of an object store nothing listens for.
func unreachable(t *testing.T) *archive.Client {
	c, err := archive.New(archive.Config{Bucket: "b", Endpoint: "http://127.0.0.1:1", Region: "us-east-1",
		AccessKey: "AKIDTEST", SecretKey: "very-secret-value"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReaderUnavailable(t *testing.T) {
	var outcomes []string
	r := &archive.Reader{C: unreachable(t), RetryAfter: 7 * time.Second, Read: func(o string) { outcomes = append(outcomes, o) }}
	d := tenant.Document{ID: 1, CompanyID: 2, Clave: "506", Ambiente: "pruebas", Submission: tenant.Submission{Phase: tenant.PhaseAccepted}}
	err := r.FillDocument(context.Background(), &d)
	var un *tenant.ArchiveUnavailableError
	if !errors.As(err, &un) || un.RetryAfter() != 7*time.Second || un.HTTPStatus() != 503 {
		t.Fatalf("FillDocument with the archive down = %v, want an ArchiveUnavailableError with Retry-After 7s", err)
	}
	if strings.Contains(err.Error(), "very-secret-value") || strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("the error names the object store: %v", err)
	}
	if len(outcomes) != 1 || outcomes[0] != "unavailable" {
		t.Errorf("reads counted %v", outcomes)
	}
	// A document whose parts the store keeps never asks the archive.
	kept := tenant.Document{ID: 1, Clave: "506", Submission: tenant.Submission{Phase: tenant.PhaseAccepted, SignedXML: []byte("<x/>")}}
	if err := r.FillDocument(context.Background(), &kept); err != nil {
		t.Errorf("FillDocument of a kept document: %v", err)
	}
	// Nor does an unsettled one without a signed XML.
	pending := tenant.Document{ID: 1, Clave: "506", Submission: tenant.Submission{Phase: tenant.PhaseNumbered}}
	if err := r.FillDocument(context.Background(), &pending); err != nil {
		t.Errorf("FillDocument of an unsigned document: %v", err)
	}
	// A read for an answer that shows no XML does not ask either: the
	// dropped document keeps its metadata and empty parts.
	meta := d
	if err := r.FillDocument(tenant.WithoutArchivedParts(context.Background()), &meta); err != nil || len(meta.SignedXML) != 0 || meta.Clave != d.Clave {
		t.Errorf("FillDocument for the metadata only = %v, %+v", err, meta)
	}
	rec := tenant.ReceivedDocument{ID: 1, CompanyID: 2, Clave: "506", Submission: tenant.Submission{Phase: tenant.PhaseRejected}}
	if err := r.FillReceived(tenant.WithoutArchivedParts(context.Background()), &rec); err != nil {
		t.Errorf("FillReceived for the metadata only: %v", err)
	}
	if err := r.FillReceived(context.Background(), &rec); !errors.As(err, &un) {
		t.Errorf("FillReceived with the archive down = %v, want an ArchiveUnavailableError", err)
	}
	if len(outcomes) != 2 {
		t.Errorf("reads counted %v, want two unavailable", outcomes)
	}
	_, err = unreachable(t).Ensure(context.Background(), "k", []byte("x"))
	if err == nil || strings.Contains(err.Error(), "very-secret-value") {
		t.Errorf("Ensure against nothing = %v, want an error without the secret", err)
	}
}

// TestClient runs the client against a real S3-compatible store.
func TestClient(t *testing.T) {
	cfg := archivetest.Config(t)
	c, err := archive.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	key := cfg.Prefix + "/a/firmado.xml"
	if _, err := c.Get(ctx, key); !errors.Is(err, archive.ErrNoObject) {
		t.Fatalf("Get of a missing object = %v, want ErrNoObject", err)
	}
	data := []byte("<FacturaElectronica>ñ</FacturaElectronica>")
	steps := []struct {
		data        []byte
		wantWritten bool
	}{{data, true}, {data, false}, {append([]byte(nil), "<otro/>"...), true},
		// As long as the last, so told apart by its MD5.
		{append([]byte(nil), "<otra/>"...), true}, {append([]byte(nil), "<otra/>"...), false}}
	for i, st := range steps {
		written, err := c.Ensure(ctx, key, st.data)
		if err != nil || written != st.wantWritten {
			t.Fatalf("step %d: Ensure = %v, %v; want written %v", i, written, err, st.wantWritten)
		}
		got, err := c.Get(ctx, key)
		if err != nil || !bytes.Equal(got, st.data) {
			t.Fatalf("step %d: Get = %q, %v", i, got, err)
		}
	}
	// A wrong secret is refused, and the refusal does not show it.
	bad := cfg
	bad.SecretKey = "wrong-secret-123"
	bc, _ := archive.New(bad)
	if _, err := bc.Get(ctx, key); err == nil || errors.Is(err, archive.ErrNoObject) || strings.Contains(err.Error(), "wrong-secret-123") {
		t.Errorf("Get with a wrong secret = %v", err)
	}
}

// TestReaderRoundTrip writes a document's and a received document's parts
// and reads them back into rows whose parts were dropped.
func TestReaderRoundTrip(t *testing.T) {
	cfg := archivetest.Config(t)
	c, err := archive.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d := tenant.Document{ID: 3, CompanyID: 9, Ambiente: "pruebas", Clave: strings.Repeat("5", 50),
		FechaEmision: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC),
		Submission:   tenant.Submission{Phase: tenant.PhaseAccepted, SignedXML: []byte("<signed/>"), ResponseXML: []byte("<answer/>")}}
	parts := []archive.Part{{archive.PartSigned, d.SignedXML}, {archive.PartResponse, d.ResponseXML}}
	loc := c.Location(archive.DocumentRow(d))
	if loc.Bucket != cfg.Bucket || !strings.HasPrefix(loc.Key, cfg.Prefix+"/9/pruebas/emitidos/2026/05/06/") {
		t.Fatalf("Location = %+v", loc)
	}
	n, err := c.Write(ctx, loc, parts)
	if err != nil || n != 2 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	dropped := d
	dropped.SignedXML, dropped.ResponseXML = nil, nil
	r := &archive.Reader{C: c}
	if err := r.FillDocument(ctx, &dropped); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dropped.SignedXML, d.SignedXML) || !bytes.Equal(dropped.ResponseXML, d.ResponseXML) {
		t.Errorf("filled %q, %q", dropped.SignedXML, dropped.ResponseXML)
	}
	// A received document without an answer: the missing optional part
	// reads empty, the missing supplier XML is an error, not a 503.
	rd := tenant.ReceivedDocument{ID: 4, CompanyID: 9, Ambiente: "pruebas", Clave: strings.Repeat("6", 50),
		Submission: tenant.Submission{Phase: tenant.PhaseAccepted}}
	var un *tenant.ArchiveUnavailableError
	if err := r.FillReceived(ctx, &rd); err == nil || errors.As(err, &un) {
		t.Errorf("FillReceived of an unarchived row = %v, want a plain error", err)
	}
	if _, err := c.Write(ctx, c.Location(archive.ReceivedRow(rd)), []archive.Part{{archive.PartSupplier, []byte("<s/>")}, {archive.PartMessage, []byte("<m/>")}}); err != nil {
		t.Fatal(err)
	}
	if err := r.FillReceived(ctx, &rd); err != nil || string(rd.SupplierXML) != "<s/>" || string(rd.SignedXML) != "<m/>" || rd.ResponseXML != nil {
		t.Errorf("FillReceived = %v: %q %q %q", err, rd.SupplierXML, rd.SignedXML, rd.ResponseXML)
	}
}

// TestReaderAfterURLChange reads rows archived before the operator changed
// FACTURAD_ARCHIVE_URL's bucket and prefix: from where each row records it
// was archived, not from where the client would archive it now.
func TestReaderAfterURLChange(t *testing.T) {
	before := archivetest.Config(t)
	old, err := archive.New(before)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d := tenant.Document{ID: 5, CompanyID: 9, Ambiente: "pruebas", Clave: strings.Repeat("7", 50),
		FechaEmision: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC),
		Submission:   tenant.Submission{Phase: tenant.PhaseAccepted, SignedXML: []byte("<signed/>"), ResponseXML: []byte("<answer/>")}}
	d.Archive = old.Location(archive.DocumentRow(d))
	if _, err := old.Write(ctx, d.Archive, []archive.Part{{archive.PartSigned, d.SignedXML}, {archive.PartResponse, d.ResponseXML}}); err != nil {
		t.Fatal(err)
	}
	rd := tenant.ReceivedDocument{ID: 6, CompanyID: 9, Ambiente: "pruebas", Clave: strings.Repeat("8", 50),
		Submission: tenant.Submission{Phase: tenant.PhaseAccepted}}
	rd.Archive = old.Location(archive.ReceivedRow(rd))
	if _, err := old.Write(ctx, rd.Archive, []archive.Part{{archive.PartSupplier, []byte("<s/>")}}); err != nil {
		t.Fatal(err)
	}

	after := before
	after.Bucket, after.Prefix = before.Bucket+"-nuevo", "otro/"+before.Prefix
	archivetest.MakeBucket(t, after)
	now, err := archive.New(after)
	if err != nil {
		t.Fatal(err)
	}
	if loc := now.Location(archive.DocumentRow(d)); loc == d.Archive {
		t.Fatalf("the new URL archives where the old one did: %+v", loc)
	}
	r := &archive.Reader{C: now}
	dropped := d
	dropped.SignedXML, dropped.ResponseXML = nil, nil
	if err := r.FillDocument(ctx, &dropped); err != nil || !bytes.Equal(dropped.SignedXML, d.SignedXML) || !bytes.Equal(dropped.ResponseXML, d.ResponseXML) {
		t.Fatalf("FillDocument after the URL changed = %v: %q %q", err, dropped.SignedXML, dropped.ResponseXML)
	}
	if err := r.FillReceived(ctx, &rd); err != nil || string(rd.SupplierXML) != "<s/>" {
		t.Fatalf("FillReceived after the URL changed = %v: %q", err, rd.SupplierXML)
	}
	// A row with no record is looked for where the client archives now.
	unrecorded := dropped
	unrecorded.SignedXML, unrecorded.Archive = nil, tenant.ArchiveLocation{}
	var un *tenant.ArchiveUnavailableError
	if err := r.FillDocument(ctx, &unrecorded); err == nil || errors.As(err, &un) || !errors.Is(err, archive.ErrNoObject) {
		t.Errorf("FillDocument of a row with no record = %v, want ErrNoObject at the new location", err)
	}
}
