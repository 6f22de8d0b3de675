package delivery_test

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"facturad/pipeline/delivery"
)

// FuzzCheckWebhookURL: whatever a company registers, the policy never
// panics, and a URL it accepts in production (no AllowHTTP, no
// AllowPrivate) is https, carries no user information and no fragment, and
// names no literal address that is not public, judged here by netip
// itself (loopback, private, link-local, unspecified, multicast, and those
// as IPv4-mapped addresses). Under the trial policy (AllowPrivate) a
// literal link-local, multicast, unspecified or metadata address is still
// refused. A refusal of a name never says what the name resolved to.
// Names are resolved by a DNS server of the test's own on a loopback port,
// never the network's.
func FuzzCheckWebhookURL(f *testing.F) {
	resolved := map[string]netip.Addr{
		"internal.test.":   netip.MustParseAddr("10.20.30.40"),
		"metadata.test.":   netip.MustParseAddr("169.254.169.254"),
		"loop6.test.":      netip.MustParseAddr("::1"),
		"mapped.test.":     netip.MustParseAddr("::ffff:192.168.7.9"),
		"public.test.":     netip.MustParseAddr("93.184.215.14"),
		"public6.test.":    netip.MustParseAddr("2606:2800:21f:cb07:6820:80da:af6b:8b2c"),
		"compatible.test.": netip.MustParseAddr("::a14:1e28"),
	}
	resolver := dnsServer(f, resolved)
	strict := delivery.URLPolicy{Resolver: resolver}
	trial := delivery.URLPolicy{AllowHTTP: true, AllowPrivate: true, Resolver: resolver}

	for _, c := range urlPolicyCases() {
		f.Add(c.url, c.policy.AllowPrivate)
	}
	for name := range resolved {
		f.Add("https://"+strings.TrimSuffix(name, ".")+"/hooks", false)
		f.Add("http://"+strings.ToUpper(strings.TrimSuffix(name, "."))+":8080/h?x=1", true)
	}
	f.Add("HTTPS://93.184.215.14/hooks", false)
	f.Add("https://93.184.215.14/hooks#frag", false)
	f.Add("https://u@93.184.215.14/hooks", false)
	f.Add("https://127.1/hooks", false)
	f.Add("https://0x7f000001/hooks", false)
	f.Add("https://[::ffff:7f00:1%25lo]/hooks", false)

	f.Fuzz(func(t *testing.T, raw string, trialPolicy bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p := strict
		if trialPolicy {
			p = trial
		}
		err := p.CheckWebhookURL(ctx, raw)
		u, perr := url.Parse(raw)
		if err != nil {
			// The caller typed the URL, so a literal address may be
			// named back; what a name resolved to never is.
			if perr == nil {
				if _, lerr := netip.ParseAddr(u.Hostname()); lerr == nil {
					return
				}
			}
			for _, a := range resolved {
				for _, s := range []string{a.String(), a.Unmap().String()} {
					if strings.Contains(err.Error(), s) {
						t.Fatalf("%q: the refusal %q names the resolved address %s", raw, err, s)
					}
				}
			}
			return
		}
		if perr != nil {
			t.Fatalf("%q accepted, but it does not parse: %v", raw, perr)
		}
		if len(raw) > 2048 {
			t.Fatalf("accepted %d characters", len(raw))
		}
		if u.Host == "" || u.Hostname() == "" || !u.IsAbs() {
			t.Fatalf("%q accepted without a host", raw)
		}
		if u.User != nil {
			t.Fatalf("%q accepted with user information", raw)
		}
		if u.Fragment != "" {
			t.Fatalf("%q accepted with a fragment", raw)
		}
		if !trialPolicy && u.Scheme != "https" {
			t.Fatalf("%q accepted in production with scheme %q", raw, u.Scheme)
		}
		if trialPolicy && u.Scheme != "https" && u.Scheme != "http" {
			t.Fatalf("%q accepted in the sandbox with scheme %q", raw, u.Scheme)
		}
		a, lerr := netip.ParseAddr(u.Hostname())
		if lerr != nil {
			// A name: accepted only if the test's DNS gives it a public
			// address (localhost too, on the trial policy).
			name := strings.ToLower(u.Hostname())
			if trialPolicy && (name == "localhost" || strings.HasSuffix(name, ".localhost")) {
				return
			}
			r, known := resolved[name+"."]
			if !known {
				r, known = resolved[name]
			}
			if !known {
				t.Fatalf("%q accepted: the name %q does not resolve", raw, name)
			}
			a = r
		}
		m := a.Unmap()
		switch {
		case a.Zone() != "":
			t.Fatalf("%q accepted with a zone", raw)
		case m.IsUnspecified(), m.IsLinkLocalUnicast(), m.IsLinkLocalMulticast(), m.IsInterfaceLocalMulticast(),
			m.IsMulticast(), m == netip.MustParseAddr("fd00:ec2::254"):
			t.Fatalf("%q accepted: %s is never a webhook's address", raw, a)
		case !trialPolicy && (m.IsLoopback() || m.IsPrivate()):
			t.Fatalf("%q accepted in production: %s is not public", raw, a)
		}
	})
}
