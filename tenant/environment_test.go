package tenant_test

import (
	"context"
	"strings"
	"testing"

	"facturad/tenant"
)

// TestAmbiente: a company is created in the service's default environment
// or the one it names (case and spaces aside); anything else is refused on
// ambiente. An update without it keeps it; a move to the other environment
// is refused without that environment's password and certificate in the
// same update, and goes through with them.
func TestAmbiente(t *testing.T) {
	ctx := context.Background()
	for _, def := range []string{tenant.AmbientePruebas, tenant.AmbienteProduccion} {
		t.Run("default "+def, func(t *testing.T) {
			b := newBundle(t, bundleOpts{})
			b.opts.DefaultAmbiente = def
			svc, err := tenant.NewService(b.opts)
			if err != nil {
				t.Fatal(err)
			}
			cc, err := svc.CreateCompany(ctx, b.admin, companyInput(t, "3101444401"))
			if err != nil || cc.Ambiente != def {
				t.Fatalf("created without ambiente: %q, %v; want %q", cc.Ambiente, err, def)
			}
		})
	}

	b := newBundle(t, bundleOpts{})
	for _, tt := range []struct{ sent, want string }{{"", "pruebas"}, {" Produccion ", "produccion"}, {"pruebas", "pruebas"}} {
		in := companyInput(t, "31014444"+map[string]string{"": "10", " Produccion ": "11", "pruebas": "12"}[tt.sent])
		in.Ambiente = ptr(tt.sent)
		cc, err := b.svc.CreateCompany(ctx, b.admin, in)
		if err != nil || cc.Ambiente != tt.want {
			t.Errorf("created with %q: %q, %v; want %q", tt.sent, cc.Ambiente, err, tt.want)
		}
	}
	in := companyInput(t, "3101444403")
	in.Ambiente = ptr("live")
	_, err := b.svc.CreateCompany(ctx, b.admin, in)
	if fe := fieldErrors(t, err); len(fe[tenant.FieldAmbiente]) != 1 {
		t.Errorf("ambiente live: %v, want one error on ambiente", fe)
	}

	f := b.newCompany(t, b.admin, "3101444404")
	id := f.created.ID
	update := func(mutate func(*tenant.CompanyInput)) (tenant.Company, error) {
		up := companyInput(t, "3101444404")
		up.Certificate, up.CertificatePIN, up.ContrasenaHacienda = nil, nil, nil
		mutate(&up)
		return b.svc.UpdateCompany(ctx, f.user, id, up)
	}
	if d, err := update(func(*tenant.CompanyInput) {}); err != nil || d.Ambiente != "pruebas" {
		t.Fatalf("update without ambiente: %q, %v; want pruebas kept", d.Ambiente, err)
	}
	for name, mutate := range map[string]func(*tenant.CompanyInput){
		"nothing new":      func(in *tenant.CompanyInput) {},
		"a password alone": func(in *tenant.CompanyInput) { in.ContrasenaHacienda = tenant.Secret("de-produccion") },
		"a certificate alone": func(in *tenant.CompanyInput) {
			fresh := companyInput(t, "3101444404")
			in.Certificate, in.CertificatePIN = fresh.Certificate, fresh.CertificatePIN
		},
	} {
		_, err := update(func(in *tenant.CompanyInput) { mutate(in); in.Ambiente = ptr("produccion") })
		fe := fieldErrors(t, err)
		if msg := strings.Join(fe[tenant.FieldAmbiente], " "); !strings.Contains(msg, "credentials and certificate") {
			t.Errorf("move with %s: %v, want a 400 on ambiente asking for both", name, fe)
		}
	}
	if d, err := b.svc.Company(ctx, b.admin, id); err != nil || d.Ambiente != "pruebas" {
		t.Fatalf("after refused moves: %q, %v", d.Ambiente, err)
	}
	d, err := update(func(in *tenant.CompanyInput) {
		in.Ambiente = ptr("produccion")
		in.ContrasenaHacienda = tenant.Secret("de-produccion")
		fresh := companyInput(t, "3101444404")
		in.Certificate, in.CertificatePIN = fresh.Certificate, fresh.CertificatePIN
	})
	if err != nil || d.Ambiente != "produccion" {
		t.Fatalf("move with both: %q, %v", d.Ambiente, err)
	}
}

