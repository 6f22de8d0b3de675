package gateway

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testPair is a self-signed certificate for 127.0.0.1 and its key, PEM.
type testPair struct {
	cert    *x509.Certificate
	certPEM []byte
	keyPEM  []byte
}

func newTestPair(t *testing.T, cn string) testPair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		IsCA:                  true, // its own authority, so that a client can trust it alone
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return testPair{
		cert:    cert,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	}
}

// replaceFile writes data to name through a new file renamed over it, as
// a mounted secret or a certificate tool replaces a file.
func replaceFile(t *testing.T, name string, data []byte) {
	t.Helper()
	tmp := name + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, name); err != nil {
		t.Fatal(err)
	}
}

// tlsServer serves the API over TLS on a loopback port with the pair in
// files it returns; the files are looked at on every handshake.
func tlsServer(t *testing.T, p testPair) (addr, certFile, keyFile string, logs *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	replaceFile(t, certFile, p.certPEM)
	replaceFile(t, keyFile, p.keyPEM)
	logs = &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	cfg, err := newTLSConfig(certFile, keyFile, log, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Tenants: &fakeTenants{}, Logger: log, TLSConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		if err := srv.api.Shutdown(); err != nil {
			t.Error(err)
		}
		<-done
	})
	return ln.Addr().String(), certFile, keyFile, logs
}

// servedSerial makes a TLS 1.2+ handshake trusting nothing in particular
// and returns the serial number of the certificate served.
func servedSerial(t *testing.T, addr string) *big.Int {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber
}

func TestTLSServesHTTPS(t *testing.T) {
	p := newTestPair(t, "facturad.test")
	addr, _, _, _ := tlsServer(t, p)
	roots := x509.NewCertPool()
	roots.AddCert(p.cert)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}, Timeout: 10 * time.Second}
	resp, err := hc.Get("https://" + addr + "/api/companies/v4")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// No credentials: the A.7 401 of the API itself, over TLS.
	if resp.StatusCode != 401 || resp.TLS == nil || !strings.Contains(string(body), "statusCode") {
		t.Fatalf("status %d, tls %v: %s", resp.StatusCode, resp.TLS != nil, body)
	}
	// Plain HTTP on the TLS port gets no answer.
	if resp, err := http.Get("http://" + addr + "/api/companies/v4"); err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("plain HTTP on the TLS port: %d", resp.StatusCode)
		}
	}
}

func TestTLSRefusesOldVersionsAndWeakSuites(t *testing.T) {
	addr, _, _, _ := tlsServer(t, newTestPair(t, "facturad.test"))
	tests := []struct {
		name string
		cfg  *tls.Config
		ok   bool
	}{
		{"ok/TLS 1.3", &tls.Config{MinVersion: tls.VersionTLS13}, true},
		{"ok/TLS 1.2 with ECDHE and GCM", &tls.Config{MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}, true},
		{"error/TLS 1.1", &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}, false},
		{"error/TLS 1.2 with CBC", &tls.Config{MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.InsecureSkipVerify = true
			conn, err := tls.Dial("tcp", addr, tt.cfg)
			if err == nil {
				conn.Close()
			}
			if (err == nil) != tt.ok {
				t.Fatalf("handshake error %v, want success %v", err, tt.ok)
			}
		})
	}
}

func TestTLSReloadsTheCertificate(t *testing.T) {
	first := newTestPair(t, "first")
	addr, certFile, keyFile, logs := tlsServer(t, first)
	if got := servedSerial(t, addr); got.Cmp(first.cert.SerialNumber) != 0 {
		t.Fatalf("served %v, want the first pair's %v", got, first.cert.SerialNumber)
	}

	second := newTestPair(t, "second")
	replaceFile(t, keyFile, second.keyPEM)
	replaceFile(t, certFile, second.certPEM)
	if got := servedSerial(t, addr); got.Cmp(second.cert.SerialNumber) != 0 {
		t.Fatalf("after replacing the files: served %v, want the second pair's %v", got, second.cert.SerialNumber)
	}

	tests := []struct {
		name      string
		cert, key []byte
		why       string
	}{
		{"error/broken certificate", []byte("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"), second.keyPEM, "failed to"},
		{"error/key of another pair", second.certPEM, newTestPair(t, "other").keyPEM, "does not match"},
		{"error/empty files", nil, nil, "failed to find"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replaceFile(t, keyFile, tt.key)
			replaceFile(t, certFile, tt.cert)
			if got := servedSerial(t, addr); got.Cmp(second.cert.SerialNumber) != 0 {
				t.Fatalf("served %v, want the last good pair's %v", got, second.cert.SerialNumber)
			}
			if !strings.Contains(logs.String(), "serving the previous certificate") || !strings.Contains(logs.String(), tt.why) {
				t.Errorf("the failure is not logged with %q:\n%s", tt.why, logs)
			}
		})
	}

	// Repaired: the new good pair is served.
	third := newTestPair(t, "third")
	replaceFile(t, keyFile, third.keyPEM)
	replaceFile(t, certFile, third.certPEM)
	if got := servedSerial(t, addr); got.Cmp(third.cert.SerialNumber) != 0 {
		t.Fatalf("after a repair: served %v, want the third pair's %v", got, third.cert.SerialNumber)
	}
}

func TestTLSReloadWaitsForTheInterval(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "c"), filepath.Join(dir, "k")
	first, second := newTestPair(t, "first"), newTestPair(t, "second")
	replaceFile(t, certFile, first.certPEM)
	replaceFile(t, keyFile, first.keyPEM)
	cfg, err := newTLSConfig(certFile, keyFile, slog.New(slog.DiscardHandler), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	replaceFile(t, certFile, second.certPEM)
	replaceFile(t, keyFile, second.keyPEM)
	c, err := cfg.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Leaf.SerialNumber.Cmp(first.cert.SerialNumber) != 0 {
		t.Error("the files were read again before the interval passed")
	}
}

func TestNewTLSConfigRefusesUnusableFiles(t *testing.T) {
	dir := t.TempDir()
	p := newTestPair(t, "x")
	certFile, keyFile := filepath.Join(dir, "c"), filepath.Join(dir, "k")
	replaceFile(t, certFile, p.certPEM)
	replaceFile(t, keyFile, newTestPair(t, "y").keyPEM)
	tests := []struct {
		name, cert, key string
	}{
		{"error/no key file named", certFile, ""},
		{"error/missing file", certFile, filepath.Join(dir, "absent")},
		{"error/key of another pair", certFile, keyFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewTLSConfig(tt.cert, tt.key, slog.New(slog.DiscardHandler)); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
