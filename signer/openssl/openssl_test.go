//go:build openssl && cgo

package openssl

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"facturad/signer/benchcpu"
	"facturad/signer/certmint"
)

// testKey is certmint's test key i, and its copy in OpenSSL.
func testKey(tb testing.TB, i int) (*rsa.PrivateKey, *Key) {
	tb.Helper()
	priv := certmint.TestKey(i)
	k, err := New(priv)
	if err != nil {
		tb.Fatal(err)
	}
	return priv, k
}

// TestSignsAsGo: OpenSSL's PKCS #1 v1.5 SHA-256 signatures are, byte for
// byte, crypto/rsa's (both are deterministic), for several keys and
// digests.
func TestSignsAsGo(t *testing.T) {
	t.Parallel()
	for i := range 4 {
		priv, k := testKey(t, i)
		if !k.Public().(*rsa.PublicKey).Equal(&priv.PublicKey) {
			t.Fatalf("key %d: Public is not the key's public half", i)
		}
		for j := range 20 {
			h := sha256.Sum256(fmt.Appendf(nil, "document %d of key %d", j, i))
			got, err := k.Sign(rand.Reader, h[:], crypto.SHA256)
			if err != nil {
				t.Fatal(err)
			}
			want, err := rsa.SignPKCS1v15(nil, priv, crypto.SHA256, h[:])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("key %d, digest %d: OpenSSL's signature differs from crypto/rsa's", i, j)
			}
		}
	}
}

// TestOtherSignaturesByGo: what is not a PKCS #1 v1.5 SHA-256 signature
// (another hash, PSS) is made by crypto/rsa and verifies as such; a
// digest of the wrong length is refused.
func TestOtherSignaturesByGo(t *testing.T) {
	t.Parallel()
	priv, k := testKey(t, 1)
	h384 := sha512.Sum384([]byte("x"))
	sig, err := k.Sign(rand.Reader, h384[:], crypto.SHA384)
	if err != nil {
		t.Fatal(err)
	}
	if err := rsa.VerifyPKCS1v15(&priv.PublicKey, crypto.SHA384, h384[:], sig); err != nil {
		t.Errorf("SHA-384: %v", err)
	}
	h := sha256.Sum256([]byte("x"))
	pss := &rsa.PSSOptions{Hash: crypto.SHA256}
	if sig, err = k.Sign(rand.Reader, h[:], pss); err != nil {
		t.Fatal(err)
	}
	if err := rsa.VerifyPSS(&priv.PublicKey, crypto.SHA256, h[:], sig, pss); err != nil {
		t.Errorf("PSS: %v", err)
	}
	for _, n := range []int{0, 31, 33, 64} {
		if _, err := k.Sign(rand.Reader, make([]byte, n), crypto.SHA256); err == nil {
			t.Errorf("a SHA-256 digest of %d bytes was signed", n)
		}
	}
}

// TestConcurrentSigns: one key signs from many goroutines at once (run
// under -race), and each signature is right.
func TestConcurrentSigns(t *testing.T) {
	t.Parallel()
	priv, k := testKey(t, 2)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for j := range 25 {
				h := sha256.Sum256(fmt.Appendf(nil, "%d/%d", g, j))
				sig, err := k.Sign(nil, h[:], crypto.SHA256)
				if err == nil {
					err = rsa.VerifyPKCS1v15(&priv.PublicKey, crypto.SHA256, h[:], sig)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestKeysFreed: keys that are dropped are freed by OpenSSL (their
// cleanup runs): the process does not keep a copy of every key it loaded.
func TestKeysFreed(t *testing.T) {
	priv := certmint.TestKey(3)
	const n = 50
	before := Freed()
	for range n {
		if _, err := New(priv); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for Freed()-before < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d dropped keys freed after 30 s", Freed()-before, n)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkVsGoRSA alternates one OpenSSL signature and one crypto/rsa
// signature of the same digest, and reports the CPU time of each and
// their ratio (x-raw-rsa: OpenSSL's CPU over Go's).
func BenchmarkVsGoRSA(b *testing.B) {
	priv, k := testKey(b, 1)
	h := sha256.Sum256([]byte("facturad"))
	benchcpu.CompareWithRawRSA(b, "openssl", func() {
		if _, err := k.Sign(nil, h[:], crypto.SHA256); err != nil {
			b.Fatal(err)
		}
	}, priv)
}
