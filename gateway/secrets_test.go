package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"facturad/signer/certmint"
	"facturad/tenant"
)

// Who is answered a company's tax-authority password (contrasenaHacienda)
// and certificate PIN (clave), decision 162: on a read by id, those who
// manage the company (the admin, the reseller that owns it), and nobody
// while hide_company_secrets is set; never in a create's, an update's or a
// search's answer, an error, the audit log or a log line.
//
// A.1 has three roles. A company's users are all branch users (the user
// made with the company is its first branch's, the same kind of key a till
// uses), so the callers below are every kind of principal that can reach
// the company routes: the admin, the company's reseller, another reseller,
// the company's user of its first branch, of a second branch and one made
// by the create-user call, another company's user, a switched-off user of
// the company and a caller without credentials.
//
// The secrets are random lower-case letters, digits and dashes, which JSON
// writes as they are, so that looking for their bytes in a raw answer
// finds every copy.

// secretValues are one company's secrets as sent.
type secretValues struct{ password, pin string }

func newSecretValues(t testing.TB, tag string) secretValues {
	t.Helper()
	r := func(kind string) string {
		b := make([]byte, 8)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		return kind + "-" + tag + "-" + hex.EncodeToString(b)
	}
	return secretValues{password: r("contrasena"), pin: r("pin")}
}

// secretsWorld is a world whose companies are created with secrets of
// their own.
type secretsWorld struct {
	*world
	secrets map[int64]secretValues // by company id
	all     []string               // every secret value sent in any request
}

// sent records secrets s as sent in a request, to be looked for in every
// answer.
func (sw *secretsWorld) sent(s secretValues) {
	sw.all = append(sw.all, s.password, s.pin)
}

// mintPIN returns a .p12 for an identification protected by pin.
func (sw *secretsWorld) mintPIN(t testing.TB, id, pin string) *certmint.Minted {
	t.Helper()
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02", Identificacion: id, Name: "Prueba " + id, PIN: pin,
		CA: sw.ca, Key: certmint.TestKey(0),
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// companyRequest is a company form (create or full-replace update) for
// identification id with secrets s and, when withCert, a certificate
// protected by s.pin.
func (sw *secretsWorld) companyRequest(t testing.TB, id, name string, s secretValues, withCert bool) (string, []byte) {
	t.Helper()
	form := companyForm(id, name)
	form["ContrasenaHacienda"] = s.password
	var files map[string][]byte
	delete(form, "Clave")
	if withCert {
		form["Clave"] = s.pin
		files = map[string][]byte{"Certificado": sw.mintPIN(t, id, s.pin).P12}
	}
	sw.sent(s)
	return multipartBody(t, form, files)
}

// create creates a company as by and remembers its secrets.
func (sw *secretsWorld) create(t testing.TB, by creds, id, name, tag string) tenantCompany {
	t.Helper()
	s := newSecretValues(t, tag)
	ct, body := sw.companyRequest(t, id, name, s, true)
	r := sw.do(t, "POST", pathCompanies, &by, ct, body)
	if r.status != 200 {
		t.Fatalf("create company %s: %d %s", name, r.status, r.body)
	}
	sw.requireNoSecret(t, "create", r.body)
	a := r.object(t)
	co := tenantCompany{
		id: num(a["companiaId"]), branchID: num(a["sucursalId"]),
		user: creds{token: a["apiToken"].(string), user: a["usuario"].(string), pass: a["contrasena"].(string)},
	}
	sw.secrets[co.id] = s
	return co
}

// requireNoSecret fails when body holds any secret value sent so far.
func (sw *secretsWorld) requireNoSecret(t testing.TB, what string, body []byte) {
	t.Helper()
	for _, v := range sw.all {
		if bytes.Contains(body, []byte(v)) {
			t.Errorf("%s: the answer holds a secret (%.12s…): %s", what, v, body)
		}
	}
}

// requireOnlySecretsOf fails unless body holds exactly company id's
// secrets among those sent so far, in the get form's fields.
func (sw *secretsWorld) requireOnlySecretsOf(t testing.TB, what string, r reply, id int64) {
	t.Helper()
	own := sw.secrets[id]
	m := r.object(t)
	if m["contrasenaHacienda"] != own.password || m["clave"] != own.pin {
		t.Errorf("%s: contrasenaHacienda %q, clave %q: want the company's", what, m["contrasenaHacienda"], m["clave"])
	}
	for _, v := range sw.all {
		if v != own.password && v != own.pin && bytes.Contains(r.body, []byte(v)) {
			t.Errorf("%s: the answer holds another secret (%.12s…): %s", what, v, r.body)
		}
	}
}

func (sw *secretsWorld) newUser(t testing.TB, by creds, companyID, branchID int64, name string) creds {
	t.Helper()
	path := fmt.Sprintf("/api/companies/%d/branches/%d/users/v4", companyID, branchID)
	r := sw.do(t, "POST", path, &by, "application/json", []byte(`{"usuario":"`+name+`"}`))
	if r.status != 200 {
		t.Fatalf("create user %s: %d %s", name, r.status, r.body)
	}
	m := r.object(t)
	return creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
}

// statusIs reports whether status is want, where a 401 may also be the
// 429 that failed logins repeated from one address get.
func statusIs(status, want int) bool {
	return status == want || (want == http.StatusUnauthorized && status == http.StatusTooManyRequests)
}

func TestCompanySecretsByRole(t *testing.T) {
	for _, k := range storeKinds {
		for _, hide := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/hide_company_secrets=%v", k.name, hide), func(t *testing.T) {
				testCompanySecretsByRole(t, k.open(t), hide)
			})
		}
	}
}

