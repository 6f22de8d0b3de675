package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"

	"facturad/hacienda/msg"
)

// URLPolicy decides which webhook URLs may be called (server-side request
// forgery). Only https is allowed (http too with AllowHTTP, the sandbox
// environment) and, in every environment, never an address that is
// private, loopback, link-local, multicast, unspecified or otherwise not
// globally routable: a webhook must not reach into the network the
// service runs in. AllowPrivate lets loopback and private addresses
// through, for trials of the sandbox on one machine; the other special
// addresses (link-local, the cloud metadata address among them) stay
// refused even then. The check is made at registration (CheckWebhookURL,
// names resolved) and again at every connection, on the address the name
// resolved to then (Control), so that a name that resolved to a public
// address at registration and to a private one later (DNS rebinding) is
// refused all the same. Redirects are never followed.
type URLPolicy struct {
	// AllowHTTP allows http as well as https (the sandbox environment).
	AllowHTTP bool
	// AllowPrivate allows loopback and private addresses (RFC 1918,
	// unique-local IPv6) and localhost: the sandbox environment with
	// webhook_allow_private, where trials call endpoints on the same
	// machine or network. Off by default.
	AllowPrivate bool
	// Resolver resolves names at registration, and at connection for the
	// deliverer's own dialer; default net.DefaultResolver.
	Resolver *net.Resolver
	// Logger receives, at debug, what a refused name resolved to (the
	// caller is not told: it would map the internal DNS). Default none.
	Logger *slog.Logger
}

// ErrForbiddenAddress is a webhook address the policy refuses.
var ErrForbiddenAddress = errors.New("webhook address not allowed")

// PrivateSetting names the setting that allows loopback and private
// addresses, in the refusals that it would change.
const PrivateSetting = "FACTURAD_WEBHOOK_ALLOW_PRIVATE"

// privateHint ends a refusal that the setting would have let through.
func privateHint() msg.Message { return msg.WebhookPrivateHint.With(PrivateSetting) }

// URLError is a webhook URL the policy refuses: what is wrong with it, in
// the catalogue's words. An address that is not allowed also matches
// ErrForbiddenAddress.
type URLError struct {
	Problem   msg.Message
	forbidden bool
}

func (e *URLError) Error() string { return e.Problem.String() }

// Describe is what is wrong with the URL.
func (e *URLError) Describe() msg.Message { return e.Problem }

// Is makes errors.Is(err, ErrForbiddenAddress) hold for an address the
// policy refuses.
func (e *URLError) Is(target error) bool { return e.forbidden && target == ErrForbiddenAddress }

func badURL(m msg.Message) error       { return &URLError{Problem: m} }
func forbiddenURL(m msg.Message) error { return &URLError{Problem: m, forbidden: true} }

// CheckWebhookURL checks a URL a company registers: absolute, https (http
// too with AllowHTTP), no user information, and a host whose every
// address is allowed. The error says what is wrong, in words meant for
// the caller; for a name it never says what the name resolved to.
func (p URLPolicy) CheckWebhookURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return badURL(msg.WebhookURLAbsolute.With())
	case u.User != nil:
		return badURL(msg.WebhookURLUser.With())
	case u.Fragment != "":
		return badURL(msg.WebhookURLFragment.With())
	case len(raw) > 2048:
		return badURL(msg.WebhookURLLength.With())
	}
	if !p.scheme(u.Scheme) {
		if p.AllowHTTP {
			return badURL(msg.WebhookHTTPSOrHTTP.With())
		}
		return badURL(msg.WebhookHTTPS.With())
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if !p.allowed(a) {
			return forbiddenURL(msg.WebhookNotPublic.With(a.String(), p.hint(a)))
		}
		return nil
	}
	lower := strings.ToLower(host)
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		if p.AllowPrivate {
			return nil
		}
		return forbiddenURL(msg.WebhookLocalhost.With(privateHint()))
	}
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	// One answer whether the name does not resolve or resolves to an
	// address the policy refuses: telling them apart, or naming the
	// address, would let a company map the network's internal names.
	var hint any = ""
	if !p.AllowPrivate {
		hint = privateHint()
	}
	refused := forbiddenURL(msg.WebhookHostPrivate.With(hint))
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		p.debug("a webhook host does not resolve", "host", host, "err", err)
		return refused
	}
	for _, a := range addrs {
		if !p.allowed(a) {
			p.debug("a webhook host resolves to an address not allowed", "host", host, "address", a.Unmap().String())
			return refused
		}
	}
	return nil
}

