package tenant_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"facturad/tenant"
	"facturad/tenant/authcache"
)

// backoffService is a replica of b's service with its own cache and a
// clock the test moves.
func backoffService(t *testing.T, b *bundle) (*tenant.Service, *atomic.Int64, *authcache.Memory) {
	t.Helper()
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC).UnixNano())
	opts := b.opts
	cache := authcache.NewMemory(authcache.MemoryOptions{})
	opts.Cache = cache
	opts.Now = func() time.Time { return time.Unix(0, now.Load()) }
	svc, err := tenant.NewService(opts)
	if err != nil {
		t.Fatal(err)
	}
	return svc, &now, cache
}

func throttled(err error) (time.Duration, bool) {
	var te *tenant.ThrottledError
	if errors.As(err, &te) && te.HTTPStatus() == 429 {
		return te.RetryAfter(), true
	}
	return 0, false
}

// TestFailedAuthenticationBacksOffPerUser: after UserFailuresAllowed wrong
// passwords on one token, the cold path is refused (even with the right
// password) for a wait that doubles with each failure; a client with
// generated credentials whose pair is already cached is not affected, and
// guesses against that cached pair do not count; the wait ends.
func TestFailedAuthenticationBacksOffPerUser(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	svc, now, cache := backoffService(t, b)
	ctx := tenant.WithClientAddr(context.Background(), "192.0.2.10")
	cr := b.newCompany(t, b.admin, "3101555111").creds
	attacker := tenant.WithClientAddr(context.Background(), "198.51.100.7")
	guess := func(n int) error {
		_, err := svc.Authenticate(attacker, cr.APIToken, cr.Usuario, "guess-"+strconv.Itoa(n))
		return err
	}
	for i := range tenant.UserFailuresAllowed + 1 {
		if err := guess(i); !errors.Is(err, tenant.ErrUnauthenticated) {
			t.Fatalf("guess %d: %v, want ErrUnauthenticated", i, err)
		}
	}
	// One failure over the allowed ones: a wait of 1 s.
	if wait, ok := throttled(guess(100)); !ok || wait != time.Second {
		t.Fatalf("after the allowed failures: wait %v, %v; want a 429 of 1s", wait, ok)
	}
	// The cold path waits even with the right password: a cache flush
	// must not turn into a free guess.
	if _, err := svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); err == nil {
		t.Fatal("the cold path was open during the backoff")
	} else if _, ok := throttled(err); !ok {
		t.Fatalf("cold path during the backoff: %v, want a 429", err)
	}
	now.Add(int64(time.Second))
	// The client logs in after the wait; its pair is cached.
	if _, err := svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); err != nil {
		t.Fatalf("after the wait: %v", err)
	}
	// Guesses against the cached pair (cheap, and hopeless against a
	// generated password) are refused and not counted: they cannot lock
	// the working client out of its next cold login.
	for i := range 10 {
		if err := guess(101 + i); !errors.Is(err, tenant.ErrUnauthenticated) {
			t.Fatalf("guess against the cached pair: %v", err)
		}
	}
	if _, err := svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); err != nil {
		t.Fatalf("the cached client during the guesses: %v", err)
	}
	sum := sha256.Sum256([]byte(cr.APIToken))
	if err := cache.Delete(ctx, hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
	// Without the cached pair, guesses count again: the next one is
	// checked, the one after it doubles the wait.
	if err := guess(200); !errors.Is(err, tenant.ErrUnauthenticated) {
		t.Fatalf("first cold guess after the warm ones: %v, want it checked (warm guesses are not counted)", err)
	}
	if wait, ok := throttled(guess(201)); !ok || wait != 2*time.Second {
		t.Fatalf("after one more failure: wait %v, %v; want a 429 of 2s", wait, ok)
	}
	now.Add(int64(2 * time.Second))
	if err := guess(202); !errors.Is(err, tenant.ErrUnauthenticated) {
		t.Fatalf("after the wait: %v, want the password checked again", err)
	}
}