func testCompanySecretsByRole(t *testing.T, store tenant.Store, hide bool) {
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w, svc := newTenantWorld(t, store, func(so *tenant.ServiceOptions) {
		so.HideCompanySecrets = hide
		so.Logger = log
	})
	audit, err := AuditRoute(svc, make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	w.testBundle = setup(t, Options{Tenants: svc, Logger: log, Routes: []Route{audit}})
	sw := &secretsWorld{world: w, secrets: map[int64]secretValues{}}

	reseller := func(name string) creds {
		r := w.do(t, "POST", pathResellers, &w.admin, "application/json", []byte(`{"usuario":"`+name+`"}`))
		if r.status != 200 {
			t.Fatalf("create reseller: %d %s", r.status, r.body)
		}
		m := r.object(t)
		return creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
	}
	r1, r2 := reseller("revendedor-uno"), reseller("revendedor-dos")
	a := sw.create(t, r1, "3101000001", "Empresa Alfa S.A.", "a")      // r1's
	b := sw.create(t, r2, "3101000002", "Empresa Beta S.A.", "b")      // r2's
	c := sw.create(t, w.admin, "3101000003", "Empresa Gama S.A.", "c") // the admin's

	// A second branch of A, a till's key made by the create-user call,
	// and a user switched off.
	r := w.do(t, "POST", fmt.Sprintf("/api/companies/%d/branches/v4", a.id), &a.user, "application/json", []byte(`{"sucursal":"002","razonComercial":"Sucursal Norte"}`))
	if r.status != 200 {
		t.Fatalf("create branch: %d %s", r.status, r.body)
	}
	m := r.object(t)
	secondBranch := creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
	till := sw.newUser(t, a.user, a.id, a.branchID, "caja-1")
	off := sw.newUser(t, a.user, a.id, a.branchID, "caja-apagada")
	users := w.do(t, "GET", fmt.Sprintf("/api/companies/%d/branches/%d/users/v4", a.id, a.branchID), &a.user, "", nil).array(t)
	for _, u := range users {
		if u["usuario"] == off.user {
			path := fmt.Sprintf("/api/companies/%d/branches/%d/users/%d/v4", a.id, a.branchID, num(u["id"]))
			if r := w.do(t, "PUT", path, &a.user, "application/json", []byte(`{"activo":"N"}`)); r.status != 200 {
				t.Fatalf("switch off: %d %s", r.status, r.body)
			}
		}
	}

	callers := []struct {
		name string
		who  *creds // nil: no credentials
		// The answers to a read of company A by id, an update of it, a
		// create of a company of its own.
		get, update, create int
		// manages: A's secrets are answered on a read by id (unless
		// hidden).
		manages bool
	}{
		{"admin", &w.admin, 200, 200, 200, true},
		{"reseller of the company", &r1, 200, 200, 200, true},
		{"another reseller", &r2, 404, 404, 200, false},
		{"the company's user made with it", &a.user, 200, 200, 404, false},
		{"the company's user of a second branch", &secondBranch, 200, 200, 404, false},
		{"the company's till key made by create-user", &till, 200, 200, 404, false},
		{"another company's user", &b.user, 404, 404, 404, false},
		{"the company's user switched off", &off, 401, 401, 401, false},
		{"no credentials", nil, 401, 401, 401, false},
	}
	ident := 10
	for _, cl := range callers {
		t.Run(cl.name, func(t *testing.T) {
			getA := func(what string) {
				t.Helper()
				r := w.do(t, "GET", fmt.Sprintf("/api/companies/%d/v4", a.id), cl.who, "", nil)
				if !statusIs(r.status, cl.get) {
					t.Fatalf("%s: %d %s, want %d", what, r.status, r.body, cl.get)
				}
				if r.status == 200 {
					requireShape(t, "Company (get)", r.object(t), shapeCompanyGet)
				}
				if cl.manages && !hide {
					sw.requireOnlySecretsOf(t, what, r, a.id)
					return
				}
				sw.requireNoSecret(t, what, r.body)
				if r.status == 200 {
					if m := r.object(t); m["contrasenaHacienda"] != "" || m["clave"] != "" {
						t.Errorf("%s: withheld secrets are not empty: %s", what, r.body)
					}
				}
			}
			getA("get")

			r := w.do(t, "GET", pathCompanies, cl.who, "", nil)
			if want := map[bool]int{true: 200, false: 401}[cl.get != 401]; !statusIs(r.status, want) {
				t.Fatalf("search: %d %s, want %d", r.status, r.body, want)
			}
			sw.requireNoSecret(t, "search", r.body)

			// Updates on both paths, with the password sent again, then
			// with a new certificate (its PIN new too): neither answer
			// carries a secret; a read by id then gives the new ones to
			// those who read them.
			for i, path := range []string{"/api/companies/%d/v4", "/api/companies/%d/branches/v4"} {
				s := sw.secrets[a.id]
				if i == 1 {
					s = newSecretValues(t, "a-nuevo")
				}
				ct, body := sw.companyRequest(t, "3101000001", "Empresa Alfa Renovada S.A.", s, i == 1)
				r := w.do(t, "PUT", fmt.Sprintf(path, a.id), cl.who, ct, body)
				if !statusIs(r.status, cl.update) {
					t.Fatalf("update at %s: %d %s, want %d", path, r.status, r.body, cl.update)
				}
				if r.status == 200 {
					requireShape(t, "UpdateCompanyResponse", r.object(t), shapeCompanyUpdate)
					if m := r.object(t); m["contrasenaHacienda"] != "" || m["clave"] != "" {
						t.Errorf("update at %s: secrets not empty: %s", path, r.body)
					}
					sw.secrets[a.id] = s
				}
				sw.requireNoSecret(t, "update at "+path, r.body)
			}
			getA("get after the updates")

			// A company of its own, on both create paths.
			for _, path := range []string{pathCompanies, "/api/companies/0/branches/v4"} {
				ident++
				id := fmt.Sprintf("31010001%02d", ident)
				s := newSecretValues(t, "nueva")
				ct, body := sw.companyRequest(t, id, "Empresa Nueva "+id+" S.A.", s, true)
				r := w.do(t, "POST", path, cl.who, ct, body)
				if !statusIs(r.status, cl.create) {
					t.Fatalf("create at %s: %d %s, want %d", path, r.status, r.body, cl.create)
				}
				sw.requireNoSecret(t, "create at "+path, r.body)
				if r.status != 200 {
					continue
				}
				m := r.object(t)
				requireShape(t, "CreateCompanyResponse", m, shapeCompanyCreate)
				if m["contrasenaHacienda"] != "" || m["clave"] != "" {
					t.Errorf("create at %s: secrets not empty: %s", path, r.body)
				}
				// Its creator manages it.
				newID := num(m["companiaId"])
				sw.secrets[newID] = s
				r = w.do(t, "GET", fmt.Sprintf("/api/companies/%d/v4", newID), cl.who, "", nil)
				if r.status != 200 {
					t.Fatalf("read of its new company: %d %s", r.status, r.body)
				}
				if hide {
					sw.requireNoSecret(t, "read of its new company", r.body)
				} else {
					sw.requireOnlySecretsOf(t, "read of its new company", r, newID)
				}
			}
		})
	}

	// The admin's company and the other reseller's, read by id: the admin
	// reads both; A's reseller neither (404).
	for _, co := range []tenantCompany{b, c} {
		r := w.do(t, "GET", fmt.Sprintf("/api/companies/%d/v4", co.id), &w.admin, "", nil)
		if hide {
			sw.requireNoSecret(t, "admin's read", r.body)
		} else {
			sw.requireOnlySecretsOf(t, "admin's read", r, co.id)
		}
		r = w.do(t, "GET", fmt.Sprintf("/api/companies/%d/v4", co.id), &r1, "", nil)
		requireA7(t, r, http.StatusNotFound)
		sw.requireNoSecret(t, "another reseller's read", r.body)
	}

	t.Run("errors", func(t *testing.T) {
		// A PIN without its certificate: the same refusal for the stored
		// PIN and another, to the company's user; the stored one is fine
		// from a caller who reads it.
		s := sw.secrets[a.id]
		var msgs []string
		for _, pin := range []string{s.pin, "pin-que-no-es"} {
			form := companyForm("3101000001", "Empresa Alfa S.A.")
			form["ContrasenaHacienda"], form["Clave"] = s.password, pin
			ct, body := multipartBody(t, form, nil)
			r := w.do(t, "PUT", fmt.Sprintf("/api/companies/%d/v4", a.id), &a.user, ct, body)
			errs := requireA7(t, r, 400)
			requireField(t, errs, "Clave")
			sw.requireNoSecret(t, "a PIN alone", r.body)
			msgs = append(msgs, fmt.Sprint(errs))
			r = w.do(t, "PUT", fmt.Sprintf("/api/companies/%d/v4", a.id), &r1, ct, body)
			switch {
			case pin != s.pin:
				requireField(t, requireA7(t, r, 400), "Clave")
			case hide:
				requireField(t, requireA7(t, r, 400), "Clave") // hidden from the reseller too
			case r.status != 200:
				t.Errorf("the stored PIN sent again by the reseller: %d %s", r.status, r.body)
			}
			sw.requireNoSecret(t, "a PIN alone, reseller", r.body)
		}
		if msgs[0] != msgs[1] {
			t.Errorf("the refusals tell the stored PIN from another: %q", msgs)
		}

		// A wrong PIN for the certificate, and a password too long.
		wrong := newSecretValues(t, "mal")
		form := companyForm("3101000099", "Empresa Errada S.A.")
		form["ContrasenaHacienda"], form["Clave"] = wrong.password, wrong.pin
		sw.sent(wrong)
		ct, body := multipartBody(t, form, map[string][]byte{"Certificado": sw.mintPIN(t, "3101000099", "otro-pin").P12})
		r := w.do(t, "POST", pathCompanies, &w.admin, ct, body)
		requireField(t, requireA7(t, r, 400), "Certificado")
		sw.requireNoSecret(t, "a wrong PIN", r.body)
		long := strings.Repeat(wrong.password, 20)
		form["ContrasenaHacienda"] = long
		ct, body = multipartBody(t, form, nil)
		r = w.do(t, "PUT", fmt.Sprintf("/api/companies/%d/v4", a.id), &w.admin, ct, body)
		requireField(t, requireA7(t, r, 400), "ContrasenaHacienda")
		sw.requireNoSecret(t, "a password too long", r.body)
	})

	// The audit log records the changes' field names, never their values.
	for _, co := range []tenantCompany{a, b, c} {
		r := w.do(t, "GET", fmt.Sprintf("/api/companies/%d/auditoria/v4", co.id), &w.admin, "", nil)
		if r.status != 200 || !bytes.Contains(r.body, []byte("ContrasenaHacienda")) {
			t.Fatalf("audit log of %d: %d %s", co.id, r.status, r.body)
		}
		sw.requireNoSecret(t, "audit log", r.body)
	}

	// Nothing above wrote a secret into a log line.
	sw.requireNoSecret(t, "the log", []byte(logs.String()))
	if !strings.Contains(logs.String(), `"msg":"access"`) {
		t.Fatal("the log holds no access line: the check above saw nothing")
	}
}
