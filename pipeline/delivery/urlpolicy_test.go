package delivery_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"facturad/pipeline/delivery"
	"facturad/tenant"
)

// Server-side request forgery: only https (http too in the sandbox) to
// public addresses may be registered, in every environment unless the
// sandbox's operator allows private addresses for trials.
func TestURLPolicy(t *testing.T) {
	for _, tt := range urlPolicyCases() {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.CheckWebhookURL(context.Background(), tt.url)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && err == nil:
				t.Fatal("allowed")
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("error %q, want it to say %q", err, tt.want)
			}
		})
	}
}

// urlPolicyCase is a URL and what a policy says of it.
type urlPolicyCase struct {
	name   string
	policy delivery.URLPolicy
	url    string
	want   string // "" allowed, else a part of the error
}

// urlPolicyCases are TestURLPolicy's table, also FuzzCheckWebhookURL's
// seeds.
func urlPolicyCases() []urlPolicyCase {
	strict := delivery.URLPolicy{}
	sandbox := delivery.URLPolicy{AllowHTTP: true}
	trial := delivery.URLPolicy{AllowHTTP: true, AllowPrivate: true}
	return []urlPolicyCase{
		{"ok/https public address", strict, "https://93.184.215.14/hooks", ""},
		{"ok/https public IPv6", strict, "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hooks", ""},
		{"ok/v4-mapped public address", strict, "https://[::ffff:93.184.215.14]/hooks", ""},
		{"ok/sandbox http public", sandbox, "http://93.184.215.14/hooks", ""},
		{"ok/trial http loopback", trial, "http://127.0.0.1:8080/hooks", ""},
		{"ok/trial https localhost", trial, "https://localhost/hooks", ""},
		{"ok/trial private 10", trial, "http://10.1.2.3/hooks", ""},
		{"ok/trial unique local v6", trial, "http://[fd00::1]/hooks", ""},
		{"error/http outside the sandbox", strict, "http://93.184.215.14/hooks", "must be https"},
		{"error/ftp", strict, "ftp://93.184.215.14/x", "must be https"},
		{"error/ftp in the sandbox", sandbox, "ftp://93.184.215.14/x", "must be https (http is allowed in the sandbox environment)"},
		{"error/relative", strict, "/hooks", "absolute"},
		{"error/no host", strict, "https:///hooks", "absolute"},
		{"error/user information", strict, "https://user:pw@93.184.215.14/", "user"},
		{"error/loopback v4", strict, "https://127.0.0.1/hooks", "not a public address (loopback and private addresses are allowed only for trials: a sandbox service with FACTURAD_WEBHOOK_ALLOW_PRIVATE)"},
		{"error/sandbox loopback v4", sandbox, "http://127.0.0.1:8080/hooks", "FACTURAD_WEBHOOK_ALLOW_PRIVATE"},
		{"error/sandbox localhost", sandbox, "https://localhost/hooks", "FACTURAD_WEBHOOK_ALLOW_PRIVATE"},
		{"error/sandbox private 192.168", sandbox, "http://192.168.1.10/hooks", "FACTURAD_WEBHOOK_ALLOW_PRIVATE"},
		{"error/sandbox metadata", sandbox, "http://169.254.169.254/latest/meta-data", "not a public address"},
		{"error/trial metadata", trial, "http://169.254.169.254/latest/meta-data", "not a public address"},
		{"error/trial AWS metadata v6", trial, "http://[fd00:ec2::254]/latest/meta-data", "not a public address"},
		{"ok/trial unique local v6 beside the metadata address", trial, "http://[fd00:ec2::253]/hooks", ""},
		{"error/trial link-local v6", trial, "http://[fe80::1]/hooks", "not a public address"},
		{"error/trial zoned link-local v6", trial, "http://[fe80::1%25eth0]/hooks", "not a public address"},
		{"error/trial carrier-grade NAT", trial, "http://100.64.0.1/hooks", "not a public address"},
		{"error/trial unspecified", trial, "http://0.0.0.0/hooks", "not a public address"},
		{"error/loopback other", strict, "https://127.1.2.3/hooks", "not a public address"},
		{"error/loopback v6", strict, "https://[::1]/hooks", "not a public address"},
		{"error/localhost", strict, "https://localhost:8443/hooks", "localhost"},
		{"error/sub.localhost", strict, "https://api.localhost/hooks", "localhost"},
		{"error/private 10", strict, "https://10.0.0.5/hooks", "not a public address"},
		{"error/private 172.16", strict, "https://172.20.1.1/hooks", "not a public address"},
		{"error/private 192.168", strict, "https://192.168.1.10/hooks", "not a public address"},
		{"error/link-local metadata", strict, "https://169.254.169.254/latest/meta-data", "not a public address"},
		{"error/unspecified", strict, "https://0.0.0.0/hooks", "not a public address"},
		{"error/this network", strict, "https://0.1.2.3/hooks", "not a public address"},
		{"error/multicast", strict, "https://224.0.0.1/hooks", "not a public address"},
		{"error/broadcast", strict, "https://255.255.255.255/hooks", "not a public address"},
		{"error/reserved", strict, "https://240.0.0.1/hooks", "not a public address"},
		{"error/carrier-grade NAT", strict, "https://100.64.0.1/hooks", "not a public address"},
		{"error/benchmarking", strict, "https://198.18.0.1/hooks", "not a public address"},
		{"error/documentation v4", strict, "https://192.0.2.1/hooks", "not a public address"},
		{"error/6to4 relay anycast", strict, "https://192.88.99.1/hooks", "not a public address"},
		{"error/unique local v6", strict, "https://[fd00::1]/hooks", "not a public address"},
		{"error/link-local v6", strict, "https://[fe80::1]/hooks", "not a public address"},
		{"error/zoned link-local v6", strict, "https://[fe80::1%25eth0]/hooks", "not a public address"},
		{"error/zoned v4-mapped public", strict, "https://[::ffff:93.184.215.14%25eth0]/hooks", "not a public address"},
		{"error/trial zoned v4-mapped public", trial, "http://[::ffff:1.0.0.0%250]/hooks", "not a public address"},
		{"error/trial zoned v4-mapped loopback", trial, "http://[::ffff:127.0.0.1%25lo]/hooks", "not a public address"},
		{"error/multicast v6", strict, "https://[ff02::1]/hooks", "not a public address"},
		{"error/unspecified v6", strict, "https://[::]/hooks", "not a public address"},
		{"error/v4-mapped loopback", strict, "https://[::ffff:127.0.0.1]/hooks", "not a public address"},
		{"error/v4-mapped loopback hex", strict, "https://[::ffff:7f00:1]/hooks", "not a public address"},
		{"error/v4-mapped private", strict, "https://[::ffff:10.0.0.1]/hooks", "not a public address"},
		{"error/v4-compatible loopback", strict, "https://[::7f00:1]/hooks", "not a public address"},
		{"error/v4-compatible metadata", strict, "https://[::a9fe:a9fe]/hooks", "not a public address"},
		{"error/v4-compatible public", strict, "https://[::5db8:d70e]/hooks", "not a public address"},
		{"error/v4-translated metadata", strict, "https://[::ffff:0:a9fe:a9fe]/hooks", "not a public address"},
		{"error/v4-translated public", strict, "https://[::ffff:0:5db8:d70e]/hooks", "not a public address"},
		{"error/NAT64 of loopback", strict, "https://[64:ff9b::7f00:1]/hooks", "not a public address"},
		{"error/NAT64 of a public address", strict, "https://[64:ff9b::5db8:d70e]/hooks", "not a public address"},
		{"error/local-use NAT64", strict, "https://[64:ff9b:1::1]/hooks", "not a public address"},
		{"error/discard v6", strict, "https://[100::1]/hooks", "not a public address"},
		{"error/6to4 of a private address", strict, "https://[2002:a00:1::1]/hooks", "not a public address"},
		{"error/Teredo", strict, "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hooks", "not a public address"},
		{"error/IETF protocol assignments v6", strict, "https://[2001:2::1]/hooks", "not a public address"},
		{"error/documentation v6", strict, "https://[2001:db8::1]/hooks", "not a public address"},
		{"error/documentation v6 3fff", strict, "https://[3fff::1]/hooks", "not a public address"},
		{"error/documentation v6 3fff, its last address", strict, "https://[3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff]/hooks", "not a public address"},
		{"ok/global unicast v6 past 3fff::/20", strict, "https://[3fff:1000::1]/hooks", ""},
		{"error/v4-compatible unspecified", strict, "https://[::0.0.0.1]/hooks", "not a public address"},
		{"error/v4-translated loopback", strict, "https://[::ffff:0:127.0.0.1]/hooks", "not a public address"},
		{"error/v4-mapped metadata", strict, "https://[::ffff:169.254.169.254]/hooks", "not a public address"},
		{"error/outside global unicast v6", strict, "https://[4000::1]/hooks", "not a public address"},
	}
}

