package signer

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"testing"
)

// TestCacheSignsAsGo: the cache's signature of a document is, byte for
// byte, the one Sign makes with Go's crypto/rsa and the loaded key
// (PKCS #1 v1.5 signatures are deterministic), whichever RSABackend this
// build signs with; and the cache signs with that backend.
func TestCacheSignsAsGo(t *testing.T) {
	t.Parallel()
	src := newMemSource()
	c := newTestCache(t, src, 10)
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		m := valid(t, i, "1234")
		src.put(int64(i), m.P12, m.PIN)
		cert, err := c.Certificate(ctx, int64(i))
		if err != nil {
			t.Fatal(err)
		}
		goKey, ok := cert.Key.(*rsa.PrivateKey)
		if !ok {
			t.Fatalf("LoadPKCS12 gave a %T, not an *rsa.PrivateKey", cert.Key)
		}
		e, err := c.entry(ctx, int64(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, isGo := e.key.(*rsa.PrivateKey); isGo != (RSABackend == "crypto/rsa") {
			t.Errorf("RSABackend %q, the cache signs with a %T", RSABackend, e.key)
		}
		for _, doc := range [][]byte{smallDoc, tenLineInvoice(t)} {
			opts := []Option{WithID("Signature-" + string(rune('0'+i))), WithCanonicalInput()}
			got, err := c.Sign(ctx, int64(i), doc, opts...)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Sign(doc, goKey, append([]*x509.Certificate{cert.Leaf}, cert.Chain...), PolicyV44,
				append([]Option{WithClock(c.o.Clock)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("key %d: the cache's signature (%s) differs from crypto/rsa's", i, RSABackend)
			}
			if _, err := Verify(got); err != nil {
				t.Errorf("key %d: %v", i, err)
			}
		}
	}
}