// TestCuotaMensual: the monthly quota is taken from an admin's and the
// owning reseller's forms only; the company's own users send it in vain.
// Empty clears it; anything but a whole number in range is refused.
func TestCuotaMensual(t *testing.T) {
	ctx := context.Background()
	b := newBundle(t, bundleOpts{})
	reseller, _ := b.newReseller(t, "revendedor")
	in := companyInput(t, "3101555501")
	in.CuotaMensual = ptr("100")
	cc, err := b.svc.CreateCompany(ctx, reseller, in)
	if err != nil || cc.CuotaMensual == nil || *cc.CuotaMensual != 100 {
		t.Fatalf("reseller creates with 100: %v, %v", cc.CuotaMensual, err)
	}
	id := cc.ID
	user := b.login(t, cc.Credentials)
	set := func(p tenant.Principal, v *string) (*int64, error) {
		up := companyInput(t, "3101555501")
		up.Certificate, up.CertificatePIN = nil, nil
		up.CuotaMensual = v
		d, err := b.svc.UpdateCompany(ctx, p, id, up)
		return d.CuotaMensual, err
	}
	same := func(what string, got *int64, err error, want *int64) {
		t.Helper()
		if err != nil || (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Errorf("%s: %v (%v), want %v", what, deref(got), err, deref(want))
		}
	}
	got, err := set(user, ptr("1000000"))
	same("the company's own user raises it", got, err, ptr(int64(100)))
	got, err = set(user, ptr(""))
	same("the company's own user clears it", got, err, ptr(int64(100)))
	got, err = set(reseller, nil)
	same("the reseller leaves it out", got, err, ptr(int64(100)))
	got, err = set(b.admin, ptr(" 0 "))
	same("the admin sets 0", got, err, ptr(int64(0)))
	got, err = set(reseller, ptr(""))
	same("the reseller clears it", got, err, nil)
	for _, bad := range []string{"-1", "1.5", "diez", "1000000001"} {
		_, err := set(b.admin, ptr(bad))
		if fe := fieldErrors(t, err); len(fe[tenant.FieldCuotaMensual]) != 1 {
			t.Errorf("cuotaMensual %q: %v, want one error on cuotaMensual", bad, fe)
		}
	}
	other, _ := b.newReseller(t, "otro")
	if _, err := set(other, ptr("5")); err == nil {
		t.Error("another reseller updated the company")
	}
}

// TestCorreoNotificaciones: up to four addresses by CorreoElectronico's
// rule, kept when an update leaves it out, cleared when sent empty.
func TestCorreoNotificaciones(t *testing.T) {
	ctx := context.Background()
	b := newBundle(t, bundleOpts{})
	f := b.newCompany(t, b.admin, "3101666601")
	update := func(v *string) (tenant.Company, error) {
		up := companyInput(t, "3101666601")
		up.Certificate, up.CertificatePIN = nil, nil
		up.CorreoNotificaciones = v
		return b.svc.UpdateCompany(ctx, f.user, f.created.ID, up)
	}
	if d, err := update(ptr(" avisos@example.com;ti@example.com ")); err != nil || d.CorreoNotificaciones != "avisos@example.com;ti@example.com" {
		t.Fatalf("set: %q, %v", d.CorreoNotificaciones, err)
	}
	if d, err := update(nil); err != nil || d.CorreoNotificaciones != "avisos@example.com;ti@example.com" {
		t.Fatalf("left out: %q, %v", d.CorreoNotificaciones, err)
	}
	if _, err := update(ptr("no es un correo")); len(fieldErrors(t, err)[tenant.FieldCorreoNotificaciones]) == 0 {
		t.Error("a bad address was not refused on correoNotificaciones")
	}
	// The annex's rule, as for CorreoElectronico: letters outside ASCII
	// are an address's (the mailer writes them as the mail server can
	// take them), a blank is not.
	if d, err := update(ptr("josé@ñandú.cr;avisos@ñandú.cr")); err != nil || d.CorreoNotificaciones != "josé@ñandú.cr;avisos@ñandú.cr" {
		t.Fatalf("addresses outside ASCII: %q, %v", d.CorreoNotificaciones, err)
	}
	for _, bad := range []string{`"a b"@example.com`, "a@localhost", "a@example.com;"} {
		if _, err := update(ptr(bad)); len(fieldErrors(t, err)[tenant.FieldCorreoNotificaciones]) == 0 {
			t.Errorf("%q was not refused on correoNotificaciones", bad)
		}
	}
	if d, err := update(ptr("")); err != nil || d.CorreoNotificaciones != "" {
		t.Fatalf("cleared: %q, %v", d.CorreoNotificaciones, err)
	}
}

func deref(p *int64) any {
	if p == nil {
		return "none"
	}
	return *p
}
