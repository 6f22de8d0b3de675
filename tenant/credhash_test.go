package tenant_test

import (
	"context"
	"errors"
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

// Slow hashes run in a bounded number of slots; a check that finds none
// free in time is a *BusyError (503 with Retry-After), not a pile-up.
func TestSlowHashesAreBounded(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	ctx := context.Background()
	bh := &blockingHasher{PasswordHasher: testArgon2id, release: make(chan struct{}), entered: make(chan struct{}, 8)}
	opts := b.opts
	opts.Passwords = bh
	opts.SlowHashes = 1
	opts.SlowHashWait = 50 * time.Millisecond
	opts.Cache = authcache.NewMemory(authcache.MemoryOptions{})
	svc, err := tenant.NewService(opts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var firstErr error
	go func() {
		defer wg.Done()
		_, firstErr = svc.Authenticate(ctx, b.adminCr.APIToken, b.adminCr.Usuario, "wrong-password-1")
	}()
	<-bh.entered // the only slot is taken
	_, err = svc.Authenticate(ctx, b.adminCr.APIToken, b.adminCr.Usuario, "wrong-password-2")
	var busy *tenant.BusyError
	if !errors.As(err, &busy) || busy.HTTPStatus() != 503 || busy.RetryAfter() <= 0 {
		t.Errorf("second slow check while the slot is taken: %v, want a *BusyError", err)
	}
	close(bh.release)
	wg.Wait()
	if !errors.Is(firstErr, tenant.ErrUnauthenticated) {
		t.Errorf("first check: %v", firstErr)
	}
	if len(bh.entered) != 0 {
		t.Errorf("%d slow checks ran beyond the slot", len(bh.entered))
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

// Certificate uploads run their key derivations in the same bounded slots
// as slow hashes: an upload that finds none free in time is a *BusyError,
// and a caller that has gone stops waiting.
func TestCertificateOpensAreBounded(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	ctx := context.Background()
	bo := &blockingOpener{CertificateOpener: b.opts.Certificates, entered: make(chan struct{}, 8), release: make(chan struct{})}
	opts := b.opts
	opts.Certificates = bo
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
		_, firstErr = svc.CreateCompany(ctx, b.admin, companyInput(t, "3101123456"))
	}()
	<-bo.entered // the only slot is taken
	var busy *tenant.BusyError
	if _, err := svc.CreateCompany(ctx, b.admin, companyInput(t, "3101654321")); !errors.As(err, &busy) {
		t.Errorf("an upload while the slot is taken: %v, want a *BusyError", err)
	}
	close(bo.release)
	wg.Wait()
	if firstErr != nil {
		t.Errorf("the first upload: %v", firstErr)
	}
	if len(bo.entered) != 0 {
		t.Errorf("%d certificate opens ran beyond the slot", len(bo.entered))
	}
	// The slot is free now, but a caller that has gone starts nothing.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := svc.CreateCompany(gone, b.admin, companyInput(t, "3101654321")); !errors.As(err, &busy) {
		t.Errorf("an upload whose caller left: %v, want a *BusyError", err)
	}
	if len(bo.entered) != 0 {
		t.Error("an upload whose caller left opened its certificate")
	}
}
