package client_test

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/gateway"
	"facturad/gateway/openapicheck"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/registry"
	"facturad/hacienda/sandbox"
	"facturad/pipeline"
	"facturad/pipeline/export"
	"facturad/signer"
	"facturad/tenant"
	"facturad/tenant/authcache"
	"facturad/tenant/certopen"
	"facturad/tenant/printed"
	"facturad/tenant/seal"
	"facturad/tenant/sqlite"
)

// The examples and tests run against the real service, started once for
// the package in process: the gateway over the tenant service on the
// embedded SQLite store, the document pipeline and the built-in
// tax-authority sandbox, wired as `facturad serve` wires them.

// The service the examples call, and its admin API user. In a program of
// your own these are your service's base URL and the credentials you were
// given.
var (
	serviceURL string
	adminUser  = "admin"
	adminPass  = "admin-password-for-examples"
	adminToken = "admin-token-for-the-examples-0123456789"
)

// testSandbox is the service's tax-authority sandbox, whose faults a test
// may set (to have a document rejected) and must clear.
var testSandbox *sandbox.Sandbox

// testService is a started service and how to stop it.
type testService struct {
	url   string
	stops []func(context.Context) error
}

func (s *testService) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := len(s.stops) - 1; i >= 0; i-- {
		_ = s.stops[i](ctx)
	}
}

// startService starts the whole service with its data in dir.
func startService(ctx context.Context, dir string) (_ *testService, err error) {
	s := &testService{}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := prometheus.NewRegistry()

	store, err := sqlite.Open(ctx, filepath.Join(dir, "facturad.db"), sqlite.Options{})
	if err != nil {
		return nil, err
	}
	s.stops = append(s.stops, func(context.Context) error { return store.Close() })
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	sealer, err := seal.New(key)
	if err != nil {
		return nil, err
	}
	tenants, err := tenant.NewService(tenant.ServiceOptions{
		Store: store, Sealer: sealer, Certificates: certopen.Opener{}, Logger: log,
		// Cheap parameters: the tests create many users.
		Passwords: tenant.Argon2id{Memory: 64, Time: 1, Threads: 1},
	})
	if err != nil {
		return nil, err
	}
	if _, _, err := tenants.EnsureAdmin(ctx, adminUser, adminPass, adminToken); err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}

	answers, err := sandbox.DefaultAnswerSigner()
	if err != nil {
		return nil, err
	}
	checks := sandbox.DefaultChecks()
	sbToken := make([]byte, 16)
	if _, err := rand.Read(sbToken); err != nil {
		return nil, err
	}
	sb, err := sandbox.Listen("127.0.0.1:0", sandbox.Options{
		Logger: log, AnswerSigner: answers, Checks: &checks, AdminToken: hex.EncodeToString(sbToken),
	})
	if err != nil {
		return nil, err
	}
	s.stops = append(s.stops, sb.Close)
	testSandbox = sb.Sandbox
	hc, err := recepcion.New(recepcion.Options{
		Environment: recepcion.Environment("sandbox"), APIURL: sb.APIURL(), TokenURL: sb.TokenURL(),
		Logger: log, Registerer: reg,
	})
	if err != nil {
		return nil, err
	}
	s.stops = append(s.stops, hc.Close)
	certs, err := signer.NewCache(signer.CacheOptions{Source: tenants})
	if err != nil {
		return nil, err
	}
	rc, err := registry.NewClient(registry.ClientOptions{BaseURL: sb.RegistryURL()})
	if err != nil {
		return nil, err
	}
	registries, err := registry.New(registry.Options{Client: rc, Cache: authcache.NewMemory(authcache.MemoryOptions{}), Logger: log})
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(answers.Root())
	docs, err := pipeline.New(pipeline.Options{
		Store: store, Issuers: tenants, Signer: certs, Submitter: hc,
		Limiter: pipeline.NewTokenBucket(50, 50), Logger: log, Registerer: reg, AnswerRoots: roots,
		// An accepted document's e-mail is written to the outbox; no
		// mailer sends it here, so it stays pending.
		Email:    true,
		Registry: registries, RegistryChecks: registry.PolicyRefuse,
	})
	if err != nil {
		return nil, err
	}
	if err := docs.Start(ctx); err != nil {
		return nil, err
	}
	s.stops = append(s.stops, func(ctx context.Context) error {
		return errors.Join(docs.Stop(ctx), docs.StopAndCancel(ctx))
	})

	cursorKey := make([]byte, 32)
	if _, err := rand.Read(cursorKey); err != nil {
		return nil, err
	}
	list, err := gateway.DocumentListRoute(docs, cursorKey)
	if err != nil {
		return nil, err
	}
	audit, err := gateway.AuditRoute(tenants, cursorKey)
	if err != nil {
		return nil, err
	}
	exporter, err := export.New(export.Options{Companies: tenants, Documents: store, Received: store, Logger: log})
	if err != nil {
		return nil, err
	}
	operators, err := gateway.OperatorRoutes(tenants, cursorKey)
	if err != nil {
		return nil, err
	}
	gw, err := gateway.New(gateway.Options{
		Tenants: tenants, Ready: gateway.ReadyFunc(store.Ping), Logger: log, Registerer: reg,
		Routes: append(append(append(append(append(gateway.DocumentRoutes(docs, nil, printed.Printer{}), gateway.ReceivedRoutes(docs, nil, printed.Printer{})...), list, audit, gateway.CalculateRoute()),
			append(append(gateway.EmailRoutes(docs, tenants), gateway.RegistryRoutes(registries)...), gateway.ConnectionTestRoute(docs))...), operators...),
			append(append(gateway.UsageRoutes(tenants), gateway.IVARoute(tenants), gateway.ExportRoute(exporter)), gateway.DerivedRoutes(docs)...)...),
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() { _ = gw.Serve(ln) }()
	s.stops = append(s.stops, gw.ShutdownNow)
	s.url = "http://" + ln.Addr().String()
	return s, nil
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "client-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	svc, err := startService(context.Background(), dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "start the service: %v\n", err)
		return 1
	}
	defer svc.close()
	// Every call of the tests and examples goes through a proxy that
	// holds it to the service's OpenAPI document.
	proxy, disagreements, err := checkingProxy(svc.url)
	if err != nil {
		fmt.Fprintf(os.Stderr, "the OpenAPI checker: %v\n", err)
		return 1
	}
	defer proxy.Close()
	serviceURL = proxy.URL
	// Every error answer the tests draw is held to the message catalogue.
	watch := gateway.WatchCatalogue()
	code := m.Run()
	if problems := watch.Stop(); len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d error answers are not wholly of the message catalogue:\n", len(problems))
		for _, p := range problems {
			fmt.Fprintf(os.Stderr, "  %s\n", p)
		}
		return 1
	}
	if errs := disagreements(); len(errs) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d calls disagree with the OpenAPI document:\n", len(errs))
		for _, e := range errs {
			fmt.Fprintf(os.Stderr, "  %v\n", e)
		}
		return 1
	}
	return code
}

// checkingProxy is a reverse proxy to target that checks every call
// against the OpenAPI document the service serves; disagreements returns
// what it found.
func checkingProxy(target string) (srv *httptest.Server, disagreements func() []error, err error) {
	doc, err := gateway.OpenAPI()
	if err != nil {
		return nil, nil, err
	}
	checker, err := openapicheck.New(context.Background(), doc)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, nil, err
	}
	var (
		mu   sync.Mutex
		errs []error
	)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = checker.Transport(nil, func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	})
	return httptest.NewServer(rp), func() []error {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(errs)
	}, nil
}
