package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/signer/certmint"
)

// connectionTest is the answer of the connection test (A.14).
type connectionTest struct {
	Ambiente               string `json:"ambiente"`
	Token                  string `json:"token"`
	Certificado            string `json:"certificado"`
	IdentificacionCoincide bool   `json:"identificacionCoincide"`
	VencimientoCertificado string `json:"vencimientoCertificado"`
}

// testConnection runs the connection test of company id as c and returns
// its status and answer.
func testConnection(t *testing.T, c apiClient, id int64) (int, connectionTest, string) {
	t.Helper()
	status, b := c.do("POST", fmt.Sprintf("/api/companies/%d/prueba-conexion/v4", id), "", nil)
	var a connectionTest
	if status == 200 {
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("connection test: %v: %s", err, b)
		}
	}
	return status, a, string(b)
}

// TestConnectionTestService runs the connection test through the service
// with its built-in sandbox: a company that works, one whose user the tax
// authority refuses (a production user name in the test environment, the
// usual mistake), one whose certificate expired after it was uploaded, who
// may run it and who finds no company.
func TestConnectionTestService(t *testing.T) {
	_, api, _, stop := startService(t, t.TempDir(), "--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
	defer stop()
	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	good, goodID := createCompanyWith(t, admin, ca, "3101123456", certmint.Options{}, nil)
	prodUser, prodUserID := createCompanyWith(t, admin, ca, "3101222333", certmint.Options{},
		map[string]string{"UsuarioHacienda": "cpj-3101222333@comprobanteselectronicos.go.cr"})
	// A certificate that expires seconds after its upload.
	expires := time.Now().Add(4 * time.Second).Truncate(time.Second)
	expiring, expiringID := createCompanyWith(t, admin, ca, "3101444555", certmint.Options{NotAfter: expires}, nil)

	for _, tt := range []struct {
		name string
		who  apiClient
		id   int64
		want connectionTest
	}{
		{"ok/the company's branch user", good, goodID, connectionTest{Ambiente: "pruebas", Token: "ok", Certificado: "ok", IdentificacionCoincide: true}},
		{"ok/the admin", admin, goodID, connectionTest{Ambiente: "pruebas", Token: "ok", Certificado: "ok", IdentificacionCoincide: true}},
		{"error/a user the tax authority refuses: its own words", prodUser, prodUserID,
			connectionTest{Ambiente: "pruebas", Token: "Invalid user credentials", Certificado: "ok", IdentificacionCoincide: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, got, body := testConnection(t, tt.who, tt.id)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			exp := got.VencimientoCertificado
			got.VencimientoCertificado = ""
			if got != tt.want {
				t.Errorf("answer %+v, want %+v", got, tt.want)
			}
			if _, err := time.ParseInLocation("2006-01-02T15:04:05", exp, hacienda.CostaRica); err != nil || exp == "0001-01-01T00:00:00" {
				t.Errorf("vencimientoCertificado %q", exp)
			}
		})
	}

	t.Run("error/an expired certificate", func(t *testing.T) {
		time.Sleep(time.Until(expires.Add(1100 * time.Millisecond)))
		status, got, body := testConnection(t, expiring, expiringID)
		want := "expired on " + expires.In(hacienda.CostaRica).Format("2006-01-02T15:04:05")
		if status != 200 || got.Token != "ok" || got.Certificado != want || !got.IdentificacionCoincide ||
			got.VencimientoCertificado != expires.In(hacienda.CostaRica).Format("2006-01-02T15:04:05") {
			t.Errorf("%d %s, want certificado %q", status, body, want)
		}
	})

	t.Run("error/another tenant's company is 404", func(t *testing.T) {
		for _, who := range []apiClient{prodUser, expiring} {
			status, _, body := testConnection(t, who, goodID)
			if status != 404 || !strings.Contains(body, `"statusCode":404`) {
				t.Errorf("%d %s, want the contract's 404", status, body)
			}
		}
		if status, _, body := testConnection(t, admin, goodID+1000); status != 404 {
			t.Errorf("a company that does not exist: %d %s", status, body)
		}
	})
}
