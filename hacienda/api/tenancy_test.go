package api

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestCompanyFormPrintsNoSecret: printing or logging a company form shows
// its other fields but never its password, PIN or certificate.
func TestCompanyFormPrintsNoSecret(t *testing.T) {
	const password, pin, p12 = "contrasena-de-hacienda-7f3a", "pin-91c2", "contenido-del-p12-5b8e"
	f := CompanyForm{RazonSocial: "Ejemplo S.A.", ContrasenaHacienda: password, Clave: pin, Certificado: []byte(p12)}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("form", "form", f)
	for _, out := range []string{
		fmt.Sprint(f), fmt.Sprintf("%v", f), fmt.Sprintf("%+v", f), fmt.Sprintf("%#v", f), f.String(),
		fmt.Sprintf("%v", &f), fmt.Sprintf("%+v", []CompanyForm{f}), logged.String(),
	} {
		if strings.Contains(out, password) || strings.Contains(out, pin) || strings.Contains(out, p12) {
			t.Errorf("a secret is printed: %s", out)
		}
		if !strings.Contains(out, "Ejemplo S.A.") || !strings.Contains(out, redacted) {
			t.Errorf("the form is not printed as itself with its secrets redacted: %s", out)
		}
	}
	if f.ContrasenaHacienda != password || f.Clave != pin || string(f.Certificado) != p12 {
		t.Error("printing changed the form")
	}
	// Encode still sends them.
	_, body, err := f.Encode()
	if err != nil || !bytes.Contains(body, []byte(password)) || !bytes.Contains(body, []byte(pin)) || !bytes.Contains(body, []byte(p12)) {
		t.Fatalf("the encoded form lost a secret: %v", err)
	}
}
