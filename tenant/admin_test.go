package tenant_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"facturad/tenant"
)

func TestSetAdminCredentials(t *testing.T) {
	ctx := context.Background()
	const (
		pass  = "a-long-password-1"
		token = "0123456789abcdef0123456789abcdef"
	)
	// refused says the pair no longer logs in.
	refused := func(t *testing.T, b *bundle, cr tenant.Credentials) {
		t.Helper()
		if _, err := b.svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); !errors.Is(err, tenant.ErrUnauthenticated) {
			t.Fatalf("old pair: err = %v, want ErrUnauthenticated", err)
		}
	}

	t.Run("ok/configured values take effect on an existing admin", func(t *testing.T) {
		b := newBundle(t, bundleOpts{}) // generated "admin", logged in: cached
		old := b.adminCr
		ch, err := b.svc.SetAdminCredentials(ctx, "", pass, token, false)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Created || !ch.PasswordSet || !ch.TokenSet || len(ch.Generated) != 0 {
			t.Fatalf("change %+v", ch)
		}
		refused(t, b, old)
		if p := b.login(t, tenant.Credentials{Usuario: "admin", Contrasena: pass, APIToken: token}); p.Role != tenant.RoleAdmin {
			t.Fatalf("principal %+v", p)
		}
		again, err := b.svc.SetAdminCredentials(ctx, "", pass, token, false)
		if err != nil || again.Changed() {
			t.Fatalf("same values again: %+v, %v", again, err)
		}
	})
	t.Run("ok/password alone keeps the token", func(t *testing.T) {
		b := newBundle(t, bundleOpts{})
		ch, err := b.svc.SetAdminCredentials(ctx, "", pass, "", false)
		if err != nil || !ch.PasswordSet || ch.TokenSet || ch.Credentials.APIToken != "" {
			t.Fatalf("change %+v, %v", ch, err)
		}
		b.login(t, tenant.Credentials{Usuario: "admin", Contrasena: pass, APIToken: b.adminCr.APIToken})
	})
	t.Run("ok/reset generates what is not given and reactivates", func(t *testing.T) {
		b := newBundle(t, bundleOpts{})
		u, err := b.store.APIUserByUsername(ctx, 0, "admin")
		if err != nil {
			t.Fatal(err)
		}
		if err := b.store.SetAPIUserActive(ctx, u.ID, false); err != nil {
			t.Fatal(err)
		}
		ch, err := b.svc.SetAdminCredentials(ctx, "", "", "", true)
		if err != nil {
			t.Fatal(err)
		}
		if !ch.PasswordSet || !ch.TokenSet || !ch.Reactivated || !slices.Equal(ch.Generated, []string{"contrasena", "apiToken"}) {
			t.Fatalf("change %+v", ch)
		}
		if ch.Credentials.Contrasena == b.adminCr.Contrasena || ch.Credentials.APIToken == b.adminCr.APIToken {
			t.Fatal("reset kept an old secret")
		}
		refused(t, b, b.adminCr)
		b.login(t, ch.Credentials)
	})
	t.Run("ok/absent admin is created", func(t *testing.T) {
		b := newBundle(t, bundleOpts{})
		ch, err := b.svc.SetAdminCredentials(ctx, "ops", pass, "", false)
		if err != nil || !ch.Created || !slices.Equal(ch.Generated, []string{"apiToken"}) || ch.Credentials.Contrasena != pass {
			t.Fatalf("change %+v, %v", ch.Generated, err)
		}
		b.login(t, ch.Credentials)
	})
	t.Run("error/weak values", func(t *testing.T) {
		b := newBundle(t, bundleOpts{})
		_, err := b.svc.SetAdminCredentials(ctx, "", "short", "short", true)
		fe := fieldErrors(t, err)
		if fe["FACTURAD_ADMIN_PASSWORD"] == nil || fe["FACTURAD_ADMIN_TOKEN"] == nil {
			t.Fatalf("errors %v", fe)
		}
		b.login(t, b.adminCr) // unchanged
	})
	t.Run("error/name of a non-admin user", func(t *testing.T) {
		b := newBundle(t, bundleOpts{})
		b.newReseller(t, "taken-name")
		if _, err := b.svc.SetAdminCredentials(ctx, "taken-name", "", "", true); !errors.Is(err, tenant.ErrConflict) {
			t.Fatalf("err = %v, want ErrConflict", err)
		}
	})
}