// scheme reports whether the policy allows a URL scheme.
func (p URLPolicy) scheme(s string) bool {
	return s == "https" || (s == "http" && p.AllowHTTP)
}

// allowed reports whether the policy lets a webhook connect to a.
func (p URLPolicy) allowed(a netip.Addr) bool {
	return AllowedAddr(a) || (p.AllowPrivate && privateAddr(a))
}

// hint is privateHint when AllowPrivate would have allowed a.
func (p URLPolicy) hint(a netip.Addr) any {
	if !p.AllowPrivate && privateAddr(a) {
		return privateHint()
	}
	return ""
}

func (p URLPolicy) debug(msg string, args ...any) {
	if p.Logger != nil {
		p.Logger.Debug(msg, args...)
	}
}

// privateAddr reports whether a is a loopback or private address (RFC
// 1918, unique-local IPv6), the addresses AllowPrivate lets through, but
// never a cloud metadata address among them (metadataAddrs).
func privateAddr(a netip.Addr) bool {
	if a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	return (a.IsLoopback() || a.IsPrivate()) && !metadataAddrs[a]
}

// metadataAddrs are the cloud instance metadata services that sit in the
// private ranges AllowPrivate opens: AWS's over IPv6, fd00:ec2::254, in
// fc00::/7. (The IPv4 one, 169.254.169.254, is link-local: refused
// always.) A webhook reaching one would read the instance's credentials.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("fd00:ec2::254"): true,
}

// AllowedAddr reports whether a webhook may connect to a: a globally
// routable unicast address. An IPv4-mapped IPv6 address is judged as the
// IPv4 address it maps (the connection goes to it); any other IPv6
// address must be in the global unicast space 2000::/3, outside the
// special ranges of forbiddenPrefixes. A zoned address never is, IPv4-mapped
// ones included: the zone is looked at before Unmap, which drops it.
func AllowedAddr(a netip.Addr) bool {
	if a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	switch {
	case !a.IsValid(), a.IsUnspecified(), a.IsLoopback(), a.IsPrivate(), a.IsLinkLocalUnicast(),
		a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast(), a.IsMulticast():
		return false
	case a.Is6() && !globalUnicast6.Contains(a):
		return false
	}
	for _, p := range forbiddenPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// globalUnicast6 is the IPv6 space allocated for global unicast.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// forbiddenPrefixes are the special-purpose ranges netip has no predicate
// for. IPv4: "this network", shared address space (carrier-grade NAT),
// IETF protocol assignments, the documentation ranges, the 6to4 relay
// anycast, benchmarking, reserved space and the broadcast address. IPv6:
// the ranges that embed an IPv4 address of any kind (IPv4-compatible,
// IPv4-translated, NAT64, 6to4, Teredo), the IETF protocol assignments,
// the discard prefix and the documentation ranges. Those outside
// 2000::/3 are refused by AllowedAddr anyway; they are listed so that the
// list is the whole of what docs/design/delivery.md promises.
var forbiddenPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
		"2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20", "fc00::/7",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Control is a net.Dialer Control function that refuses, after the name
// was resolved, a connection to an address the policy does not allow.
func (p URLPolicy) Control(network, address string, _ syscall.RawConn) error {
	// Never the address in the error: a name that resolves to an internal
	// address would tell it.
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !p.allowed(ap.Addr()) {
		return fmt.Errorf("%w: the host resolves to an address that is not public", ErrForbiddenAddress)
	}
	return nil
}
