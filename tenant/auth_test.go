package tenant_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"facturad/tenant"
	"facturad/tenant/authcache"
	"facturad/tenant/storetest"
)

// newRedisCache returns a cache on TEST_REDIS_URL under a key prefix of its
// own, whose keys are removed when the test ends.
func newRedisCache(t testing.TB) (*authcache.Redis, *redis.Client, string) {
	t.Helper()
	client := redisClient(t, storetest.RedisURL(t))
	prefix := "facturad-test:" + storetest.UniqueName(t) + ":"
	c, err := authcache.NewRedis(client, authcache.RedisOptions{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
	})
	return c, client, prefix
}

func redisClient(t testing.TB, url string) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	o.ContextTimeoutEnabled = true
	o.MaxRetries = -1
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

type cacheCase struct {
	name string
	make func(t *testing.T) tenant.AuthCache
}

func cacheCases() []cacheCase {
	return []cacheCase{
		{"memory", func(t *testing.T) tenant.AuthCache { return authcache.NewMemory(authcache.MemoryOptions{}) }},
		{"redis", func(t *testing.T) tenant.AuthCache { c, _, _ := newRedisCache(t); return c }},
	}
}

func TestAuthenticate(t *testing.T) {
	for _, cc := range cacheCases() {
		t.Run(cc.name, func(t *testing.T) {
			b := newBundle(t, bundleOpts{cache: cc.make(t)})
			ctx := context.Background()
			f := b.newCompany(t, b.admin, "3101123456")
			g := b.newCompany(t, b.admin, "3101654321")
			cr := f.creds
			tests := []struct {
				name              string
				token, user, pass string
				wantErr           error
				wantUser          int64
			}{
				{"ok/branch user", cr.APIToken, cr.Usuario, cr.Contrasena, nil, f.user.UserID},
				{"ok/admin", b.adminCr.APIToken, b.adminCr.Usuario, b.adminCr.Contrasena, nil, b.admin.UserID},
				{"error/wrong password", cr.APIToken, cr.Usuario, cr.Contrasena + "x", tenant.ErrUnauthenticated, 0},
				{"error/wrong user name", cr.APIToken, "someone-else", cr.Contrasena, tenant.ErrUnauthenticated, 0},
				{"error/unknown token", cr.APIToken + "x", cr.Usuario, cr.Contrasena, tenant.ErrUnauthenticated, 0},
				{"error/token of another user", g.creds.APIToken, cr.Usuario, cr.Contrasena, tenant.ErrUnauthenticated, 0},
				{"error/pair of another user", cr.APIToken, g.creds.Usuario, g.creds.Contrasena, tenant.ErrUnauthenticated, 0},
				{"error/empty token", "", cr.Usuario, cr.Contrasena, tenant.ErrUnauthenticated, 0},
				{"error/empty password", cr.APIToken, cr.Usuario, "", tenant.ErrUnauthenticated, 0},
				{"error/empty user", cr.APIToken, "", cr.Contrasena, tenant.ErrUnauthenticated, 0},
			}
			// Twice: the first round is cold or warm depending on order, the
			// second is warm for every good pair; both must agree.
			for round := range 2 {
				for _, tt := range tests {
					t.Run(tt.name, func(t *testing.T) {
						p, err := b.svc.Authenticate(ctx, tt.token, tt.user, tt.pass)
						if !errors.Is(err, tt.wantErr) {
							t.Fatalf("round %d: err = %v, want %v", round, err, tt.wantErr)
						}
						if p.UserID != tt.wantUser {
							t.Fatalf("round %d: user %d, want %d", round, p.UserID, tt.wantUser)
						}
					})
				}
			}
		})
	}
}

