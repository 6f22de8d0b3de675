package gateway

import (
	"net"
	"net/netip"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestClientAddr(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	tests := []struct {
		name, peer string
		xff        []string
		trusted    []netip.Prefix
		want       string
	}{
		{"no proxy trusted: the peer", "10.1.2.3", []string{"203.0.113.9"}, nil, "10.1.2.3"},
		{"untrusted peer: its header is ignored", "198.51.100.4", []string{"203.0.113.9"}, proxies, "198.51.100.4"},
		{"trusted peer: the client it names", "10.1.2.3", []string{"203.0.113.9"}, proxies, "203.0.113.9"},
		{"a chain of trusted proxies", "10.1.2.3", []string{"203.0.113.9, 10.9.9.9", "10.8.8.8"}, proxies, "203.0.113.9"},
		{"a forged left-most entry is not believed", "10.1.2.3", []string{"1.2.3.4, 203.0.113.9"}, proxies, "203.0.113.9"},
		{"garbage stops the walk at the proxy", "10.1.2.3", []string{"not-an-address"}, proxies, "10.1.2.3"},
		{"every hop trusted: the peer", "10.1.2.3", []string{"10.5.5.5"}, proxies, "10.1.2.3"},
		{"IPv6 through a trusted proxy", "fd00::1", []string{"2001:db8::7"}, proxies, "2001:db8::7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{o: Options{TrustedProxies: tt.trusted}}
			var req fasthttp.Request
			for _, v := range tt.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			var rc fasthttp.RequestCtx
			rc.Init(&req, &net.TCPAddr{IP: net.ParseIP(tt.peer), Port: 4321}, nil)
			if got := s.clientAddr(&rc); got != tt.want {
				t.Errorf("clientAddr = %s, want %s", got, tt.want)
			}
		})
	}
}
