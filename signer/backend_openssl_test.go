//go:build openssl

package signer

import (
	"context"
	"testing"

	"facturad/signer/openssl"
)

// TestCacheSignsWithOpenSSL: in the openssl build, each signature the
// cache makes is OpenSSL's. Not parallel, so that no other test's
// signatures are counted.
func TestCacheSignsWithOpenSSL(t *testing.T) {
	src := newMemSource()
	m := valid(t, 1, "1234")
	src.put(1, m.P12, m.PIN)
	c := newTestCache(t, src, 10)
	const n = 5
	before := openssl.Signatures()
	for range n {
		if _, err := c.Sign(context.Background(), 1, smallDoc); err != nil {
			t.Fatal(err)
		}
	}
	if got := openssl.Signatures() - before; got != n {
		t.Errorf("OpenSSL made %d of the cache's %d signatures", got, n)
	}
}
