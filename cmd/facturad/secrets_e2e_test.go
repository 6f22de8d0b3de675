package main

import (
	"bytes"
	"encoding/json"
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
			status, created := admin.do("POST", "/api/companies/v4", ct, body)
			if status != 200 || bytes.Contains(created, []byte("clave-de-hacienda")) || bytes.Contains(created, []byte(`"clave":"1234"`)) {
				t.Fatalf("create: %d %s", status, created)
			}
			var c struct {
				CompaniaID                    int64
				Usuario, Contrasena, APIToken string
			}
			if err := json.Unmarshal(created, &c); err != nil {
				t.Fatal(err)
			}
			branch := apiClient{t: t, base: admin.base, token: c.APIToken, user: c.Usuario, pass: c.Contrasena}
			path := fmt.Sprintf("/api/companies/%d/v4", c.CompaniaID)
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
