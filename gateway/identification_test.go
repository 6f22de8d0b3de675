package gateway

import "testing"

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