func TestAuthenticateWarmPathSkipsSlowHash(t *testing.T) {
	for _, cc := range cacheCases() {
		t.Run(cc.name, func(t *testing.T) {
			b := newBundle(t, bundleOpts{cache: cc.make(t)})
			ctx := context.Background()
			f := b.newCompany(t, b.admin, "3101123456")
			cr := f.creds
			b.hasher.verifies.Store(0)
			b.svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena) // warm from newCompany's login
			for range 100 {
				p, err := b.svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena)
				if err != nil || p.UserID != f.user.UserID || p.CompanyID != f.created.ID ||
					p.BranchID != f.created.Branch.ID || p.Role != tenant.RoleBranch || p.Username != cr.Usuario {
					t.Fatalf("warm Authenticate = %+v, %v", p, err)
				}
			}
			if n := b.hasher.verifies.Load(); n != 0 {
				t.Fatalf("the slow hash ran %d times on a warm cache", n)
			}
			// A wrong password against a warm entry is refused without the
			// slow hash too.
			if _, err := b.svc.Authenticate(ctx, cr.APIToken, cr.Usuario, "guess"); !errors.Is(err, tenant.ErrUnauthenticated) {
				t.Fatalf("wrong password: %v", err)
			}
			if _, err := b.svc.Authenticate(ctx, cr.APIToken, "other", cr.Contrasena); !errors.Is(err, tenant.ErrUnauthenticated) {
				t.Fatalf("wrong user: %v", err)
			}
			if n := b.hasher.verifies.Load(); n != 0 {
				t.Fatalf("the slow hash ran %d times for wrong pairs on a warm entry", n)
			}
			// A cold pair runs it exactly once, then never again.
			cr2, err := b.svc.CreateAPIUser(ctx, f.user, f.created.ID, f.created.Branch.ID, "caja-9")
			if err != nil {
				t.Fatal(err)
			}
			for range 10 {
				if _, err := b.svc.Authenticate(ctx, cr2.APIToken, cr2.Usuario, cr2.Contrasena); err != nil {
					t.Fatal(err)
				}
			}
			if n := b.hasher.verifies.Load(); n != 1 {
				t.Fatalf("the slow hash ran %d times for a new pair, want 1", n)
			}
		})
	}
}

func TestAuthCacheExpires(t *testing.T) {
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cache := authcache.NewMemory(authcache.MemoryOptions{Now: clock})
	b := newBundle(t, bundleOpts{cache: cache})
	ctx := context.Background()
	cr := b.adminCr
	b.hasher.verifies.Store(0)
	if _, err := b.svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); err != nil {
		t.Fatal(err)
	}
	if n := b.hasher.verifies.Load(); n != 0 {
		t.Fatalf("warm: %d slow hashes", n)
	}
	mu.Lock()
	now = now.Add(tenant.DefaultAuthTTL + time.Second)
	mu.Unlock()
	if _, err := b.svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); err != nil {
		t.Fatal(err)
	}
	if n := b.hasher.verifies.Load(); n != 1 {
		t.Fatalf("after the TTL: %d slow hashes, want 1", n)
	}
}

