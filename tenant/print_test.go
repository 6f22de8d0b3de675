package tenant_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"facturad/hacienda/pdf"
	"facturad/tenant"
)

func pngLogo(t testing.TB, w, h int) []byte {
	t.Helper()
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		m.SetNRGBA(x, h/2, color.NRGBA{200, 10, 10, 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCompanyPrint: a company's notes and logo are taken on create and
// update (by whoever may update the company), kept by an update that does
// not send them, replaced or removed when asked; CompanyPrint gives them
// to the printed documents; bad ones are refused on their fields and
// change nothing.
func TestCompanyPrint(t *testing.T) {
	ctx := context.Background()
	b := newBundle(t, bundleOpts{})
	logo, other := pngLogo(t, 120, 40), pngLogo(t, 60, 60)
	in := companyInput(t, "3101777001")
	in.NotasImpresas = ptr("  Cuenta IBAN CR05015202001026284066  \r\n\r\nSINPE Móvil 8888-8888\n")
	in.Logo = logo
	cc, err := b.svc.CreateCompany(ctx, b.admin, in)
	if err != nil {
		t.Fatal(err)
	}
	const notes = "Cuenta IBAN CR05015202001026284066\n\nSINPE Móvil 8888-8888"
	if cc.NotasImpresas != notes || !cc.HasLogo {
		t.Errorf("created with notes %q and logo %v", cc.NotasImpresas, cc.HasLogo)
	}
	user := b.login(t, cc.Credentials)
	prints := func(what, notas string, logo []byte) {
		t.Helper()
		p, err := b.svc.CompanyPrint(ctx, cc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Notas != notas || !bytes.Equal(p.Logo, logo) {
			t.Errorf("%s: prints %q and a logo of %d bytes, want %q and %d", what, p.Notas, len(p.Logo), notas, len(logo))
		}
		d, err := b.svc.Company(ctx, user, cc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.NotasImpresas != notas || d.HasLogo != (logo != nil) {
			t.Errorf("%s: the company reads %q and logo %v", what, d.NotasImpresas, d.HasLogo)
		}
	}
	prints("created", notes, logo)

	update := func(change func(in *tenant.CompanyInput)) error {
		up := companyInput(t, "3101777001")
		up.Certificate, up.CertificatePIN = nil, nil
		change(&up)
		_, err := b.svc.UpdateCompany(ctx, user, cc.ID, up)
		return err
	}
	if err := update(func(*tenant.CompanyInput) {}); err != nil {
		t.Fatal(err)
	}
	prints("after an update without them", notes, logo)
	if err := update(func(in *tenant.CompanyInput) { in.Logo, in.NotasImpresas = other, ptr("Otra nota") }); err != nil {
		t.Fatal(err)
	}
	prints("after a new logo and notes", "Otra nota", other)

	tests := []struct {
		name   string
		change func(in *tenant.CompanyInput)
		field  string
		says   string
	}{
		{"error/notes too long", func(in *tenant.CompanyInput) {
			in.NotasImpresas = ptr(strings.Repeat("ñ", tenant.MaxNotasImpresas+1))
		}, "notasImpresas", "at most 1000 characters"},
		{"error/notes with a control character", func(in *tenant.CompanyInput) { in.NotasImpresas = ptr("Cuenta\x00") }, "notasImpresas", "U+0000"},
		{"error/logo not an image", func(in *tenant.CompanyInput) { in.Logo = []byte("%PDF-1.4 not an image") }, "logo", "PNG or JPEG"},
		{"error/logo too wide", func(in *tenant.CompanyInput) { in.Logo = pngLogo(t, pdf.MaxLogoSide+1, 2) }, "logo", fmt.Sprintf("1 to %d pixels", pdf.MaxLogoSide)},
		{"error/logo too large", func(in *tenant.CompanyInput) {
			in.Logo = append(pngLogo(t, 10, 10), make([]byte, pdf.MaxLogoBytes)...)
		}, "logo", "at most 256 KiB"},
		{"error/logo damaged", func(in *tenant.CompanyInput) { in.Logo = pngLogo(t, 100, 100)[:60] }, "logo", "could not be read"},
		{"error/a new logo and its removal", func(in *tenant.CompanyInput) { in.Logo, in.QuitarLogo = logo, true }, "quitarLogo", "removes the logo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := update(func(in *tenant.CompanyInput) {
				in.RazonSocial = "No se guarda S.A."
				tt.change(in)
			})
			fe := fieldErrors(t, err)
			if len(fe) != 1 || len(fe[tt.field]) != 1 || !strings.Contains(fe[tt.field][0], tt.says) {
				t.Fatalf("errors %v, want one on %s saying %q", fe, tt.field, tt.says)
			}
			prints("after a refused update", "Otra nota", other)
		})
	}
	// Refused on create too, before anything is stored.
	bad := companyInput(t, "3101777002")
	bad.Logo = []byte("GIF89a")
	_, err = b.svc.CreateCompany(ctx, b.admin, bad)
	if fe := fieldErrors(t, err); len(fe["logo"]) != 1 {
		t.Errorf("create with a GIF: %v", fe)
	}

	if err := update(func(in *tenant.CompanyInput) { in.QuitarLogo, in.NotasImpresas = true, ptr("") }); err != nil {
		t.Fatal(err)
	}
	prints("after the logo and notes are removed", "", nil)
}
