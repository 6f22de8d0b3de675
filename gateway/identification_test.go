package gateway

import (
	"fmt"
	"testing"
)

// One company per taxpayer: a second company with a taken identification
// is a 400 on Identificacion, whoever creates it.
func TestCompanyIdentificationTaken(t *testing.T) {
	w := newWorld(t)
	w.createCompany(t, w.admin, "3101123456", "Primera S.A.")
	m := w.mint(t, "02", "3101123456", false)
	ct, body := multipartBody(t, companyForm("3101123456", "Otra S.A."), map[string][]byte{"Certificado": m.P12})
	r := w.do(t, "POST", "/api/companies/v4", &w.admin, ct, body)
	requireField(t, requireA7(t, r, 400), "Identificacion")
}

// A missing usuario is a 400 on usuario for the branch's own users, and a
// 404 for another tenant's: access is checked before the body.
func TestCreateUserMissingName(t *testing.T) {
	w := newWorld(t)
	a := w.createCompany(t, w.admin, "3101123456", "Primera S.A.")
	other := w.createCompany(t, w.admin, "3101654321", "Segunda S.A.")
	path := fmt.Sprintf("/api/companies/%d/branches/%d/users/v4", a.id, a.branchID)
	for _, body := range []string{`{}`, `{"usuario":""}`, `{"Usuario":null}`, `{"usuario":"  "}`} {
		requireField(t, requireA7(t, w.do(t, "POST", path, &a.user, "application/json", []byte(body)), 400), "usuario")
		requireA7(t, w.do(t, "POST", path, &other.user, "application/json", []byte(body)), 404)
	}
}
