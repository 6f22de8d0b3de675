package tenant_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/tenant"
	"facturad/tenant/authcache"
)

var testCredKey = []byte("0123456789abcdef0123456789abcdef")

// Generated passwords are stored as HMAC with a credential key: creating
// and logging in run no slow hash; the admin's stays Argon2id.
func TestGeneratedPasswordsUseTheFastHash(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	ctx := context.Background()
	opts := b.opts
	opts.CredentialKey = testCredKey
	opts.Cache = authcache.NewMemory(authcache.MemoryOptions{})
	svc, err := tenant.NewService(opts)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := svc.CreateCompany(ctx, b.admin, companyInput(t, "3101123456"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := b.store.APIUserByUsername(ctx, cc.Company.ID, cc.Credentials.Usuario)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u.PasswordHash, "$hmac-sha256$") {
		t.Fatalf("a generated password is stored as %.20q…, want the HMAC form", u.PasswordHash)
	}
	before := b.hasher.verifies.Load()
	if _, err := svc.Authenticate(ctx, cc.Credentials.APIToken, cc.Credentials.Usuario, cc.Credentials.Contrasena); err != nil {
		t.Fatalf("login: %v", err)
	}
	if _, err := svc.Authenticate(ctx, cc.Credentials.APIToken, cc.Credentials.Usuario, "wrong-password-123"); !errors.Is(err, tenant.ErrUnauthenticated) {
		t.Fatalf("wrong password: %v", err)
	}
	if n := b.hasher.verifies.Load() - before; n != 0 {
		t.Errorf("%d slow hashes for a generated password's logins", n)
	}
	admin, err := b.store.APIUserByUsername(ctx, 0, b.adminCr.Usuario)
	if err != nil || !strings.HasPrefix(admin.PasswordHash, "$argon2id$") {
		t.Errorf("the admin's hash: %.12q…, %v; want Argon2id", admin.PasswordHash, err)
	}
}

// A generated password stored under Argon2id by an earlier version is
// re-stored as HMAC on its next successful login; the next cold login runs
// no slow hash.
func TestArgon2HashesMigrateOnUse(t *testing.T) {
	b := newBundle(t, bundleOpts{}) // no credential key: Argon2id, as before
	ctx := context.Background()
	f := b.newCompany(t, b.admin, "3101123456")
	u, _ := b.store.APIUserByUsername(ctx, f.created.ID, f.creds.Usuario)
	if !strings.HasPrefix(u.PasswordHash, "$argon2id$") {
		t.Fatalf("without a credential key the hash is %.12q…", u.PasswordHash)
	}
	replica := func() *tenant.Service {
		opts := b.opts
		opts.CredentialKey = testCredKey
		opts.Cache = authcache.NewMemory(authcache.MemoryOptions{}) // cold
		svc, err := tenant.NewService(opts)
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	if _, err := replica().Authenticate(ctx, f.creds.APIToken, f.creds.Usuario, f.creds.Contrasena); err != nil {
		t.Fatalf("login with the old hash: %v", err)
	}
	u, _ = b.store.APIUserByUsername(ctx, f.created.ID, f.creds.Usuario)
	if !strings.HasPrefix(u.PasswordHash, "$hmac-sha256$") {
		t.Fatalf("after a login the hash is %.12q…, want it re-stored as HMAC", u.PasswordHash)
	}
	before := b.hasher.verifies.Load()
	if _, err := replica().Authenticate(ctx, f.creds.APIToken, f.creds.Usuario, f.creds.Contrasena); err != nil {
		t.Fatalf("login with the new hash: %v", err)
	}
	if n := b.hasher.verifies.Load() - before; n != 0 {
		t.Errorf("%d slow hashes after the migration", n)
	}
}

// blockingHasher holds every Verify until released.
type blockingHasher struct {
	tenant.PasswordHasher
	release chan struct{}
	entered chan struct{}
}

func (h *blockingHasher) Verify(encoded string, password []byte) (bool, error) {
	h.entered <- struct{}{}
	<-h.release
	return h.PasswordHasher.Verify(encoded, password)
}

// Slow work, the slow password hashes and the key derivations of an
// uploaded certificate, runs in a bounded number of slots: a call that finds
// none free in time is a *BusyError (503 with Retry-After), not a pile-up,
// and a caller that has gone starts nothing even when a slot is free.
func TestSlowWorkIsBounded(t *testing.T) {
	tests := []struct {
		name  string
		block func(o *tenant.ServiceOptions, b *bundle, entered, release chan struct{})
		call  func(t *testing.T, ctx context.Context, b *bundle, svc *tenant.Service, i int) error
		first func(err error) bool // what the call that held the slot returns
		// goneBusy: a caller that has gone gets a *BusyError (an
		// authentication stops earlier, at its store read).
		goneBusy bool
	}{
		{"slow password checks", func(o *tenant.ServiceOptions, b *bundle, entered, release chan struct{}) {
			o.Passwords = &blockingHasher{PasswordHasher: testArgon2id, release: release, entered: entered}
			o.Cache = authcache.NewMemory(authcache.MemoryOptions{})
		}, func(t *testing.T, ctx context.Context, b *bundle, svc *tenant.Service, i int) error {
			_, err := svc.Authenticate(ctx, b.adminCr.APIToken, b.adminCr.Usuario, "wrong-password-"+strconv.Itoa(i))
			return err
		}, func(err error) bool { return errors.Is(err, tenant.ErrUnauthenticated) }, false},
		{"certificate opens", func(o *tenant.ServiceOptions, b *bundle, entered, release chan struct{}) {
			o.Certificates = &blockingOpener{CertificateOpener: b.opts.Certificates, entered: entered, release: release}
		}, func(t *testing.T, ctx context.Context, b *bundle, svc *tenant.Service, i int) error {
			_, err := svc.CreateCompany(ctx, b.admin, companyInput(t, []string{"3101123456", "3101654321", "3101777888"}[i]))
			return err
		}, func(err error) bool { return err == nil }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBundle(t, bundleOpts{})
			ctx := context.Background()
			entered, release := make(chan struct{}, 8), make(chan struct{})
			opts := b.opts
			tt.block(&opts, b, entered, release)
			opts.SlowHashes = 1
			opts.SlowHashWait = 50 * time.Millisecond
			svc, err := tenant.NewService(opts)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Add(1)
			var firstErr error
			go func() {
				defer wg.Done()
				firstErr = tt.call(t, ctx, b, svc, 0)
			}()
			<-entered // the only slot is taken
			var busy *tenant.BusyError
			if err := tt.call(t, ctx, b, svc, 1); !errors.As(err, &busy) || busy.HTTPStatus() != 503 || busy.RetryAfter() <= 0 {
				t.Errorf("a second call while the slot is taken: %v, want a *BusyError", err)
			}
			close(release)
			wg.Wait()
			if !tt.first(firstErr) {
				t.Errorf("the call that held the slot: %v", firstErr)
			}
			if len(entered) != 0 {
				t.Errorf("%d slow calls ran beyond the slot", len(entered))
			}
			// The slot is free now, but a caller that has gone starts nothing.
			gone, cancel := context.WithCancel(ctx)
			cancel()
			if err := tt.call(t, gone, b, svc, 2); err == nil || (tt.goneBusy && !errors.As(err, &busy)) {
				t.Errorf("a call whose caller left: %v, want it refused", err)
			}
			if len(entered) != 0 {
				t.Error("a call whose caller left started its slow work")
			}
		})
	}
}

// blockingOpener holds certificate opens until released.
type blockingOpener struct {
	tenant.CertificateOpener
	entered, release chan struct{}
}

func (o *blockingOpener) OpenCertificate(p12, pin []byte) (tenant.CertificateInfo, error) {
	o.entered <- struct{}{}
	<-o.release
	return o.CertificateOpener.OpenCertificate(p12, pin)
}
