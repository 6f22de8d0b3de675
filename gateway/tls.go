package gateway

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// CertCheckInterval is how often, at most, the API's certificate and key
// files are looked at for a change (on a handshake, never in between).
const CertCheckInterval = 5 * time.Second

// NewTLSConfig returns the API listener's TLS settings over the PEM
// certificate chain in certFile and its key in keyFile: TLS 1.2 at least;
// on TLS 1.2 only ECDHE key exchanges with AEAD ciphers (TLS 1.3's suites
// are all modern and not configurable); key exchange over X25519 (alone or
// with ML-KEM) or P-256. Go picks the cipher suite itself from what the
// client offers, so there is no server preference to set.
//
// The pair is read now, and read again on a handshake at most every
// CertCheckInterval when either file changed (modification time, size or
// the file itself, as when a mounted secret is swapped). A new pair that
// cannot be used (unreadable, broken, a key that does not match) is logged
// and the last good pair stays in use. It fails when the pair cannot be
// used now.
func NewTLSConfig(certFile, keyFile string, log *slog.Logger) (*tls.Config, error) {
	return newTLSConfig(certFile, keyFile, log, CertCheckInterval)
}

func newTLSConfig(certFile, keyFile string, log *slog.Logger, every time.Duration) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("gateway: TLS needs both a certificate file and a key file")
	}
	if log == nil {
		log = slog.Default()
	}
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log, every: every, now: time.Now}
	if err := r.first(); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		CipherSuites: []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		},
		CurvePreferences: []tls.CurveID{tls.X25519MLKEM768, tls.X25519, tls.CurveP256},
		NextProtos:       []string{"http/1.1"},
		GetCertificate:   r.certificate,
	}, nil
}

// certReloader serves the last good certificate pair and reads the files
// again when they change.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger
	every             time.Duration
	now               func() time.Time

	cert atomic.Pointer[tls.Certificate]

	// mu is held by the one handshake that looks at the files; the
	// others go on with the current pair meanwhile.
	mu       sync.Mutex
	checked  time.Time
	seen     [2]os.FileInfo
	lastFail string // the last failure logged, so that it is logged once
}

// first reads the pair at start.
func (r *certReloader) first() error {
	seen, err := r.stat()
	if err != nil {
		return fmt.Errorf("gateway: TLS: %w", err)
	}
	cert, err := r.load()
	if err != nil {
		return fmt.Errorf("gateway: TLS: %w", err)
	}
	r.seen, r.checked = seen, r.now()
	r.cert.Store(cert)
	r.log.Info("TLS certificate loaded", certAttrs(cert)...)
	return nil
}

// certificate is tls.Config.GetCertificate.
func (r *certReloader) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.maybeReload()
	return r.cert.Load(), nil
}

func (r *certReloader) maybeReload() {
	if !r.mu.TryLock() {
		return
	}
	defer r.mu.Unlock()
	now := r.now()
	if now.Sub(r.checked) < r.every {
		return
	}
	r.checked = now
	seen, err := r.stat()
	if err != nil {
		r.fail(err)
		return
	}
	if sameFile(seen[0], r.seen[0]) && sameFile(seen[1], r.seen[1]) {
		return
	}
	r.seen = seen
	cert, err := r.load()
	if err != nil {
		r.fail(err)
		return
	}
	r.cert.Store(cert)
	r.lastFail = ""
	r.log.Info("TLS certificate reloaded", certAttrs(cert)...)
}

// fail logs why the files cannot be used, once for each new reason.
func (r *certReloader) fail(err error) {
	if msg := err.Error(); msg != r.lastFail {
		r.lastFail = msg
		r.log.Error("TLS certificate: the changed files cannot be used; serving the previous certificate",
			"cert_file", r.certFile, "key_file", r.keyFile, "err", err)
	}
}

func (r *certReloader) stat() ([2]os.FileInfo, error) {
	var out [2]os.FileInfo
	for i, name := range []string{r.certFile, r.keyFile} {
		fi, err := os.Stat(name) // through symbolic links, as mounted secrets are
		if err != nil {
			return out, fmt.Errorf("read %s: %w", name, err)
		}
		out[i] = fi
	}
	return out, nil
}

func (r *certReloader) load() (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return nil, fmt.Errorf("load %s and %s: %w", r.certFile, r.keyFile, err)
	}
	return &cert, nil
}

// sameFile reports whether a and b are the same file, unchanged.
func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// certAttrs describes a certificate's leaf for the log.
func certAttrs(c *tls.Certificate) []any {
	if c.Leaf == nil {
		return nil
	}
	return []any{"subject", c.Leaf.Subject.String(), "dns_names", c.Leaf.DNSNames,
		"not_after", c.Leaf.NotAfter.UTC().Format(time.RFC3339)}
}
