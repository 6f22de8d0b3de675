package main

import (
	"bytes"
	"fmt"
	"testing"

	"facturad/signer/certmint"
)

// TestHideCompanySecretsSetting: the service answers a company's
// tax-authority password and certificate PIN to its admin on a read by id,
// and with hide_company_secrets to nobody, the admin included; the
// company's own user never reads them, and the create's answer never
// carries them.
func TestHideCompanySecretsSetting(t *testing.T) {
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		args  []string
		shown bool
	}{
		{"default", nil, true},
		{"hide_company_secrets", []string{"--hide-company-secrets"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, api, _, stop := startService(t, t.TempDir(), append([]string{
				"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken}, tt.args...)...)
			defer stop()
			admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}

			// companyForm sends ContrasenaHacienda clave-de-hacienda and
			// the PIN 1234.
			ct, body := companyForm(t, ca, "3101123456", certmint.Options{}, nil)
			branch, companyID, created := postCompany(t, admin, ct, body)
			if bytes.Contains(created, []byte("clave-de-hacienda")) || bytes.Contains(created, []byte(`"clave":"1234"`)) {
				t.Fatalf("the create's answer holds a secret: %s", created)
			}
			path := fmt.Sprintf("/api/companies/%d/v4", companyID)
			for _, who := range []struct {
				name  string
				cl    apiClient
				shown bool
			}{{"admin", admin, tt.shown}, {"the company's user", branch, false}} {
				var got struct {
					ContrasenaHacienda string `json:"contrasenaHacienda"`
					Clave              string `json:"clave"`
				}
				who.cl.json("GET", path, nil, 200, &got)
				want := map[bool][2]string{true: {"clave-de-hacienda", "1234"}, false: {"", ""}}[who.shown]
				if got.ContrasenaHacienda != want[0] || got.Clave != want[1] {
					t.Errorf("%s reads %q and %q, want %q", who.name, got.ContrasenaHacienda, got.Clave, want)
				}
			}
		})
	}
}