// TestAuthInvalidation deactivates users, branches and companies and checks
// that warm credentials stop working at once, on this replica and on a
// second one sharing the cache.
func TestAuthInvalidation(t *testing.T) {
	for _, cc := range cacheCases() {
		t.Run(cc.name, func(t *testing.T) {
			cache := cc.make(t)
			b := newBundle(t, bundleOpts{cache: cache})
			ctx := context.Background()
			// A second replica: same store, same keys, same shared cache
			// (for memory, the same instance plays the shared cache).
			replica, err := tenant.NewService(b.opts)
			if err != nil {
				t.Fatal(err)
			}
			services := []*tenant.Service{b.svc, replica}
			warm := func(t *testing.T, cr tenant.Credentials) {
				t.Helper()
				for _, s := range services {
					if _, err := s.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); err != nil {
						t.Fatalf("before: %v", err)
					}
				}
			}
			refused := func(t *testing.T, cr tenant.Credentials) {
				t.Helper()
				for i, s := range services {
					if _, err := s.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); !errors.Is(err, tenant.ErrUnauthenticated) {
						t.Fatalf("replica %d after deactivation: %v", i, err)
					}
				}
			}
			works := func(t *testing.T, cr tenant.Credentials) {
				t.Helper()
				for i, s := range services {
					if _, err := s.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); err != nil {
						t.Fatalf("replica %d: untouched user refused: %v", i, err)
					}
				}
			}

			t.Run("user", func(t *testing.T) {
				f := b.newCompany(t, b.admin, "3101000011")
				other, err := b.svc.CreateAPIUser(ctx, f.user, f.created.ID, f.created.Branch.ID, "other-user")
				if err != nil {
					t.Fatal(err)
				}
				warm(t, f.creds)
				warm(t, other)
				if err := replica.SetAPIUserActive(ctx, b.admin, f.created.ID, f.user.UserID, false); err != nil {
					t.Fatal(err)
				}
				refused(t, f.creds)
				works(t, other)
				if err := replica.SetAPIUserActive(ctx, b.admin, f.created.ID, f.user.UserID, true); err != nil {
					t.Fatal(err)
				}
				works(t, f.creds)
			})
			t.Run("branch", func(t *testing.T) {
				f := b.newCompany(t, b.admin, "3101000012")
				b2, cr2, err := b.svc.CreateBranch(ctx, f.user, f.created.ID, branchInput("002"))
				if err != nil {
					t.Fatal(err)
				}
				warm(t, f.creds)
				warm(t, cr2)
				in := branchInput("002")
				in.Activo = "N"
				if _, err := b.svc.UpdateBranch(ctx, f.user, f.created.ID, b2.ID, in); err != nil {
					t.Fatal(err)
				}
				refused(t, cr2)
				works(t, f.creds)
			})
			t.Run("company", func(t *testing.T) {
				f := b.newCompany(t, b.admin, "3101000013")
				_, cr2, err := b.svc.CreateBranch(ctx, f.user, f.created.ID, branchInput("002"))
				if err != nil {
					t.Fatal(err)
				}
				g := b.newCompany(t, b.admin, "3101000014")
				warm(t, f.creds)
				warm(t, cr2)
				warm(t, g.creds)
				in := companyInput(t, "3101000013")
				in.Certificate, in.CertificatePIN = nil, nil
				in.Activo = "N"
				if _, err := b.svc.UpdateCompany(ctx, b.admin, f.created.ID, in); err != nil {
					t.Fatal(err)
				}
				refused(t, f.creds)
				refused(t, cr2)
				works(t, g.creds)
				// The company's owner still sees it; reactivating lets its
				// users back in.
				in.Activo = "S"
				if _, err := b.svc.UpdateCompany(ctx, b.admin, f.created.ID, in); err != nil {
					t.Fatal(err)
				}
				works(t, f.creds)
			})
		})
	}
}