// TestFailedAuthenticationBacksOffPerAddress: one address trying many
// tokens is refused after AddrFailuresAllowed failures; another address
// is not.
func TestFailedAuthenticationBacksOffPerAddress(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	svc, now, _ := backoffService(t, b)
	scanner := tenant.WithClientAddr(context.Background(), "203.0.113.5")
	for i := range tenant.AddrFailuresAllowed + 1 {
		token := "not-a-token-" + strconv.Itoa(i)
		if _, err := svc.Authenticate(scanner, token, "nobody", "nothing"); !errors.Is(err, tenant.ErrUnauthenticated) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	cr := b.adminCr
	if _, err := svc.Authenticate(scanner, cr.APIToken, cr.Usuario, cr.Contrasena); err == nil {
		t.Fatal("the scanning address was let through the cold path")
	} else if _, ok := throttled(err); !ok {
		t.Fatalf("scanning address: %v, want a 429", err)
	}
	other := tenant.WithClientAddr(context.Background(), "203.0.113.6")
	if _, err := svc.Authenticate(other, cr.APIToken, cr.Usuario, cr.Contrasena); err != nil {
		t.Fatalf("another address: %v", err)
	}
	now.Add(int64(tenant.AddrMaxWait))
	if _, err := svc.Authenticate(scanner, "not-a-token-again", "nobody", "nothing"); !errors.Is(err, tenant.ErrUnauthenticated) {
		t.Fatalf("after the longest wait: %v", err)
	}
}

// TestAdminBackoffHoldsWhenWarm: an admin's password may be a person's
// choice, so guesses against a cached admin pair back off too.
func TestAdminBackoffHoldsWhenWarm(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	svc, _, _ := backoffService(t, b)
	cr := b.adminCr
	ctx := tenant.WithClientAddr(context.Background(), "192.0.2.10")
	if _, err := svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); err != nil {
		t.Fatal(err)
	}
	for i := range tenant.UserFailuresAllowed + 1 {
		if _, err := svc.Authenticate(ctx, cr.APIToken, cr.Usuario, "guess-"+strconv.Itoa(i)); !errors.Is(err, tenant.ErrUnauthenticated) {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if _, err := svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); err == nil {
		t.Fatal("the right admin password passed during the backoff: guesses are not rate-limited")
	} else if _, ok := throttled(err); !ok {
		t.Fatalf("warm admin during the backoff: %v, want a 429", err)
	}
}

// TestBackoffWaitsAreCapped: a user's wait doubles up to FailureWindow, an
// address's up to AddrMaxWait, however long the guessing goes on.
func TestBackoffWaitsAreCapped(t *testing.T) {
	for _, tc := range []struct {
		name    string
		allowed int
		max     time.Duration
		attempt func(svc *tenant.Service, b *bundle, i int) error
	}{
		{"user", tenant.UserFailuresAllowed, tenant.FailureWindow, func(svc *tenant.Service, b *bundle, i int) error {
			ctx := tenant.WithClientAddr(context.Background(), "198.51.100."+strconv.Itoa(i%200)) // spread over addresses
			_, err := svc.Authenticate(ctx, b.adminCr.APIToken, b.adminCr.Usuario, "guess-"+strconv.Itoa(i))
			return err
		}},
		{"address", tenant.AddrFailuresAllowed, tenant.AddrMaxWait, func(svc *tenant.Service, b *bundle, i int) error {
			ctx := tenant.WithClientAddr(context.Background(), "203.0.113.9")
			_, err := svc.Authenticate(ctx, "not-a-token-"+strconv.Itoa(i), "nobody", "nothing")
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBundle(t, bundleOpts{})
			svc, now, _ := backoffService(t, b)
			i := 0
			for ; i < tc.allowed; i++ {
				if err := tc.attempt(svc, b, i); !errors.Is(err, tenant.ErrUnauthenticated) {
					t.Fatalf("attempt %d: %v", i, err)
				}
			}
			// Each further failure, made once the wait is over, doubles the
			// wait until the cap.
			want := time.Second
			for round := 0; round < 16; round++ {
				if err := tc.attempt(svc, b, i); !errors.Is(err, tenant.ErrUnauthenticated) {
					t.Fatalf("round %d: %v, want the password checked after the wait", round, err)
				}
				i++
				wait, ok := throttled(tc.attempt(svc, b, i))
				if !ok || wait != want {
					t.Fatalf("round %d: wait %v (%v), want %v", round, wait, ok, want)
				}
				now.Add(int64(wait))
				want = min(2*want, tc.max)
			}
			if want != tc.max {
				t.Fatalf("the wait never reached its cap %v", tc.max)
			}
		})
	}
}
