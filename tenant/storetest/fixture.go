package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"facturad/hacienda/registry"
	"facturad/tenant"
)

// company returns a company with every field set to a value of its own, so
// that a field that does not round-trip shows.
func company(id int64, name string) tenant.Company {
	return tenant.Company{
		ID:                       id,
		TipoIdentificacion:       "02",
		NumeroIdentificacion:     fmt.Sprintf("3101%06d", id),
		RazonSocial:              name,
		ActividadComercial:       "722003",
		TipoCliente:              "1",
		RazonComercial:           name + " (comercial)",
		Provincia:                "1",
		Canton:                   "01",
		Distrito:                 "08",
		Barrio:                   "Los Yoses",
		OtrasSenas:               "200 m este de la rotonda",
		CodPais:                  "506",
		Telefono:                 "22223333",
		Fax:                      "22224444",
		CorreoElectronico:        "facturas@example.cr",
		MonedaLocal:              "CRC",
		MonedaExtranjera:         "USD",
		FacturacionElectronica:   true,
		Activo:                   true,
		UsuarioHacienda:          "cpj-3-101-000000@stag.comprobanteselectronicos.go.cr",
		ValidacionesRegistro:     string(registry.PolicyWarn),
		SealedContrasenaHacienda: []byte{0x01, 0x00, 0xfe, 0x10},
		SealedCertificate:        bytes.Repeat([]byte{0x30, 0x82, 0x00, 0xff}, 512),
		SealedCertificatePIN:     []byte{0x00, 0x01, 0x02},
		CertificateExpiry:        time.Date(2027, 3, 4, 5, 6, 7, 123456000, time.UTC),
		CertificateVersion:       1,
	}
}

// branch returns a branch with every field set.
func branch(sucursal string) tenant.Branch {
	return tenant.Branch{
		Sucursal:            sucursal,
		RazonComercial:      "Sucursal " + sucursal,
		Provincia:           "2",
		Canton:              "03",
		Distrito:            "01",
		Barrio:              "Centro",
		OtrasSenas:          "frente al parque",
		CodPais:             "506",
		Telefono:            "24445555",
		Fax:                 "24446666",
		CorreoElectronico:   "sucursal" + sucursal + "@example.cr",
		MonedaLocal:         "CRC",
		MonedaExtranjera:    "USD",
		VerMonedaExtranjera: true,
		Licencia:            "LIC-" + sucursal,
		Activo:              true,
	}
}

// user returns an active branch user whose token digest derives from its
// name, so names and digests are unique together.
func user(name string) tenant.APIUser {
	h := sha256.Sum256([]byte("token of " + name))
	return tenant.APIUser{
		Username:     name,
		PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA",
		TokenHash:    h[:],
		Role:         tenant.RoleBranch,
		Activo:       true,
	}
}

// created is what createCompany made.
type created struct {
	Company tenant.Company
	Branch  tenant.Branch
	User    tenant.APIUser
}

// createCompany reserves an id and creates a company named name with branch
// 001 and a user named after the company id.
func createCompany(t *testing.T, s tenant.Store, name string, owner int64) created {
	t.Helper()
	ctx := context.Background()
	id, err := s.NextCompanyID(ctx)
	if err != nil {
		t.Fatalf("NextCompanyID: %v", err)
	}
	c := company(id, name)
	c.OwnerID = owner
	b := branch("001")
	u := user(fmt.Sprintf("company-%d-user", id))
	if err := s.CreateCompany(ctx, &c, &b, &u); err != nil {
		t.Fatalf("CreateCompany %q: %v", name, err)
	}
	return created{c, b, u}
}

// addBranch creates the branch code of a company, with its first user
// named username.
func addBranch(t *testing.T, s tenant.Store, companyID int64, code, username string) tenant.Branch {
	t.Helper()
	b, u := branch(code), user(username)
	b.CompanyID = companyID
	mustNot(t, "CreateBranch", s.CreateBranch(context.Background(), &b, &u))
	return b
}

// diff lists the fields in which got differs from want (two values of one
// struct type). Times compare with Equal, byte slices with bytes.Equal (nil
// and empty are the same).
func diff(want, got any) []string {
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	var out []string
	var walk func(prefix string, w, g reflect.Value)
	walk = func(prefix string, w, g reflect.Value) {
		for i := 0; i < w.NumField(); i++ {
			f := w.Type().Field(i)
			wf, gf := w.Field(i), g.Field(i)
			name := prefix + f.Name
			switch {
			case f.Anonymous && f.Type.Kind() == reflect.Struct:
				walk(name+".", wf, gf)
			case f.Type == reflect.TypeFor[time.Time]():
				wt, gt := wf.Interface().(time.Time), gf.Interface().(time.Time)
				if !wt.Equal(gt) {
					out = append(out, fmt.Sprintf("%s: want %s, got %s", name, wt.Format(time.RFC3339Nano), gt.Format(time.RFC3339Nano)))
				}
			case f.Type == reflect.TypeFor[[]byte]():
				if !bytes.Equal(wf.Bytes(), gf.Bytes()) {
					out = append(out, fmt.Sprintf("%s: want %x, got %x", name, wf.Bytes(), gf.Bytes()))
				}
			default:
				if !reflect.DeepEqual(wf.Interface(), gf.Interface()) {
					out = append(out, fmt.Sprintf("%s: want %#v, got %#v", name, wf.Interface(), gf.Interface()))
				}
			}
		}
	}
	walk("", wv, gv)
	return out
}

// same fails the test when got differs from want.
func same(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := diff(want, got); len(d) > 0 {
		t.Errorf("%s differs:", what)
		for _, l := range d {
			t.Errorf("  %s", l)
		}
	}
}

// wantErr fails the test unless errors.Is(err, target).
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want one that is %v", what, err, target)
	}
}

// mustNot fails the test at once on an error.
func mustNot(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// isUTC reports whether t is in UTC.
func isUTC(t time.Time) bool {
	return t.Location() == time.UTC
}
