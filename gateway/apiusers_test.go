package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// An API user can be listed, switched off and on, and given a new token
// over HTTP by whoever manages its branch; another tenant gets 404 for all
// of it, and a user switched off or a rotated token stops working at once.
func TestAPIUserLifecycle(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testAPIUserLifecycle(t, newWorldOn(t, k.open(t))) })
	}
}

func testAPIUserLifecycle(t *testing.T, w *world) {
	a := w.createCompany(t, w.admin, "3101111111", "Empresa Alfa S.A.")
	b := w.createCompany(t, w.admin, "3101222222", "Empresa Beta S.A.")
	users := fmt.Sprintf("/api/companies/%d/branches/%d/users/v4", a.id, a.branchID)
	r := w.do(t, "POST", users, &a.user, "application/json", []byte(`{"usuario": "caja-2"}`))
	if r.status != 200 {
		t.Fatalf("create user: %d %s", r.status, r.body)
	}
	var created struct{ Usuario, Contrasena, APIToken string }
	if err := json.Unmarshal(r.body, &created); err != nil {
		t.Fatal(err)
	}
	caja := creds{token: created.APIToken, user: created.Usuario, pass: created.Contrasena}
	companies := fmt.Sprintf("/api/companies/%d/v4", a.id)
	if r := w.do(t, "GET", companies, &caja, "", nil); r.status != 200 {
		t.Fatalf("the new user: %d %s", r.status, r.body)
	}

	// List: both users, no secrets.
	r = w.do(t, "GET", users, &a.user, "", nil)
	var listed []struct {
		ID      int64  `json:"id"`
		Usuario string `json:"usuario"`
		Activo  string `json:"activo"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &listed) != nil || len(listed) != 2 {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	for _, secret := range []string{caja.pass, caja.token, a.user.pass, a.user.token} {
		if containsBytes(r.body, secret) {
			t.Fatalf("the list shows a secret: %s", r.body)
		}
	}
	var cajaID int64
	for _, u := range listed {
		if u.Usuario == "caja-2" {
			cajaID = u.ID
		}
	}
	user := fmt.Sprintf("/api/companies/%d/branches/%d/users/%d/v4", a.id, a.branchID, cajaID)
	token := fmt.Sprintf("/api/companies/%d/branches/%d/users/%d/token/v4", a.id, a.branchID, cajaID)

	// Another tenant: 404 on every call, nothing changes.
	for _, c := range []struct{ method, path, body string }{
		{"GET", users, ""}, {"PUT", user, `{"activo": "N"}`}, {"POST", token, ""},
	} {
		requireA7(t, w.do(t, c.method, c.path, &b.user, "application/json", []byte(c.body)), 404)
	}
	// A user of another branch's path: 404 too.
	other := fmt.Sprintf("/api/companies/%d/branches/%d/users/%d/v4", b.id, b.branchID, cajaID)
	requireA7(t, w.do(t, "PUT", other, &b.user, "application/json", []byte(`{"activo": "N"}`)), 404)
	if r := w.do(t, "GET", companies, &caja, "", nil); r.status != 200 {
		t.Fatalf("after another tenant's tries: %d", r.status)
	}

	// Bad bodies.
	requireField(t, requireA7(t, w.do(t, "PUT", user, &a.user, "application/json", []byte(`{}`)), 400), "activo")
	requireField(t, requireA7(t, w.do(t, "PUT", user, &a.user, "application/json", []byte(`{"activo": "X"}`)), 400), "activo")

	// Off: the next request is refused; on again: served.
	r = w.do(t, "PUT", user, &a.user, "application/json", []byte(`{"activo": "N"}`))
	if r.status != 200 || !containsBytes(r.body, `"activo":"N"`) {
		t.Fatalf("switch off: %d %s", r.status, r.body)
	}
	requireA7(t, w.do(t, "GET", companies, &caja, "", nil), 401)
	if r := w.do(t, "PUT", user, &a.user, "application/json", []byte(`{"activo": "S"}`)); r.status != 200 {
		t.Fatalf("switch on: %d %s", r.status, r.body)
	}
	if r := w.do(t, "GET", companies, &caja, "", nil); r.status != 200 {
		t.Fatalf("switched on again: %d", r.status)
	}

	// A new token: the old one stops at once, the new one works with the
	// same password.
	r = w.do(t, "POST", token, &a.user, "application/json", nil)
	var rotated struct{ Usuario, APIToken string }
	if r.status != 200 || json.Unmarshal(r.body, &rotated) != nil || rotated.APIToken == "" || rotated.APIToken == caja.token || rotated.Usuario != "caja-2" {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	requireA7(t, w.do(t, "GET", companies, &caja, "", nil), 401)
	caja.token = rotated.APIToken
	if r := w.do(t, "GET", companies, &caja, "", nil); r.status != 200 {
		t.Fatalf("the new token: %d %s", r.status, r.body)
	}
}

func containsBytes(b []byte, s string) bool {
	return s != "" && strings.Contains(string(b), s)
}