// TestAuthRedisDown points the cache at a Redis that never answers and at a
// closed port: authentication still works, from the store. The caller's
// context has no deadline, so only the cache's own per-call timeout can
// end each cache call; without it this test would hang.
func TestAuthRedisDown(t *testing.T) {
	for _, target := range []struct{ name, url string }{
		{"blackhole", "redis://" + storetest.BlackholeRedis(t) + "/0"},
		{"closed port", "redis://" + storetest.ClosedAddr(t) + "/0"},
	} {
		t.Run(target.name, func(t *testing.T) {
			client := redisClient(t, target.url)
			cache, err := authcache.NewRedis(client, authcache.RedisOptions{Timeout: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			b := newBundle(t, bundleOpts{cache: cache})
			ctx := context.Background()
			f := b.newCompany(t, b.admin, "3101123456")
			start := time.Now()
			for range 3 {
				p, err := b.svc.Authenticate(ctx, f.creds.APIToken, f.creds.Usuario, f.creds.Contrasena)
				if err != nil || p.UserID != f.user.UserID {
					t.Fatalf("Authenticate with Redis down = %+v, %v", p, err)
				}
			}
			t.Logf("3 authentications with Redis %s took %v", target.name, time.Since(start))
			if _, err := b.svc.Authenticate(ctx, f.creds.APIToken, f.creds.Usuario, "wrong"); !errors.Is(err, tenant.ErrUnauthenticated) {
				t.Fatalf("wrong password with Redis down: %v", err)
			}
			// Deactivation is stored even when the cache cannot be told;
			// the store refuses the user on the next (cold) request.
			err = b.svc.SetAPIUserActive(ctx, b.admin, f.created.ID, f.user.UserID, false)
			if err == nil {
				t.Fatal("deactivation reported success although the cached credentials could not be dropped")
			}
			if _, err := b.svc.Authenticate(ctx, f.creds.APIToken, f.creds.Usuario, f.creds.Contrasena); !errors.Is(err, tenant.ErrUnauthenticated) {
				t.Fatalf("deactivated user with Redis down: %v", err)
			}
		})
	}
}

func TestNewServiceOptions(t *testing.T) {
	b := newBundle(t, bundleOpts{})
	o := b.opts
	tests := []struct {
		name string
		edit func(o *tenant.ServiceOptions)
		ok   bool
	}{
		{"ok/as given", func(o *tenant.ServiceOptions) {}, true},
		{"ok/no cache no key", func(o *tenant.ServiceOptions) { o.Cache, o.AuthKey = nil, nil }, true},
		{"error/no store", func(o *tenant.ServiceOptions) { o.Store = nil }, false},
		{"error/no sealer", func(o *tenant.ServiceOptions) { o.Sealer = nil }, false},
		{"error/no certificates", func(o *tenant.ServiceOptions) { o.Certificates = nil }, false},
		{"error/cache without key", func(o *tenant.ServiceOptions) { o.AuthKey = nil }, false},
		{"error/short key", func(o *tenant.ServiceOptions) { o.AuthKey = make([]byte, 16) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oo := o
			tt.edit(&oo)
			_, err := tenant.NewService(oo)
			if (err == nil) != tt.ok {
				t.Fatalf("NewService err = %v", err)
			}
		})
	}
}

// nullCache never keeps anything, so every Authenticate takes the cold path.
type nullCache struct{}

func (nullCache) Get(context.Context, string) ([]byte, bool, error)        { return nil, false, nil }
func (nullCache) Set(context.Context, string, []byte, time.Duration) error { return nil }
func (nullCache) Delete(context.Context, ...string) error                  { return nil }

// BenchmarkAuthenticate measures one authentication: warm on the in-process
// cache, warm on Redis, and cold with the production argon2id parameters.
func BenchmarkAuthenticate(b *testing.B) {
	run := func(b *testing.B, o bundleOpts) {
		bb := newBundle(b, o)
		ctx := context.Background()
		cr := bb.adminCr
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := bb.svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if o.cache != (nullCache{}) && bb.hasher.verifies.Load() > 1 {
			b.Fatalf("the slow hash ran %d times on a warm cache", bb.hasher.verifies.Load())
		}
	}
	b.Run("warm/memory", func(b *testing.B) {
		run(b, bundleOpts{cache: authcache.NewMemory(authcache.MemoryOptions{}), hasher: tenant.DefaultArgon2id})
	})
	b.Run("warm/redis", func(b *testing.B) {
		c, _, _ := newRedisCache(b)
		run(b, bundleOpts{cache: c, hasher: tenant.DefaultArgon2id})
	})
	b.Run("cold/argon2id-default", func(b *testing.B) {
		run(b, bundleOpts{cache: nullCache{}, hasher: tenant.DefaultArgon2id})
	})
}

// hookCache runs a hook before the first Set, to interleave a change with a
// cold authentication at the worst moment.
type hookCache struct {
	tenant.AuthCache
	hook atomic.Pointer[func()]
}

func (h *hookCache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if f := h.hook.Swap(nil); f != nil {
		(*f)()
	}
	return h.AuthCache.Set(ctx, key, value, ttl)
}

// TestAuthDeactivationRace deactivates a user after its cold verification
// passed every check but before the cache entry is written: the entry must
// not let the user in.
func TestAuthDeactivationRace(t *testing.T) {
	ctx := context.Background()
	hc := &hookCache{AuthCache: authcache.NewMemory(authcache.MemoryOptions{})}
	b := newBundle(t, bundleOpts{cache: hc})
	f := b.newCompany(t, b.admin, "3101123456")
	cr, err := b.svc.CreateAPIUser(ctx, f.user, f.created.ID, f.created.Branch.ID, "late-user")
	if err != nil {
		t.Fatal(err)
	}
	u, err := b.store.APIUserByUsername(ctx, f.created.ID, "late-user")
	if err != nil {
		t.Fatal(err)
	}
	hooked := false
	hook := func() {
		hooked = true
		if err := b.svc.SetAPIUserActive(ctx, f.user, f.created.ID, u.ID, false); err != nil {
			t.Errorf("deactivate: %v", err)
		}
	}
	hc.hook.Store(&hook)
	if _, err := b.svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); !errors.Is(err, tenant.ErrUnauthenticated) {
		t.Fatalf("authentication racing a deactivation: %v", err)
	}
	if !hooked {
		t.Fatal("the hook did not run")
	}
	if _, err := b.svc.Authenticate(ctx, cr.APIToken, cr.Usuario, cr.Contrasena); !errors.Is(err, tenant.ErrUnauthenticated) {
		t.Fatalf("after the race: %v", err)
	}
}