// A name is resolved at registration, by a real DNS server here: a name
// that resolves to a private address and one that does not resolve at
// all get the same answer, which never names the address, so that a
// company cannot map the network's internal names; with AllowPrivate the
// private one is allowed.
func TestURLPolicyNames(t *testing.T) {
	resolver := dnsServer(t, map[string]netip.Addr{
		"internal.test.":   netip.MustParseAddr("10.20.30.40"),
		"metadata.test.":   netip.MustParseAddr("169.254.169.254"),
		"public.test.":     netip.MustParseAddr("93.184.215.14"),
		"compatible.test.": netip.MustParseAddr("::a14:1e28"),
	})
	var logged strings.Builder
	debug := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	strict := delivery.URLPolicy{Resolver: resolver, Logger: debug}
	trial := delivery.URLPolicy{AllowHTTP: true, AllowPrivate: true, Resolver: resolver}
	ctx := context.Background()
	if err := strict.CheckWebhookURL(ctx, "https://public.test/hooks"); err != nil {
		t.Fatalf("a public name refused: %v", err)
	}
	var answers []string
	for _, name := range []string{"internal.test", "metadata.test", "compatible.test", "missing.test"} {
		err := strict.CheckWebhookURL(ctx, "https://"+name+"/hooks")
		if !errors.Is(err, delivery.ErrForbiddenAddress) {
			t.Fatalf("%s: %v", name, err)
		}
		for _, leak := range []string{"10.20.30.40", "169.254", "a14:1e28", "resolves to", "cannot be resolved"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: the refusal %q tells %q", name, err, leak)
			}
		}
		if !strings.Contains(err.Error(), "the host does not resolve to a public address") {
			t.Errorf("%s: the refusal %q", name, err)
		}
		answers = append(answers, err.Error())
	}
	for _, a := range answers[1:] {
		if a != answers[0] {
			t.Errorf("refusals differ by what the name resolved to:\n%s\n%s", answers[0], a)
		}
	}
	if !strings.Contains(logged.String(), "10.20.30.40") {
		t.Errorf("the debug log does not say what the name resolved to: %s", logged.String())
	}
	if err := trial.CheckWebhookURL(ctx, "http://internal.test/hooks"); err != nil {
		t.Errorf("trial: a private name refused: %v", err)
	}
	if err := trial.CheckWebhookURL(ctx, "http://metadata.test/hooks"); err == nil {
		t.Error("trial: a name of the metadata address allowed")
	}
}

