package tenant_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"facturad/signer/certmint"
	"facturad/tenant"
)

func TestCreateCompanyValidation(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	ctx := context.Background()
	other := mint(t, certmint.Options{TipoIdentificacion: "02", Identificacion: "3101999999"})
	expired := mint(t, certmint.Options{TipoIdentificacion: "02", Identificacion: "3101123456",
		NotBefore: time.Now().Add(-400 * 24 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	physical := mint(t, certmint.Options{TipoIdentificacion: "01", Identificacion: "112345678"})

	tests := []struct {
		name   string
		edit   func(in *tenant.CompanyInput)
		fields []string // every field that must have an error, and no other
	}{
		{"error/everything missing", func(in *tenant.CompanyInput) { *in = tenant.CompanyInput{} },
			[]string{"TipoIdentificacion", "Identificacion", "RazonSocial", "Provincia", "Canton", "Distrito", "OtrasSenas", "CorreoElectronico"}},
		{"error/unknown identification type", func(in *tenant.CompanyInput) { in.TipoIdentificacion = "05" }, []string{"TipoIdentificacion"}},
		{"error/juridica with 9 digits", func(in *tenant.CompanyInput) { in.Identificacion = "310112345" }, []string{"Identificacion"}},
		{"error/identification with dashes", func(in *tenant.CompanyInput) { in.Identificacion = "3-101-123456" }, []string{"Identificacion"}},
		{"error/fisica with leading zero", func(in *tenant.CompanyInput) {
			in.TipoIdentificacion, in.Identificacion = "01", "012345678"
		}, []string{"Identificacion"}},
		{"error/fisica with 10 digits", func(in *tenant.CompanyInput) {
			in.TipoIdentificacion, in.Identificacion = "01", "1123456789"
		}, []string{"Identificacion"}},
		{"error/dimex with 10 digits", func(in *tenant.CompanyInput) {
			in.TipoIdentificacion, in.Identificacion = "03", "1551234567"
		}, []string{"Identificacion"}},
		{"error/nite with 11 digits", func(in *tenant.CompanyInput) {
			in.TipoIdentificacion, in.Identificacion = "04", "31011234567"
		}, []string{"Identificacion"}},
		{"error/razon social too short", func(in *tenant.CompanyInput) { in.RazonSocial = "ABC" }, []string{"RazonSocial"}},
		{"error/razon social too long", func(in *tenant.CompanyInput) { in.RazonSocial = strings.Repeat("Ñ", 101) }, []string{"RazonSocial"}},
		{"error/razon comercial too long", func(in *tenant.CompanyInput) { in.RazonComercial = strings.Repeat("x", 81) }, []string{"RazonComercial"}},
		{"error/actividad not 6 characters", func(in *tenant.CompanyInput) { in.ActividadComercial = "72200" }, []string{"ActividadComercial"}},
		{"error/provincia 8", func(in *tenant.CompanyInput) { in.Provincia = "8" }, []string{"Provincia"}},
		{"error/canton 3 digits", func(in *tenant.CompanyInput) { in.Canton = "101" }, []string{"Canton"}},
		{"error/distrito 00", func(in *tenant.CompanyInput) { in.Distrito = "00" }, []string{"Distrito"}},
		{"error/canton not in the catalogue", func(in *tenant.CompanyInput) { in.Canton = "99" }, []string{"Canton"}},
		{"error/distrito not in the catalogue", func(in *tenant.CompanyInput) { in.Distrito = "99" }, []string{"Distrito"}},
		{"error/NUL in razon social", func(in *tenant.CompanyInput) { in.RazonSocial = "Servicios\x00 S.A." }, []string{"RazonSocial"}},
		{"error/control character in otras senas", func(in *tenant.CompanyInput) { in.OtrasSenas = "Avenida\x1b central" }, []string{"OtrasSenas"}},
		{"error/U+FFFF in razon comercial", func(in *tenant.CompanyInput) { in.RazonComercial = "Prueba\uFFFF" }, []string{"RazonComercial"}},
		{"error/invalid UTF-8 in barrio", func(in *tenant.CompanyInput) { in.Barrio = "Barrio Am\xf3n" }, []string{"Barrio"}},
		{"error/currency not ISO 4217", func(in *tenant.CompanyInput) { in.MonedaExtranjera = "ABC" }, []string{"MonedaExtranjera"}},
		{"error/activo not S or N", func(in *tenant.CompanyInput) { in.Activo = "Y" }, []string{"Activo"}},
		{"error/barrio too short", func(in *tenant.CompanyInput) { in.Barrio = "Amo" }, []string{"Barrio"}},
		{"error/barrio too long", func(in *tenant.CompanyInput) { in.Barrio = strings.Repeat("b", 51) }, []string{"Barrio"}},
		{"error/otras senas too long", func(in *tenant.CompanyInput) { in.OtrasSenas = strings.Repeat("o", 251) }, []string{"OtrasSenas"}},
		{"error/telefono letters", func(in *tenant.CompanyInput) { in.Telefono = "2222-CASA" }, []string{"Telefono"}},
		{"error/telefono 7 digits", func(in *tenant.CompanyInput) { in.Telefono = "2222333" }, []string{"Telefono"}},
		{"error/telefono 21 digits", func(in *tenant.CompanyInput) { in.Telefono = strings.Repeat("2", 21) }, []string{"Telefono"}},
		{"error/fax bad", func(in *tenant.CompanyInput) { in.Fax = "12" }, []string{"Fax"}},
		{"error/codpais 4 digits", func(in *tenant.CompanyInput) { in.CodPais = "5060" }, []string{"CodPais"}},
		{"error/correo without at", func(in *tenant.CompanyInput) { in.CorreoElectronico = "facturas.nandu.example" }, []string{"CorreoElectronico"}},
		{"error/correo with space", func(in *tenant.CompanyInput) { in.CorreoElectronico = "a@b.cr; c@d.cr" }, []string{"CorreoElectronico"}},
		{"error/five correos", func(in *tenant.CompanyInput) { in.CorreoElectronico = "a@b.cr;c@d.cr;e@f.cr;g@h.cr;i@j.cr" }, []string{"CorreoElectronico"}},
		{"error/correo too long", func(in *tenant.CompanyInput) { in.CorreoElectronico = strings.Repeat("a", 150) + "@example.com" }, []string{"CorreoElectronico"}},
		{"error/sucursal 2 digits", func(in *tenant.CompanyInput) { in.Sucursal = "01" }, []string{"Sucursal"}},
		{"error/sucursal 000", func(in *tenant.CompanyInput) { in.Sucursal = "000" }, []string{"Sucursal"}},
		{"error/moneda local 4 letters", func(in *tenant.CompanyInput) { in.MonedaLocal = "COLN" }, []string{"MonedaLocal"}},
		{"error/moneda extranjera digits", func(in *tenant.CompanyInput) { in.MonedaExtranjera = "840" }, []string{"MonedaExtranjera"}},
		{"error/activo X", func(in *tenant.CompanyInput) { in.Activo = "X" }, []string{"Activo"}},
		{"error/certificate required for electronic invoicing", func(in *tenant.CompanyInput) {
			in.Certificate, in.CertificatePIN = nil, nil
		}, []string{"Certificado"}},
		{"error/hacienda credentials required for electronic invoicing", func(in *tenant.CompanyInput) {
			in.UsuarioHacienda, in.ContrasenaHacienda = "", nil
		}, []string{"UsuarioHacienda", "ContrasenaHacienda"}},
		{"error/certificate without PIN", func(in *tenant.CompanyInput) { in.CertificatePIN = nil }, []string{"Clave"}},
		{"error/wrong PIN", func(in *tenant.CompanyInput) { in.CertificatePIN = tenant.Secret("9999") }, []string{"Certificado"}},
		{"error/not a PKCS#12", func(in *tenant.CompanyInput) { in.Certificate = tenant.Secret("-----BEGIN CERTIFICATE-----\n") }, []string{"Certificado"}},
		{"error/DER that is not PKCS#12", func(in *tenant.CompanyInput) { in.Certificate = tenant.Secret(other.Leaf.Raw) }, []string{"Certificado"}},
		{"error/certificate of another taxpayer", func(in *tenant.CompanyInput) {
			in.Certificate, in.CertificatePIN = tenant.Secret(other.P12), tenant.Secret(other.PIN)
		}, []string{"Certificado"}},
		{"error/certificate of a person for a company", func(in *tenant.CompanyInput) {
			in.Certificate, in.CertificatePIN = tenant.Secret(physical.P12), tenant.Secret(physical.PIN)
		}, []string{"Certificado"}},
		{"error/expired certificate", func(in *tenant.CompanyInput) {
			in.Certificate, in.CertificatePIN = tenant.Secret(expired.P12), tenant.Secret(expired.PIN)
		}, []string{"Certificado"}},
		{"error/certificate too large", func(in *tenant.CompanyInput) {
			in.Certificate = make(tenant.Secret, tenant.MaxCertificateSize+1)
		}, []string{"Certificado"}},
		{"error/validaciones registro unknown", func(in *tenant.CompanyInput) { in.ValidacionesRegistro = ptr("strict") }, []string{"validacionesRegistro"}},
		{"error/validaciones registro a flag", func(in *tenant.CompanyInput) { in.ValidacionesRegistro = ptr("S") }, []string{"validacionesRegistro"}},
		{"error/several at once", func(in *tenant.CompanyInput) {
			in.RazonSocial, in.Provincia, in.CorreoElectronico = "", "9", "x"
		}, []string{"RazonSocial", "Provincia", "CorreoElectronico"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := companyInput(t, "3101123456")
			tt.edit(&in)
			_, err := b.svc.CreateCompany(ctx, b.admin, in)
			fe := fieldErrors(t, err)
			var got []string
			for f := range fe {
				got = append(got, f)
			}
			sort.Strings(got)
			want := slices.Clone(tt.fields)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Fatalf("fields = %v, want %v (%v)", got, want, fe)
			}
			for f, msgs := range fe {
				for _, m := range msgs {
					if strings.Contains(m, "1234") || strings.Contains(m, "s3cr3t") {
						t.Errorf("%s message %q repeats a secret", f, m)
					}
				}
			}
		})
	}
	// Nothing was stored by the refused requests.
	cs, err := b.svc.SearchCompanies(ctx, b.admin, "")
	if err != nil || len(cs) != 0 {
		t.Fatalf("after refused creates: %d companies, %v", len(cs), err)
	}
}

func TestCreateCompanyNoPrivateKey(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	m := mint(t, certmint.Options{TipoIdentificacion: "02", Identificacion: "3101123456"})
	p12, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{m.Leaf}, "1234")
	if err != nil {
		t.Fatal(err)
	}
	in := companyInput(t, "3101123456")
	in.Certificate, in.CertificatePIN = p12, tenant.Secret("1234")
	_, err = b.svc.CreateCompany(context.Background(), b.admin, in)
	fe := fieldErrors(t, err)
	if len(fe["Certificado"]) != 1 || !strings.Contains(fe["Certificado"][0], "private key") {
		t.Fatalf("errors = %v", fe)
	}
}

func TestCreateCompanyIdentificationTypes(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	tests := []struct {
		name, tipo, ident string
		legacy            bool
	}{
		{"ok/fisica", "01", "112345678", false},
		{"ok/juridica legacy p12", "02", "3101654321", true},
		{"ok/dimex 12 digits", "03", "155812345678", false},
		{"ok/dimex 11 digits", "03", "15581234567", false},
		{"ok/nite", "04", "3004123456", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mint(t, certmint.Options{TipoIdentificacion: tt.tipo, Identificacion: tt.ident, Legacy: tt.legacy})
			in := companyInput(t, "3101123456")
			in.TipoIdentificacion, in.Identificacion = tt.tipo, tt.ident
			in.Certificate, in.CertificatePIN = tenant.Secret(m.P12), tenant.Secret(m.PIN)
			cc, err := b.svc.CreateCompany(context.Background(), b.admin, in)
			if err != nil {
				t.Fatal(err)
			}
			if cc.NumeroIdentificacion != tt.ident || cc.TipoIdentificacion != tt.tipo {
				t.Fatalf("stored %s %s", cc.TipoIdentificacion, cc.NumeroIdentificacion)
			}
			if !cc.CertificateExpiry.Equal(m.Leaf.NotAfter) {
				t.Fatalf("expiry %v, want %v", cc.CertificateExpiry, m.Leaf.NotAfter)
			}
		})
	}
}

