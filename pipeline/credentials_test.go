package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"facturad/hacienda/sandbox"
	"facturad/tenant"
)

func TestSendable(t *testing.T) {
	good := tenant.Company{FacturacionElectronica: true, UsuarioHacienda: "cpj@stag", SealedContrasenaHacienda: []byte{1}}
	tests := []struct {
		name   string
		change func(c *tenant.Company)
		field  string
	}{
		{"ok/credentials and electronic invoicing", func(*tenant.Company) {}, ""},
		{"error/electronic invoicing off", func(c *tenant.Company) { c.FacturacionElectronica = false }, "FacturacionElectronica"},
		{"error/no user", func(c *tenant.Company) { c.UsuarioHacienda = " " }, "UsuarioHacienda"},
		{"error/no password", func(c *tenant.Company) { c.SealedContrasenaHacienda = nil }, "ContrasenaHacienda"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.change(&c)
			err := sendable(c)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe interface{ FieldErrors() map[string][]string }
			if !errors.As(err, &fe) || len(fe.FieldErrors()[tt.field]) == 0 {
				t.Fatalf("got %v, want a validation error on %s", err, tt.field)
			}
		})
	}
}

// TestSendWithoutElectronicInvoicing: a company that cannot reach the tax
// authority gets a validation error and no number.
func TestSendWithoutElectronicInvoicing(t *testing.T) {
	b := setup(t, setupOptions{})
	ctx := context.Background()
	cc, err := b.svc.CreateCompany(ctx, b.admin, tenant.CompanyInput{
		TipoIdentificacion: "02", Identificacion: "3101999888", RazonSocial: "Sin Factura S.A.",
		ActividadComercial: "620100", TipoCliente: "Normal", Provincia: "1", Canton: "01", Distrito: "01",
		OtrasSenas: "Del parque 100 m norte", CodPais: "506", Telefono: "22223333",
		CorreoElectronico: "facturas@example.com", Sucursal: "001", FacturacionElectronica: false,
	})
	if err != nil {
		t.Fatalf("create company: %v", err)
	}
	pr := tenant.Principal{UserID: 5000, Role: tenant.RoleBranch, CompanyID: cc.Company.ID, BranchID: cc.Branch.ID}
	_, err = b.sendRaw(ctx, pr, body(t, request("01", "sin-fe")))
	var fe interface{ FieldErrors() map[string][]string }
	if !errors.As(err, &fe) || len(fe.FieldErrors()["FacturacionElectronica"]) == 0 {
		t.Fatalf("send: got %v, want a validation error on FacturacionElectronica", err)
	}
	if _, err := b.store.DocumentByExternalID(ctx, cc.Branch.ID, "sin-fe"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("a refused document was stored: %v", err)
	}
	if n := tokenCalls(b.sb.Stats()); n != 0 {
		t.Errorf("the token service was asked %d times", n)
	}
}

// TestRefusedCredentialsProbedSlowly: refused credentials keep the document
// in 05 with no next attempt; the background worker tries them again with
// one document per probe (never a login per document and round), and once
// they work the document is sent without a client action.
func TestRefusedCredentialsProbedSlowly(t *testing.T) {
	b := setup(t, setupOptions{sandbox: sandbox.Options{Faults: sandbox.Faults{TokenRefusal: 401}}, clientClock: true})
	hooks := b.store.(tenant.WebhookStore)
	hook := tenant.Webhook{CompanyID: b.company.ID, URL: "https://hooks.example/creds", Eventos: []string{tenant.EventCredentialsRefused}, SealedSecret: []byte("s")}
	if err := hooks.CreateWebhook(context.Background(), &hook, 10); err != nil {
		t.Fatal(err)
	}
	var claves []string
	for i := range 3 {
		out := b.mustSend(t, request("01", fmt.Sprintf("cred-%d", i)))
		if !out.Failed || out.Estado != tenant.StateNotSentYet || out.Key != KeySendingDocumentError || !strings.Contains(out.Message, "UsuarioHacienda") {
			t.Fatalf("send: %s", describe(out))
		}
		claves = append(claves, out.Document.Clave)
	}
	for _, c := range claves {
		if d := b.stored(t, c); !d.NextAttemptAt.IsZero() || d.LastError != credentialsMessage {
			t.Fatalf("stored: next %v error %q", d.NextAttemptAt, d.LastError)
		}
	}
	grants := tokenCalls(b.sb.Stats())
	const rounds = 3
	for range rounds {
		b.round(t)
	}
	if got := tokenCalls(b.sb.Stats()) - grants; got < 1 || got > rounds {
		t.Errorf("the background worker logged in %d times in %d probes an hour apart, want 1..%d", got, rounds, rounds)
	}
	// Three refused sends and the refused probes are one stop: announced
	// once, with its company.
	ds, err := hooks.Deliveries(context.Background(), hook.ID, tenant.DeliveryPage{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Evento != tenant.EventCredentialsRefused ||
		!strings.Contains(string(ds[0].Payload), fmt.Sprintf(`"companiaId":%d,"numeroIdentificacion":"%s"`, b.company.ID, b.company.NumeroIdentificacion)) {
		t.Errorf("deliveries of the stop: %+v", ds)
	}

	// Corrected at the tax authority (the company changed nothing here):
	// the next probe finds they work and every stopped document goes.
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	b.runDueUntil(t, 5, func() bool {
		for _, c := range claves {
			if b.stored(t, c).Estado != tenant.StateAccepted {
				return false
			}
		}
		return true
	})
	if st := b.sb.Stats(); st.Submissions != int64(len(claves)) || st.Duplicates != 0 {
		t.Errorf("the sandbox received %d submissions, %d duplicates", st.Submissions, st.Duplicates)
	}
}

// TestRepeatResumesAStoppedDocument: sending the same request again still
// makes a document stopped on credentials due.
func TestRepeatResumesAStoppedDocument(t *testing.T) {
	b := setup(t, setupOptions{sandbox: sandbox.Options{Faults: sandbox.Faults{TokenRefusal: 401}}, clientClock: true})
	req := request("01", "cred-repeat")
	clave := b.mustSend(t, req).Document.Clave
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	again := b.mustSend(t, req)
	if again.Estado != tenant.StateNotSentYet || again.Document.Clave != clave {
		t.Fatalf("repeat: %s clave %s", describe(again), again.Document.Clave)
	}
	if d := b.stored(t, clave); d.NextAttemptAt.IsZero() {
		t.Fatal("the repeat left the document stopped")
	}
}

// tokenCalls counts the token service's answers, granted or refused.
func tokenCalls(st sandbox.Stats) int64 {
	return st.PasswordGrants + st.RefreshGrants + st.TokenRefused
}