// dnsServer is a DNS server on a loopback UDP port answering A and AAAA
// questions from names, and a resolver that asks it.
func dnsServer(t testing.TB, names map[string]netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			a, known := names[strings.ToLower(q.Name.String())]
			rc := dnsmessage.RCodeSuccess
			if !known {
				rc = dnsmessage.RCodeNameError
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RCode: rc})
			b.EnableCompression()
			_ = b.StartQuestions()
			_ = b.Question(q)
			_ = b.StartAnswers()
			rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
			switch {
			case known && q.Type == dnsmessage.TypeA && a.Is4():
				_ = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
			case known && q.Type == dnsmessage.TypeAAAA && a.Is6():
				_ = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
			}
			msg, err := b.Finish()
			if err == nil {
				_, _ = pc.WriteTo(msg, from)
			}
		}
	}()
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// Control refuses the connection once the name is resolved: a name that
// resolves to loopback (DNS rebinding: public at registration, private at
// delivery) is refused at connection time.
func TestURLPolicyAtConnection(t *testing.T) {
	strict := delivery.URLPolicy{}
	sandbox := delivery.URLPolicy{AllowHTTP: true}
	trial := delivery.URLPolicy{AllowHTTP: true, AllowPrivate: true}
	for _, p := range []delivery.URLPolicy{strict, sandbox} {
		for _, addr := range []string{"127.0.0.1:443", "[::1]:443", "10.1.2.3:443", "169.254.169.254:80", "[::ffff:192.168.0.1]:443", "[::a9fe:a9fe]:80"} {
			if err := p.Control("tcp", addr, nil); !errors.Is(err, delivery.ErrForbiddenAddress) {
				t.Errorf("%+v %s: %v", p, addr, err)
			}
		}
	}
	for _, p := range []delivery.URLPolicy{strict, sandbox, trial} {
		if err := p.Control("tcp", "93.184.215.14:443", nil); err != nil {
			t.Errorf("%+v: public address refused: %v", p, err)
		}
	}
	if err := trial.Control("tcp", "127.0.0.1:8080", nil); err != nil {
		t.Errorf("trial: loopback refused: %v", err)
	}
	for _, addr := range []string{"169.254.169.254:80", "[fd00:ec2::254]:80"} {
		if err := trial.Control("tcp", addr, nil); !errors.Is(err, delivery.ErrForbiddenAddress) {
			t.Errorf("trial: the metadata address %s: %v", addr, err)
		}
	}
	if !delivery.AllowedAddr(netip.MustParseAddr("8.8.8.8")) || delivery.AllowedAddr(netip.MustParseAddr("192.0.2.1")) {
		t.Error("AllowedAddr")
	}

	// A webhook stored with a loopback address (as if its name had
	// resolved elsewhere at registration) is refused by the deliverer's
	// dialer under the sandbox's policy (http allowed, private addresses
	// not): the endpoint is never called, and the log says why.
	f := newFixture(t, newSQLite(t))
	c, b := f.company(t, "Rebinding S.A.")
	var called bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	srv.StartTLS()
	defer srv.Close()
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	w := f.storedWebhook(t, c.ID, url)
	f.event(t, b, tenant.StateAccepted, nil)
	f.deliverer(t, func(o *delivery.Options) { o.Policy = sandbox })
	waitFor(t, func() bool {
		log, err := f.s.Deliveries(context.Background(), w.ID, tenant.DeliveryPage{Limit: 1})
		return err == nil && len(log) == 1 && log[0].Attempts > 0
	})
	log, _ := f.s.Deliveries(context.Background(), w.ID, tenant.DeliveryPage{Limit: 1})
	if log[0].LastError != "the host resolves to an address that is not public" || log[0].LastStatus != 0 || called {
		t.Fatalf("log %+v, called %v", log[0], called)
	}
}