func TestCreateCompany(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	ctx := context.Background()
	in := companyInput(t, "3101123456")
	in.Canton = "1" // padded to 01
	in.Telefono = "2222 3333"
	in.MonedaLocal = "crc"
	in.Sucursal = ""
	in.MonedaExtranjera = ""
	cc, err := b.svc.CreateCompany(ctx, b.admin, in)
	if err != nil {
		t.Fatal(err)
	}
	c := cc.Company
	if c.ID == 0 || c.OwnerID != 0 || !c.Activo || !c.FacturacionElectronica {
		t.Fatalf("company %+v", c)
	}
	if c.Canton != "01" || c.Telefono != "22223333" || c.MonedaLocal != "CRC" || c.MonedaExtranjera != "USD" || c.CodPais != "506" {
		t.Fatalf("normalised fields: canton %q telefono %q monedas %q %q", c.Canton, c.Telefono, c.MonedaLocal, c.MonedaExtranjera)
	}
	if c.CertificateVersion != 1 || c.CertificateExpired(b.now) {
		t.Fatalf("certificate version %d expiry %v", c.CertificateVersion, c.CertificateExpiry)
	}
	// The answer has no secret (CreatedCompany has no field for one); the
	// admin reads them back by id.
	if d, err := b.svc.Company(ctx, b.admin, c.ID); err != nil || !d.SecretsShown ||
		string(d.ContrasenaHacienda) != string(in.ContrasenaHacienda) || string(d.CertificatePIN) != string(in.CertificatePIN) {
		t.Fatalf("the admin's read does not carry the opened secrets (%v)", err)
	}
	if cc.Branch.ID == 0 || cc.Branch.Sucursal != "001" || cc.Branch.CompanyID != c.ID || !cc.Branch.Activo {
		t.Fatalf("branch %+v", cc.Branch)
	}
	cr := cc.Credentials
	if !strings.HasPrefix(cr.Usuario, "3101123456-001-") || len(cr.Contrasena) < 32 || len(cr.APIToken) < 43 {
		t.Fatalf("credentials %q / %d / %d", cr.Usuario, len(cr.Contrasena), len(cr.APIToken))
	}

	// Secrets are sealed at rest, bound to the company and their purpose.
	stored, err := b.store.Company(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range [][]byte{stored.SealedContrasenaHacienda, stored.SealedCertificate, stored.SealedCertificatePIN} {
		if len(s) == 0 || strings.Contains(string(s), string(in.ContrasenaHacienda)) || strings.Contains(string(s), "1234") {
			t.Fatal("a secret is not sealed")
		}
	}
	if _, err := b.sealer.Open(c.ID, tenant.PurposeCertificate, stored.SealedCertificatePIN); err == nil {
		t.Fatal("a sealed PIN opened as a certificate")
	}
	secrets, err := b.svc.CompanySecrets(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(secrets.Certificate) != string(in.Certificate) || string(secrets.CertificatePIN) != "1234" ||
		string(secrets.ContrasenaHacienda) != string(in.ContrasenaHacienda) || secrets.CertificateVersion != 1 {
		t.Fatal("CompanySecrets does not give back what was uploaded")
	}

	// The stored password is a slow hash and the token a SHA-256 digest.
	u, err := b.store.APIUserByUsername(ctx, c.ID, cr.Usuario)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u.PasswordHash, "$argon2id$") || strings.Contains(u.PasswordHash, cr.Contrasena) {
		t.Fatalf("password hash %q", u.PasswordHash)
	}
	if !tenant.TokenHashEqual(u.TokenHash, tenant.HashToken(cr.APIToken)) {
		t.Fatal("token hash is not SHA-256 of the token")
	}
	if u.Role != tenant.RoleBranch || u.CompanyID != c.ID || u.BranchID != cc.Branch.ID {
		t.Fatalf("user %+v", u)
	}
}

func TestCreateCompanyWithoutElectronicInvoicing(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	in := companyInput(t, "3101123456")
	in.FacturacionElectronica = false
	in.Certificate, in.CertificatePIN, in.UsuarioHacienda, in.ContrasenaHacienda = nil, nil, "", nil
	cc, err := b.svc.CreateCompany(context.Background(), b.admin, in)
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.svc.Company(context.Background(), b.admin, cc.ID)
	if err != nil || cc.CertificateVersion != 0 || !cc.CertificateExpired(b.now) || len(d.CertificatePIN) != 0 || len(d.ContrasenaHacienda) != 0 || !d.SecretsShown {
		t.Fatalf("company without certificate: %+v, %v", cc.Company, err)
	}
}

func TestUpdateCompany(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	ctx := context.Background()
	f := b.newCompany(t, b.admin, "3101123456")
	id := f.created.ID

	t.Run("ok/no certificate keeps certificate, PIN and password", func(t *testing.T) {
		in := companyInput(t, "3101123456")
		in.Certificate, in.CertificatePIN, in.ContrasenaHacienda = nil, nil, nil
		in.RazonSocial = "Servicios Ñandú Limitada"
		c, err := b.svc.UpdateCompany(ctx, f.user, id, in)
		if err != nil {
			t.Fatal(err)
		}
		d, err := b.svc.Company(ctx, b.admin, id)
		if err != nil {
			t.Fatal(err)
		}
		if c.RazonSocial != "Servicios Ñandú Limitada" || d.RazonSocial != c.RazonSocial || d.CertificateVersion != 1 ||
			string(d.CertificatePIN) != "1234" || string(d.ContrasenaHacienda) != "s3cr3t$/@);]+|" {
			t.Fatalf("detail %+v", d)
		}
	})
	t.Run("error/a new PIN without its certificate", func(t *testing.T) {
		before, err := b.svc.Company(ctx, b.admin, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []tenant.Principal{b.admin, f.user} {
			in := companyInput(t, "3101123456")
			in.Certificate, in.CertificatePIN = nil, tenant.Secret("9999")
			in.RazonSocial = "Otro Nombre Sociedad Anónima"
			_, err = b.svc.UpdateCompany(ctx, p, id, in)
			if fe := fieldErrors(t, err); len(fe["Clave"]) == 0 || len(fe) != 1 {
				t.Fatalf("%s: errors %v, want one on Clave", p.Username, fe)
			}
		}
		after, err := b.svc.Company(ctx, b.admin, id)
		if err != nil {
			t.Fatal(err)
		}
		if after.RazonSocial != before.RazonSocial || string(after.CertificatePIN) != string(before.CertificatePIN) || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("a refused update changed the company: %+v", after)
		}
		// The stored PIN sent again, as a full-replace client does, is
		// fine for a caller who reads it.
		in := companyInput(t, "3101123456")
		in.Certificate, in.CertificatePIN = nil, before.CertificatePIN
		if _, err := b.svc.UpdateCompany(ctx, b.admin, id, in); err != nil {
			t.Errorf("the stored PIN sent again by the admin: %v", err)
		}
		// A company's user is not told whether a PIN is the stored one:
		// the stored PIN and a wrong one get the same refusal.
		var msgs []string
		for _, pin := range []tenant.Secret{before.CertificatePIN, tenant.Secret("9999")} {
			in.CertificatePIN = pin
			_, err := b.svc.UpdateCompany(ctx, f.user, id, in)
			fe := fieldErrors(t, err)
			if len(fe) != 1 || len(fe["Clave"]) != 1 {
				t.Fatalf("a company's user sending a PIN alone: %v, want one error on Clave", fe)
			}
			msgs = append(msgs, fe["Clave"][0])
		}
		if msgs[0] != msgs[1] || strings.Contains(msgs[0], "new PIN") {
			t.Errorf("the refusals tell the stored PIN from another: %q", msgs)
		}
	})
	t.Run("ok/new certificate replaces and bumps the version", func(t *testing.T) {
		m := mint(t, certmint.Options{TipoIdentificacion: "02", Identificacion: "3101123456", PIN: "4321",
			NotAfter: time.Now().Add(500 * 24 * time.Hour).Truncate(time.Second)})
		in := companyInput(t, "3101123456")
		in.Certificate, in.CertificatePIN = tenant.Secret(m.P12), tenant.Secret(m.PIN)
		if _, err := b.svc.UpdateCompany(ctx, f.user, id, in); err != nil {
			t.Fatal(err)
		}
		d, err := b.svc.Company(ctx, b.admin, id)
		if err != nil || d.CertificateVersion != 2 || string(d.CertificatePIN) != "4321" || !d.CertificateExpiry.Equal(m.Leaf.NotAfter) {
			t.Fatalf("version %d pin %q expiry %v (%v)", d.CertificateVersion, d.CertificatePIN, d.CertificateExpiry, err)
		}
		s, err := b.svc.CompanySecrets(ctx, id)
		if err != nil || string(s.Certificate) != string(m.P12) {
			t.Fatalf("stored certificate not replaced: %v", err)
		}
	})
	t.Run("error/identification change without a new certificate", func(t *testing.T) {
		in := companyInput(t, "3101123456")
		in.Identificacion = "3101999999"
		in.Certificate, in.CertificatePIN = nil, nil
		_, err := b.svc.UpdateCompany(ctx, f.user, id, in)
		if fe := fieldErrors(t, err); len(fe) != 1 || fe["Certificado"] == nil {
			t.Fatalf("errors = %v", fe)
		}
	})
	t.Run("error/wrong PIN leaves the stored certificate", func(t *testing.T) {
		in := companyInput(t, "3101123456")
		in.CertificatePIN = tenant.Secret("0000")
		_, err := b.svc.UpdateCompany(ctx, f.user, id, in)
		if fe := fieldErrors(t, err); fe["Certificado"] == nil {
			t.Fatalf("errors = %v", fe)
		}
		d, err := b.svc.Company(ctx, b.admin, id)
		if err != nil || d.CertificateVersion != 2 || string(d.CertificatePIN) != "4321" {
			t.Fatalf("after a refused update: version %d pin %q err %v", d.CertificateVersion, d.CertificatePIN, err)
		}
	})
	t.Run("error/missing required fields", func(t *testing.T) {
		_, err := b.svc.UpdateCompany(ctx, f.user, id, tenant.CompanyInput{})
		fe := fieldErrors(t, err)
		for _, k := range []string{"TipoIdentificacion", "Identificacion", "RazonSocial", "CorreoElectronico"} {
			if fe[k] == nil {
				t.Errorf("no error on %s: %v", k, fe)
			}
		}
	})
	t.Run("error/unknown company", func(t *testing.T) {
		_, err := b.svc.UpdateCompany(ctx, b.admin, id+100, companyInput(t, "3101123456"))
		if !errors.Is(err, tenant.ErrNotFound) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestSecretRedacted(t *testing.T) {
	s := tenant.Secret("5678")
	for _, got := range []string{s.String(), s.GoString(), s.LogValue().String()} {
		if strings.Contains(got, "5678") {
			t.Fatalf("secret printed as %q", got)
		}
	}
	in := tenant.CompanyInput{CertificatePIN: s, ContrasenaHacienda: tenant.Secret("hunter2")}
	printed := fmt.Sprintf("%v %+v %#v", in, in, in)
	if strings.Contains(printed, "5678") || strings.Contains(printed, "hunter2") {
		t.Fatalf("a CompanyInput printed its secrets: %s", printed)
	}
}

func TestCompanyAcceptedVariants(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	tests := []struct {
		name string
		edit func(in *tenant.CompanyInput)
	}{
		{"ok/four e-mail addresses", func(in *tenant.CompanyInput) {
			in.CorreoElectronico = "a@b.cr;c.d@e.co.cr;f+g@h.com;\"quoted\"@i.cr"
		}},
		{"ok/lower-case flags and currency", func(in *tenant.CompanyInput) { in.Activo, in.MonedaExtranjera = "s", "eur" }},
		{"ok/padded codes", func(in *tenant.CompanyInput) { in.Canton, in.Distrito = "9", "1" }},
		{"ok/phone with separators", func(in *tenant.CompanyInput) { in.Telefono, in.Fax = "(506) 2222-3333", "2222 4444" }},
		{"ok/surrounding spaces", func(in *tenant.CompanyInput) {
			in.Identificacion, in.RazonSocial = " "+in.Identificacion+" ", "  Ñandú S.A.  "
		}},
		{"ok/inactive from the start", func(in *tenant.CompanyInput) { in.Activo = "N" }},
		{"ok/longest names", func(in *tenant.CompanyInput) {
			in.RazonSocial, in.RazonComercial = strings.Repeat("ñ", 100), strings.Repeat("x", 80)
			in.OtrasSenas, in.Barrio = strings.Repeat("o", 250), strings.Repeat("b", 50)
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One company per taxpayer: each variant is another taxpayer.
			in := companyInput(t, fmt.Sprintf("31011234%02d", i))
			in.Sucursal = fmt.Sprintf("%03d", i+1)
			tt.edit(&in)
			cc, err := b.svc.CreateCompany(context.Background(), b.admin, in)
			if err != nil {
				t.Fatal(err)
			}
			if len(cc.Canton) != 2 || len(cc.Distrito) != 2 || cc.Activo != (strings.ToUpper(in.Activo) != "N") {
				t.Fatalf("stored %+v", cc.Company)
			}
		})
	}
}

// A certificate file that declares an absurd key-derivation cost is a 400
// on Certificado that says so, refused before anything is derived.
func TestCreateCompanyCostlyCertificate(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	m := mint(t, certmint.Options{TipoIdentificacion: "02", Identificacion: "3101123456", Iterations: 65536})
	costly := bytes.ReplaceAll(m.P12, []byte{0x02, 0x03, 0x01, 0x00, 0x00}, []byte{0x02, 0x03, 0x7f, 0xff, 0xff})
	if bytes.Equal(costly, m.P12) {
		t.Fatal("no iteration count found to rewrite")
	}
	in := companyInput(t, "3101123456")
	in.Certificate, in.CertificatePIN = tenant.Secret(costly), tenant.Secret(m.PIN)
	_, err := b.svc.CreateCompany(context.Background(), b.admin, in)
	fe := fieldErrors(t, err)
	if msgs := strings.Join(fe["Certificado"], "|"); !strings.Contains(msgs, "iterations") {
		t.Errorf("Certificado: %q, want the iterations named", msgs)
	}
}

func ptr[T any](v T) *T { return &v }

// TestValidacionesRegistro: the company's registry checks (A.13) are set on
// create and update, read back by every read, kept when an update does not
// send them and cleared when it sends them empty; anything else is refused
// on validacionesRegistro with the values listed.
func TestValidacionesRegistro(t *testing.T) {
	ctx := context.Background()
	b := newBundle(t, bundleOpts{})
	reads := func(t *testing.T, p tenant.Principal, id int64, want string) {
		t.Helper()
		d, err := b.svc.Company(ctx, p, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.ValidacionesRegistro != want {
			t.Errorf("Company reads %q, want %q", d.ValidacionesRegistro, want)
		}
		cs, err := b.svc.SearchCompanies(ctx, p, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.ID == id && c.ValidacionesRegistro != want {
				t.Errorf("SearchCompanies reads %q, want %q", c.ValidacionesRegistro, want)
			}
		}
	}
	tests := []struct {
		name string
		sent *string // on create
		want string
	}{
		{"ok/not sent", nil, ""},
		{"ok/empty", ptr(""), ""},
		{"ok/refuse", ptr("refuse"), "refuse"},
		{"ok/warn", ptr("warn"), "warn"},
		{"ok/off", ptr("off"), "off"},
		{"ok/case and spaces aside", ptr(" Warn "), "warn"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ident := fmt.Sprintf("31015555%02d", i)
			in := companyInput(t, ident)
			in.ValidacionesRegistro = tt.sent
			cc, err := b.svc.CreateCompany(ctx, b.admin, in)
			if err != nil {
				t.Fatal(err)
			}
			if cc.ValidacionesRegistro != tt.want {
				t.Errorf("created with %q, want %q", cc.ValidacionesRegistro, tt.want)
			}
			id := cc.ID
			user := b.login(t, cc.Credentials)
			reads(t, b.admin, id, tt.want)

			// Every value by update, by the company's own user (whoever
			// may update the company), each kept by an update without it.
			for _, v := range []string{"off", "refuse", "", "warn"} {
				up := companyInput(t, ident)
				up.Certificate, up.CertificatePIN = nil, nil
				up.ValidacionesRegistro = ptr(v)
				d, err := b.svc.UpdateCompany(ctx, user, id, up)
				if err != nil {
					t.Fatalf("update to %q: %v", v, err)
				}
				if d.ValidacionesRegistro != v {
					t.Errorf("update to %q answers %q", v, d.ValidacionesRegistro)
				}
				up.ValidacionesRegistro = nil
				up.RazonSocial = "Sin validaciones " + v + " S.A."
				d, err = b.svc.UpdateCompany(ctx, user, id, up)
				if err != nil {
					t.Fatalf("update without it: %v", err)
				}
				if d.ValidacionesRegistro != v || d.RazonSocial != up.RazonSocial {
					t.Errorf("an update without it answers %q (%q), want %q kept", d.ValidacionesRegistro, d.RazonSocial, v)
				}
				reads(t, user, id, v)
			}

			// A bad value is refused and changes nothing.
			up := companyInput(t, ident)
			up.Certificate, up.CertificatePIN = nil, nil
			up.ValidacionesRegistro = ptr("never")
			up.RazonSocial = "No se guarda S.A."
			_, err = b.svc.UpdateCompany(ctx, user, id, up)
			fe := fieldErrors(t, err)
			msgs := fe["validacionesRegistro"]
			if len(fe) != 1 || len(msgs) != 1 {
				t.Fatalf("errors %v, want one on validacionesRegistro", fe)
			}
			for _, v := range []string{"refuse", "warn", "off"} {
				if !strings.Contains(msgs[0], v) {
					t.Errorf("message %q does not list %q", msgs[0], v)
				}
			}
			reads(t, user, id, "warn")
		})
	}
}
