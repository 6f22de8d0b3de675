package delivery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// URLPolicy decides which webhook URLs may be called (server-side request
// forgery). Outside the sandbox only https is allowed and never an address
// that is private, loopback, link-local, multicast, unspecified or
// otherwise not globally routable: a webhook must not reach into the
// network the service runs in. The check is made at registration
// (CheckWebhookURL, names resolved) and again at every connection, on the
// address the name resolved to then (Control), so that a name that
// resolved to a public address at registration and to a private one later
// (DNS rebinding) is refused all the same. Redirects are never followed.
type URLPolicy struct {
	// AllowInsecure allows http and every address (the sandbox
	// environment, where tests and trials call endpoints on loopback).
	AllowInsecure bool
	// Resolver resolves names at registration; default net.DefaultResolver.
	Resolver *net.Resolver
}

// ErrForbiddenAddress is a webhook address the policy refuses.
var ErrForbiddenAddress = errors.New("webhook address not allowed")

// CheckWebhookURL checks a URL a company registers: absolute, https (http
// too in the sandbox), no user information, and a host whose every
// address is allowed. The error says what is wrong, in words meant for
// the caller.
func (p URLPolicy) CheckWebhookURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return errors.New("must be an absolute URL such as https://example.com/hooks")
	case u.User != nil:
		return errors.New("must not carry a user or password (the signature authenticates the deliveries)")
	case u.Fragment != "":
		return errors.New("must not have a fragment")
	case len(raw) > 2048:
		return errors.New("must be at most 2048 characters")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !p.AllowInsecure {
			return errors.New("must be https")
		}
	default:
		return errors.New("must be https")
	}
	if p.AllowInsecure {
		return nil
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if !AllowedAddr(a) {
			return fmt.Errorf("%w: %s is not a public address", ErrForbiddenAddress, a)
		}
		return nil
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return fmt.Errorf("%w: localhost", ErrForbiddenAddress)
	}
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("the host %q cannot be resolved", host)
	}
	for _, a := range addrs {
		if !AllowedAddr(a) {
			return fmt.Errorf("%w: %s resolves to %s, which is not a public address", ErrForbiddenAddress, host, a.Unmap())
		}
	}
	return nil
}

// AllowedAddr reports whether a webhook may connect to a: a globally
// routable unicast address.
func AllowedAddr(a netip.Addr) bool {
	a = a.Unmap()
	switch {
	case !a.IsValid(), a.IsUnspecified(), a.IsLoopback(), a.IsPrivate(), a.IsLinkLocalUnicast(),
		a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast(), a.IsMulticast():
		return false
	}
	for _, p := range forbiddenPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// forbiddenPrefixes are the special-purpose ranges netip has no predicate
// for: shared address space (carrier-grade NAT), "this network", the
// benchmarking and documentation ranges, IETF protocol assignments,
// reserved space and the broadcast address, IPv4/IPv6 translation and
// the IPv6 discard, documentation and 6to4/Teredo ranges, which can embed
// an IPv4 address of any kind.
var forbiddenPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/32", "2001:db8::/32", "2002::/16", "fc00::/7",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Control is a net.Dialer Control function that refuses, after the name
// was resolved, a connection to an address the policy does not allow.
func (p URLPolicy) Control(network, address string, _ syscall.RawConn) error {
	if p.AllowInsecure {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	if !AllowedAddr(ap.Addr()) {
		return fmt.Errorf("%w: %s is not a public address", ErrForbiddenAddress, ap.Addr().Unmap())
	}
	return nil
}
