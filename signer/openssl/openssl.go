//go:build openssl && cgo

package openssl

/*
#cgo LDFLAGS: -lcrypto
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/err.h>

// facturad_error is OpenSSL's oldest queued error for this thread, and
// clears the queue; 0 when there is none. OpenSSL queues errors per
// thread, so it is called in the same C call as what failed: a goroutine
// may move to another thread between two calls.
static unsigned long facturad_error(void) {
	unsigned long e = ERR_get_error();
	ERR_clear_error();
	return e;
}

// facturad_load reads a DER RSAPrivateKey (PKCS #1); NULL, with OpenSSL's
// error in *err, when OpenSSL refuses it.
static EVP_PKEY *facturad_load(const unsigned char *der, long len, unsigned long *err) {
	const unsigned char *p = der;
	ERR_clear_error(); // nothing left by an earlier call on this thread
	EVP_PKEY *key = d2i_PrivateKey(EVP_PKEY_RSA, NULL, &p, len);
	*err = key == NULL ? facturad_error() : 0;
	return key;
}

// facturad_sign writes the PKCS #1 v1.5 signature of a SHA-256 digest into
// sig (of *siglen bytes; the signature's length on return). It returns 1 on
// success, else 0 with OpenSSL's error in *err.
static int facturad_sign(EVP_PKEY *key, const unsigned char *digest, size_t dlen,
		unsigned char *sig, size_t *siglen, unsigned long *err) {
	ERR_clear_error(); // nothing left by an earlier call on this thread
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
	int ok = ctx != NULL &&
		EVP_PKEY_sign_init(ctx) == 1 &&
		EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1 &&
		EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) == 1 &&
		EVP_PKEY_sign(ctx, sig, siglen, digest, dlen) == 1;
	*err = ok ? 0 : facturad_error();
	EVP_PKEY_CTX_free(ctx); // NULL is allowed
	return ok;
}
*/
import "C"

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Counters of what OpenSSL did in this process, for tests and diagnostics.
var (
	signatures atomic.Int64 // signatures made
	freed      atomic.Int64 // keys freed
)

// Signatures is the number of signatures OpenSSL has made in this process.
func Signatures() int64 { return signatures.Load() }

// Freed is the number of keys this process has handed to OpenSSL and freed
// since.
func Freed() int64 { return freed.Load() }

// Key is an RSA private key held by OpenSSL. Its Sign makes PKCS #1 v1.5
// signatures of SHA-256 digests, the only kind the tax authority's XAdES
// profile uses, with OpenSSL; any other kind is made by Go's crypto/rsa
// with the same key. It is safe for concurrent use: every signature has a
// context of its own. OpenSSL checks each CRT result against the public
// key before it is returned, as Go's crypto/rsa does.
type Key struct {
	pkey *C.EVP_PKEY
	priv *rsa.PrivateKey
	size int
}

// New copies k into OpenSSL. The copy is freed, its private parts cleared
// by OpenSSL, by the garbage collector once the returned Key is no longer
// reachable. The Key keeps k, for Public and for the signatures OpenSSL
// does not make.
func New(k *rsa.PrivateKey) (*Key, error) {
	if k == nil {
		return nil, errors.New("openssl: no key")
	}
	der := x509.MarshalPKCS1PrivateKey(k)
	defer clear(der) // the private key, in Go's memory
	var e C.ulong
	pkey := C.facturad_load((*C.uchar)(unsafe.Pointer(&der[0])), C.long(len(der)), &e)
	if pkey == nil {
		return nil, fmt.Errorf("openssl: load the RSA key: %s", errorText(e))
	}
	key := &Key{pkey: pkey, priv: k, size: k.Size()}
	runtime.AddCleanup(key, func(p *C.EVP_PKEY) {
		C.EVP_PKEY_free(p)
		freed.Add(1)
	}, pkey)
	return key, nil
}

// Public is the key's public half.
func (k *Key) Public() crypto.PublicKey { return &k.priv.PublicKey }

// Sign signs digest. rand is not used by OpenSSL's PKCS #1 v1.5
// signatures, which are deterministic.
func (k *Key) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if _, pss := opts.(*rsa.PSSOptions); pss || opts.HashFunc() != crypto.SHA256 {
		return k.priv.Sign(rand, digest, opts)
	}
	if len(digest) != crypto.SHA256.Size() {
		return nil, fmt.Errorf("openssl: a SHA-256 digest has %d bytes, not %d", crypto.SHA256.Size(), len(digest))
	}
	sig := make([]byte, k.size)
	n := C.size_t(len(sig))
	var e C.ulong
	ok := C.facturad_sign(k.pkey, (*C.uchar)(unsafe.Pointer(&digest[0])), C.size_t(len(digest)),
		(*C.uchar)(unsafe.Pointer(&sig[0])), &n, &e)
	runtime.KeepAlive(k) // pkey is freed once k is unreachable
	if ok != 1 {
		return nil, fmt.Errorf("openssl: sign: %s", errorText(e))
	}
	if int(n) != len(sig) {
		return nil, fmt.Errorf("openssl: sign: a signature of %d bytes, not %d", n, len(sig))
	}
	signatures.Add(1)
	return sig, nil
}

// errorText describes one of OpenSSL's error codes; OpenSSL's error strings
// never hold key material.
func errorText(e C.ulong) string {
	if e == 0 {
		return "no detail from OpenSSL"
	}
	var buf [256]C.char
	C.ERR_error_string_n(e, &buf[0], C.size_t(len(buf)))
	return C.GoString(&buf[0])
}
