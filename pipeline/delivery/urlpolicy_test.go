package delivery_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"facturad/pipeline/delivery"
	"facturad/tenant"
)

// Server-side request forgery: outside the sandbox only https to public
// addresses may be registered.
func TestURLPolicy(t *testing.T) {
	strict := delivery.URLPolicy{}
	sandbox := delivery.URLPolicy{AllowInsecure: true}
	tests := []struct {
		name   string
		policy delivery.URLPolicy
		url    string
		want   string // "" allowed, else a part of the error
	}{
		{"ok/https public address", strict, "https://93.184.215.14/hooks", ""},
		{"ok/https public IPv6", strict, "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hooks", ""},
		{"ok/sandbox http loopback", sandbox, "http://127.0.0.1:8080/hooks", ""},
		{"ok/sandbox https localhost", sandbox, "https://localhost/hooks", ""},
		{"error/http outside the sandbox", strict, "http://93.184.215.14/hooks", "https"},
		{"error/ftp", sandbox, "ftp://93.184.215.14/x", "https"},
		{"error/relative", strict, "/hooks", "absolute"},
		{"error/no host", strict, "https:///hooks", "absolute"},
		{"error/user information", strict, "https://user:pw@93.184.215.14/", "user"},
		{"error/loopback v4", strict, "https://127.0.0.1/hooks", "not a public address"},
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
		{"error/carrier-grade NAT", strict, "https://100.64.0.1/hooks", "not a public address"},
		{"error/unique local v6", strict, "https://[fd00::1]/hooks", "not a public address"},
		{"error/link-local v6", strict, "https://[fe80::1]/hooks", "not a public address"},
		{"error/v4-mapped loopback", strict, "https://[::ffff:127.0.0.1]/hooks", "not a public address"},
		{"error/v4-mapped private", strict, "https://[::ffff:10.0.0.1]/hooks", "not a public address"},
		{"error/6to4 of a private address", strict, "https://[2002:a00:1::1]/hooks", "not a public address"},
		{"error/NAT64 of loopback", strict, "https://[64:ff9b::7f00:1]/hooks", "not a public address"},
	}
	for _, tt := range tests {
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

// Control refuses the connection once the name is resolved: a name that
// resolves to loopback (DNS rebinding: public at registration, private at
// delivery) is refused at connection time.
func TestURLPolicyAtConnection(t *testing.T) {
	strict := delivery.URLPolicy{}
	for _, addr := range []string{"127.0.0.1:443", "[::1]:443", "10.1.2.3:443", "169.254.169.254:80", "[::ffff:192.168.0.1]:443"} {
		if err := strict.Control("tcp", addr, nil); !errors.Is(err, delivery.ErrForbiddenAddress) {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if err := strict.Control("tcp", "93.184.215.14:443", nil); err != nil {
		t.Errorf("public address refused: %v", err)
	}
	if !delivery.AllowedAddr(netip.MustParseAddr("8.8.8.8")) || delivery.AllowedAddr(netip.MustParseAddr("192.0.2.1")) {
		t.Error("AllowedAddr")
	}

	// A webhook stored with a loopback address (as if its name had
	// resolved elsewhere at registration) is refused by the deliverer's
	// dialer: the endpoint is never called, and the log says why.
	f := newFixture(t, newSQLite(t))
	c, b := f.company(t, "Rebinding S.A.")
	var called bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	srv.StartTLS()
	defer srv.Close()
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	secret, err := sealFor(f, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	w := tenant.Webhook{CompanyID: c.ID, URL: url, Eventos: []string{"documento.aceptado"}, SealedSecret: secret}
	if err := f.s.CreateWebhook(context.Background(), &w); err != nil {
		t.Fatal(err)
	}
	f.event(t, b, tenant.StateAccepted, nil)
	f.deliverer(t, func(o *delivery.Options) { o.Policy = strict })
	waitFor(t, func() bool {
		log, err := f.s.Deliveries(context.Background(), w.ID, tenant.DeliveryPage{Limit: 1})
		return err == nil && len(log) == 1 && log[0].Attempts > 0
	})
	log, _ := f.s.Deliveries(context.Background(), w.ID, tenant.DeliveryPage{Limit: 1})
	if !strings.Contains(log[0].LastError, "not allowed") || log[0].LastStatus != 0 || called {
		t.Fatalf("log %+v, called %v", log[0], called)
	}
}
