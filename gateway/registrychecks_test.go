package gateway

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestValidacionesRegistro: the company field validacionesRegistro (A.13)
// through the company calls, on both stores: each value on create, read
// back by the get and the search; an update without the field keeps it,
// one with it sets it (empty clears it); anything else is a 400 on
// validacionesRegistro listing the values, and changes nothing.
func TestValidacionesRegistro(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testValidacionesRegistro(t, newWorldOn(t, k.open(t))) })
	}
}

func testValidacionesRegistro(t *testing.T, w *world) {
	// read checks what the get and the search answer for company id.
	read := func(t *testing.T, who creds, id int64, want string) {
		t.Helper()
		r := w.do(t, "GET", fmt.Sprintf("/api/companies/%d/v4", id), &who, "", nil)
		if r.status != 200 {
			t.Fatalf("get: %d %s", r.status, r.body)
		}
		if got := r.object(t)["validacionesRegistro"]; got != want {
			t.Errorf("get answers validacionesRegistro %#v, want %q", got, want)
		}
		r = w.do(t, "GET", "/api/companies/v4", &who, "", nil)
		found := false
		for _, c := range r.array(t) {
			if num(c["id"]) == id {
				found = true
				if got := c["validacionesRegistro"]; got != want {
					t.Errorf("search answers validacionesRegistro %#v, want %q", got, want)
				}
			}
		}
		if !found {
			t.Errorf("search does not find company %d", id)
		}
	}
	// update sends the company's form with field set to v (absent when v
	// is nil) and returns the answer.
	update := func(t *testing.T, who creds, id int64, ident, name string, field string, v *string) reply {
		t.Helper()
		form := companyForm(ident, name)
		delete(form, "Clave") // no new certificate
		if v != nil {
			form[field] = *v
		}
		ct, body := multipartBody(t, form, nil)
		return w.do(t, "PUT", fmt.Sprintf("/api/companies/%d/v4", id), &who, ct, body)
	}
	str := func(s string) *string { return &s }

	tests := []struct {
		name  string
		field string  // the form's spelling of the name
		sent  *string // on create; nil: absent
		want  string
	}{
		{"ok/absent", "validacionesRegistro", nil, ""},
		{"ok/empty", "validacionesRegistro", str(""), ""},
		{"ok/refuse", "validacionesRegistro", str("refuse"), "refuse"},
		{"ok/warn", "validacionesRegistro", str("warn"), "warn"},
		{"ok/off", "validacionesRegistro", str("off"), "off"},
		{"ok/name in another case", "VALIDACIONESREGISTRO", str("off"), "off"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ident := fmt.Sprintf("31017777%02d", i)
			name := "Validaciones " + ident + " S.A."
			m := w.mint(t, "02", ident, false)
			form := companyForm(ident, name)
			if tt.sent != nil {
				form[tt.field] = *tt.sent
			}
			ct, body := multipartBody(t, form, map[string][]byte{"Certificado": m.P12})
			r := w.do(t, "POST", "/api/companies/v4", &w.admin, ct, body)
			if r.status != 200 {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			a := r.object(t)
			if got := a["validacionesRegistro"]; got != tt.want {
				t.Errorf("create answers validacionesRegistro %#v, want %q", got, tt.want)
			}
			id := num(a["companiaId"])
			user := creds{token: a["apiToken"].(string), user: a["usuario"].(string), pass: a["contrasena"].(string)}
			read(t, w.admin, id, tt.want)

			// Every value by the company's own user, each kept by an
			// update that does not send the field.
			for _, v := range []string{"warn", "", "off", "refuse"} {
				r := update(t, user, id, ident, name, tt.field, &v)
				if r.status != 200 {
					t.Fatalf("update to %q: %d %s", v, r.status, r.body)
				}
				if got := r.object(t)["validacionesRegistro"]; got != v {
					t.Errorf("update to %q answers %#v", v, got)
				}
				r = update(t, user, id, ident, name+" (sin el campo)", tt.field, nil)
				if r.status != 200 {
					t.Fatalf("update without the field: %d %s", r.status, r.body)
				}
				if got := r.object(t)["validacionesRegistro"]; got != v {
					t.Errorf("an update without the field answers %#v, want %q kept", got, v)
				}
				read(t, user, id, v)
			}

			for _, bad := range []string{"strict", "S", "refuse,warn"} {
				r := update(t, user, id, ident, "No se guarda S.A.", tt.field, &bad)
				errs := requireA7(t, r, 400)
				requireField(t, errs, "validacionesRegistro")
				if len(errs) != 1 {
					t.Errorf("%q: errors on %v, want validacionesRegistro alone", bad, errs)
				}
				msg := fmt.Sprint(errs["validacionesRegistro"])
				for _, v := range []string{"refuse", "warn", "off"} {
					if !strings.Contains(msg, v) {
						t.Errorf("%q: the message %s does not list %q", bad, msg, v)
					}
				}
				read(t, user, id, "refuse")
			}
		})
	}

	t.Run("ok/url-encoded form", func(t *testing.T) {
		co := w.createCompany(t, w.admin, "3101777799", "Formulario Codificado S.A.")
		form := url.Values{}
		for k, v := range companyForm("3101777799", "Formulario Codificado S.A.") {
			if k != "Clave" {
				form.Set(k, v)
			}
		}
		form.Set("validacionesRegistro", "warn")
		r := w.do(t, "PUT", fmt.Sprintf("/api/companies/%d/v4", co.id), &co.user, "application/x-www-form-urlencoded", []byte(form.Encode()))
		if r.status != 200 || r.object(t)["validacionesRegistro"] != "warn" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		form.Set("validacionesRegistro", "")
		r = w.do(t, "PUT", fmt.Sprintf("/api/companies/%d/v4", co.id), &co.user, "application/x-www-form-urlencoded", []byte(form.Encode()))
		if r.status != 200 || r.object(t)["validacionesRegistro"] != "" {
			t.Fatalf("sent empty: %d %s", r.status, r.body)
		}
		read(t, co.user, co.id, "")
	})
}
