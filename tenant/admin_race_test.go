package tenant_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"facturad/tenant"
	"facturad/tenant/storetest"
)

// barrierStore holds the first n user reads until all n are made, so
// that n replicas starting together all read the bootstrap admin before
// any of them writes it: the race of a concurrent start, made certain.
type barrierStore struct {
	tenant.Store
	n       int32
	arrived atomic.Int32
	all     chan struct{}
}

func newBarrierStore(s tenant.Store, n int) *barrierStore {
	return &barrierStore{Store: s, n: int32(n), all: make(chan struct{})}
}

func (b *barrierStore) APIUserByUsername(ctx context.Context, companyID int64, username string) (tenant.APIUser, error) {
	// The read is made first and answered only when every replica has
	// made its own: none has written anything by then.
	u, err := b.Store.APIUserByUsername(ctx, companyID, username)
	switch k := b.arrived.Add(1); {
	case k < b.n:
		select {
		case <-b.all:
		case <-ctx.Done():
			return tenant.APIUser{}, ctx.Err()
		}
	case k == b.n:
		close(b.all)
	}
	return u, err
}

// together runs f for each of n replicas (Services on one store, each
// its own cache) at once and returns their errors.
func together(t *testing.T, b *bundle, store tenant.Store, n int, f func(i int, s *tenant.Service) error) []error {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		opts := b.opts
		opts.Store = store
		svc, err := tenant.NewService(opts)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { errs[i] = f(i, svc) })
	}
	wg.Wait()
	return errs
}

// Replicas that start together with no admin, or with newly configured
// admin credentials, all start: the bootstrap is idempotent under
// concurrency, on both stores. Different configured values are still a
// conflict.
func TestBootstrapAdminTogether(t *testing.T) {
	ctx := context.Background()
	const (
		n     = 3
		pass  = "configured-password-1"
		token = "configured-token-0123456789abcdef0123"
	)
	stores := map[string]func(*testing.T) tenant.Store{
		"sqlite":   func(t *testing.T) tenant.Store { return storetest.NewSQLite(t) },
		"postgres": func(t *testing.T) tenant.Store { return storetest.NewPostgres(t) },
	}
	for name, newStore := range stores {
		t.Run("ok/"+name+"/no admin yet", func(t *testing.T) {
			b := newBundle(t, bundleOpts{store: newStore(t)})
			var created atomic.Int32
			var creds tenant.Credentials
			errs := together(t, b, newBarrierStore(b.store, n), n, func(_ int, s *tenant.Service) error {
				cr, made, err := s.EnsureAdmin(ctx, "ops", "", "")
				if made {
					created.Add(1)
					creds = cr
				}
				return err
			})
			for i, err := range errs {
				if err != nil {
					t.Errorf("replica %d: %v", i, err)
				}
			}
			if created.Load() != 1 {
				t.Fatalf("%d replicas created the admin, want 1", created.Load())
			}
			if p := b.login(t, creds); p.Role != tenant.RoleAdmin {
				t.Fatalf("principal %+v", p)
			}
		})
		t.Run("ok/"+name+"/the same configured credentials", func(t *testing.T) {
			b := newBundle(t, bundleOpts{store: newStore(t)})
			var set atomic.Int32
			errs := together(t, b, newBarrierStore(b.store, n), n, func(_ int, s *tenant.Service) error {
				ch, err := s.SetAdminCredentials(ctx, "", pass, token, false)
				if ch.PasswordSet {
					set.Add(1)
				}
				return err
			})
			for i, err := range errs {
				if err != nil {
					t.Errorf("replica %d: %v", i, err)
				}
			}
			if set.Load() < 1 {
				t.Error("no replica set the password")
			}
			b.login(t, tenant.Credentials{Usuario: "admin", Contrasena: pass, APIToken: token})
		})
		t.Run("ok/"+name+"/created together with configured credentials", func(t *testing.T) {
			b := newBundle(t, bundleOpts{store: newStore(t)})
			errs := together(t, b, newBarrierStore(b.store, n), n, func(_ int, s *tenant.Service) error {
				_, err := s.SetAdminCredentials(ctx, "ops", pass, token, false)
				return err
			})
			for i, err := range errs {
				if err != nil {
					t.Errorf("replica %d: %v", i, err)
				}
			}
			b.login(t, tenant.Credentials{Usuario: "ops", Contrasena: pass, APIToken: token})
		})
		t.Run("error/"+name+"/different configured passwords", func(t *testing.T) {
			b := newBundle(t, bundleOpts{store: newStore(t)})
			passes := []string{"first-password-123", "second-password-12"}
			errs := together(t, b, newBarrierStore(b.store, 2), 2, func(i int, s *tenant.Service) error {
				_, err := s.SetAdminCredentials(ctx, "", passes[i], "", false)
				return err
			})
			var won []string
			for i, err := range errs {
				switch {
				case err == nil:
					won = append(won, passes[i])
				case !errors.Is(err, tenant.ErrConflict):
					t.Errorf("replica %d: %v, want ErrConflict", i, err)
				}
			}
			if len(won) != 1 {
				t.Fatalf("%d replicas set their password: %v", len(won), errs)
			}
			b.login(t, tenant.Credentials{Usuario: "admin", Contrasena: won[0], APIToken: b.adminCr.APIToken})
		})
	}
}