// The delivery log, which the company reads, never tells what its
// webhook's name resolved to nor the resolver's address: a company that
// points its name at an internal one (a CNAME, a changed A record) reads
// fixed texts only; the detail goes to the debug log with the webhook.
func TestDeliveryLogNamesNoAddress(t *testing.T) {
	resolver := dnsServer(t, map[string]netip.Addr{
		"inside.test.": netip.MustParseAddr("127.0.0.1"),
	})
	f := newFixture(t, newSQLite(t))
	c, b := f.company(t, "Mapa S.A.")
	var called bool
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	want := map[string]string{
		"http://inside.test:" + port + "/hooks": "the host resolves to an address that is not public",
		"http://gone.test/hooks":                "the host does not resolve",
	}
	// What the debug log names that the delivery log does not.
	detail := map[string]string{
		"http://inside.test:" + port + "/hooks": "127.0.0.1",
		"http://gone.test/hooks":                "gone.test",
	}
	ids := map[int64]string{}
	for url := range want {
		w := f.storedWebhook(t, c.ID, url)
		ids[w.ID] = url
	}
	f.event(t, b, tenant.StateAccepted, nil)
	logs := &syncBuffer{}
	f.deliverer(t, func(o *delivery.Options) {
		o.Policy = delivery.URLPolicy{AllowHTTP: true, Resolver: resolver}
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	for id, url := range ids {
		waitFor(t, func() bool {
			log, err := f.s.Deliveries(context.Background(), id, tenant.DeliveryPage{Limit: 1})
			return err == nil && len(log) == 1 && log[0].Attempts > 0
		})
		log, _ := f.s.Deliveries(context.Background(), id, tenant.DeliveryPage{Limit: 1})
		got := log[0].LastError
		if got != want[url] || log[0].LastStatus != 0 {
			t.Errorf("%s: ultimoError %q, want %q", url, got, want[url])
		}
	}
	if called {
		t.Error("the loopback endpoint was called")
	}
	// The operator still finds the detail, at debug, on a line of the
	// webhook's own.
	debug := logs.String()
	for id, url := range ids {
		found := false
		for _, line := range strings.Split(debug, "\n") {
			if strings.Contains(line, "webhook="+strconv.FormatInt(id, 10)+" ") && strings.Contains(line, detail[url]) {
				found = true
			}
		}
		if !found {
			t.Errorf("no debug line of webhook %d names %s: %s", id, detail[url], debug)
		}
	}
}

// syncBuffer is a log's output, written and read from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
