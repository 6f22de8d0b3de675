package storetest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"facturad/tenant"
)

// testCompanyPrint: a company's notes and logo are written by create and
// update; every read of a company carries the notes and whether it has a
// logo, never the image, which CompanyPrint reads; an update keeps the
// stored logo unless told to replace it (with nothing: removed); the
// schema refuses notes or a logo beyond their bounds, keeping what was
// stored.
func testCompanyPrint(t *testing.T, s tenant.Store) {
	ps, ok := s.(tenant.CompanyPrintStore)
	if !ok {
		t.Fatalf("%T does not implement tenant.CompanyPrintStore", s)
	}
	ctx := context.Background()
	id, err := s.NextCompanyID(ctx)
	mustNot(t, "NextCompanyID", err)
	logo := bytes.Repeat([]byte("\x89PNG logo "), 100)
	c, b, u := company(id, "Impresos S.A."), branch("001"), user(fmt.Sprintf("impresos-%d", id))
	c.NotasImpresas = "Cuenta IBAN CR05015202001026284066\nSINPE Móvil 8888-8888"
	c.Logo = logo
	mustNot(t, "CreateCompany", s.CreateCompany(ctx, &c, &b, &u))

	read := func(what string, notas string, hasLogo bool, logo []byte) {
		t.Helper()
		for name, g := range everyCompanyRead(t, s, id, b.ID) {
			if g.NotasImpresas != notas || g.HasLogo != hasLogo || g.Logo != nil || g.ReplaceLogo {
				t.Errorf("%s: %s reads notes %q, has logo %v (image %d bytes, replace %v); want %q, %v", what, name,
					g.NotasImpresas, g.HasLogo, len(g.Logo), g.ReplaceLogo, notas, hasLogo)
			}
		}
		p, err := ps.CompanyPrint(ctx, id)
		mustNot(t, "CompanyPrint", err)
		if p.Notas != notas || !bytes.Equal(p.Logo, logo) || (logo == nil) != (p.Logo == nil) {
			t.Errorf("%s: CompanyPrint gives notes %q and a logo of %d bytes; want %q and %d bytes", what, p.Notas, len(p.Logo), notas, len(logo))
		}
	}
	read("after create", c.NotasImpresas, true, logo)

	update := func(what string, change func(c *tenant.Company)) tenant.Company {
		t.Helper()
		upd, err := s.Company(ctx, id)
		mustNot(t, "Company", err)
		change(&upd)
		if err := s.UpdateCompany(ctx, &upd, false); err != nil {
			t.Fatalf("%s: UpdateCompany: %v", what, err)
		}
		if upd.Logo != nil || upd.ReplaceLogo {
			t.Errorf("%s: UpdateCompany read back an image or a replace", what)
		}
		return upd
	}
	// Not told to replace it, an update keeps the logo whatever Logo holds.
	upd := update("keep", func(c *tenant.Company) { c.NotasImpresas, c.Logo = "Sin notas de banco", []byte("stale") })
	if upd.NotasImpresas != "Sin notas de banco" || !upd.HasLogo {
		t.Errorf("UpdateCompany read back %q, has logo %v", upd.NotasImpresas, upd.HasLogo)
	}
	read("after an update that keeps the logo", "Sin notas de banco", true, logo)

	other := []byte("\xff\xd8\xff another logo")
	update("replace", func(c *tenant.Company) { c.Logo, c.ReplaceLogo = other, true })
	read("after a new logo", "Sin notas de banco", true, other)

	upd = update("remove", func(c *tenant.Company) { c.NotasImpresas, c.Logo, c.ReplaceLogo = "", nil, true })
	if upd.HasLogo {
		t.Error("UpdateCompany read back a removed logo")
	}
	read("after the logo and notes are removed", "", false, nil)

	// The schema's bounds: 1,000 characters of notes, 256 KiB of logo.
	update("largest", func(c *tenant.Company) {
		c.NotasImpresas, c.Logo, c.ReplaceLogo = strings.Repeat("ñ", tenant.MaxNotasImpresas), bytes.Repeat([]byte{7}, 256<<10), true
	})
	largest := strings.Repeat("ñ", tenant.MaxNotasImpresas)
	read("at the bounds", largest, true, bytes.Repeat([]byte{7}, 256<<10))
	for name, change := range map[string]func(c *tenant.Company){
		"notes":      func(c *tenant.Company) { c.NotasImpresas = strings.Repeat("a", tenant.MaxNotasImpresas+1) },
		"logo":       func(c *tenant.Company) { c.Logo, c.ReplaceLogo = make([]byte, 256<<10+1), true },
		"empty logo": func(c *tenant.Company) { c.Logo, c.ReplaceLogo = []byte{}, true },
	} {
		upd, err := s.Company(ctx, id)
		mustNot(t, "Company", err)
		change(&upd)
		if name == "empty logo" {
			// An empty image is no image: the store removes the logo.
			mustNot(t, "UpdateCompany", s.UpdateCompany(ctx, &upd, false))
			read("after an empty logo", largest, false, nil)
			update("restore", func(c *tenant.Company) { c.Logo, c.ReplaceLogo = other, true })
			continue
		}
		if err := s.UpdateCompany(ctx, &upd, false); err == nil {
			t.Errorf("UpdateCompany stored %s beyond the bounds", name)
		}
	}
	read("after refused updates", largest, true, other)

	if _, err := ps.CompanyPrint(ctx, id+1_000_000); err == nil {
		t.Error("CompanyPrint of a missing company")
	} else {
		wantErr(t, "CompanyPrint of a missing company", err, tenant.ErrNotFound)
	}
}
