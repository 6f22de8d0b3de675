package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
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

// writeTestCert writes a self-signed certificate for 127.0.0.1 and its key
// into dir and returns the files and the certificate.
func writeTestCert(t *testing.T, dir string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "facturad.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

func TestServeTLS(t *testing.T) {
	certFile, keyFile, cert := writeTestCert(t, t.TempDir())
	out, api, admin, stop := startService(t, t.TempDir(), "--tls-cert-file", certFile, "--tls-key-file", keyFile)
	defer stop()
	if !strings.Contains(out.String(), "api https://") {
		t.Errorf("the listening line does not say https:\n%s", out)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}, Timeout: 10 * time.Second}
	resp, err := hc.Get("https://" + api + "/api/companies/v4")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.TLS == nil {
		t.Errorf("HTTPS call without credentials: %d", resp.StatusCode)
	}
	// The admin listener stays plain HTTP, for probes and scrapes.
	resp, err = http.Get("http://" + admin + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz %d", resp.StatusCode)
	}
}

func TestAPITLSAndTheClearTextWarning(t *testing.T) {
	certFile, keyFile, _ := writeTestCert(t, t.TempDir())
	const warning = "Basic credentials and API tokens travel in clear text"
	tests := []struct {
		name    string
		mutate  func(*Config)
		tls     bool
		warn    bool
		wantErr string
	}{
		{name: "ok/plain on every address warns", mutate: func(c *Config) { c.Listen = ":8080" }, warn: true},
		{name: "ok/plain on a public address warns", mutate: func(c *Config) { c.Listen = "10.0.0.5:8080" }, warn: true},
		{name: "ok/plain on loopback", mutate: func(c *Config) { c.Listen = "127.0.0.1:8080" }},
		{name: "ok/plain behind a named proxy", mutate: func(c *Config) { c.Listen, c.TrustedProxies = ":8080", "10.0.0.0/8" }},
		{name: "ok/tls", mutate: func(c *Config) { c.Listen, c.TLSCertFile, c.TLSKeyFile = ":8443", certFile, keyFile }, tls: true},
		{name: "error/tls files missing", mutate: func(c *Config) {
			c.TLSCertFile, c.TLSKeyFile = filepath.Join(t.TempDir(), "none.crt"), keyFile
		}, wantErr: "FACTURAD_TLS_CERT_FILE"},
		{name: "error/key of no certificate", mutate: func(c *Config) { c.TLSCertFile, c.TLSKeyFile = keyFile, keyFile }, wantErr: "FACTURAD_TLS_CERT_FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			var logs syncBuffer
			w := &wiring{c: c, log: slog.New(slog.NewJSONHandler(&logs, nil))}
			w.warnSettings()
			cfg, err := w.apiTLS()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (cfg != nil) != tt.tls {
				t.Errorf("TLS config %v, want TLS %v", cfg != nil, tt.tls)
			}
			if got := strings.Contains(logs.String(), warning); got != tt.warn {
				t.Errorf("warned %v, want %v:\n%s", got, tt.warn, logs.String())
			}
		})
	}
}

// webhook_allow_private, a trial setting, is said at warn when the
// service starts, and only when it takes effect (the sandbox).
func TestWebhookAllowPrivateWarns(t *testing.T) {
	const warning = "webhooks may call loopback and private addresses (FACTURAD_WEBHOOK_ALLOW_PRIVATE, a trial setting)"
	for _, tt := range []struct {
		env   string
		allow bool
		warn  bool
	}{
		{"sandbox", true, true},
		{"sandbox", false, false},
		{"production", false, false},
	} {
		c := DefaultConfig()
		c.HaciendaEnv, c.WebhookAllowPrivate = tt.env, tt.allow
		var logs syncBuffer
		w := &wiring{c: c, log: slog.New(slog.NewJSONHandler(&logs, nil))}
		w.warnSettings()
		if got := strings.Contains(logs.String(), warning) && strings.Contains(logs.String(), `"level":"WARN"`); got != tt.warn {
			t.Errorf("%s, allow_private %v: warned %v, want %v:\n%s", tt.env, tt.allow, got, tt.warn, logs.String())
		}
	}
}

// A file named by a setting that cannot be read (the API's TLS pair, a
// trust bundle) stops the start before the store is made: no data folder,
// no master key, nothing printed.
func TestServeReadsFilesBeforeTheStore(t *testing.T) {
	_, keyFile, _ := writeTestCert(t, t.TempDir())
	missing := filepath.Join(t.TempDir(), "none.pem")
	for _, tt := range []struct {
		want string
		args []string
	}{
		{"--tls-cert-file", []string{"--tls-cert-file", missing, "--tls-key-file", keyFile}},
		{"--hacienda-trust-bundle", []string{"--hacienda-trust-bundle", missing}},
		{"--sandbox-trusted-ca", []string{"--sandbox-trusted-ca", missing}},
	} {
		t.Run("error/"+tt.want, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			var stdout, stderr strings.Builder
			err := run(context.Background(), append([]string{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--data-dir", dir}, tt.args...),
				&stdout, &stderr, func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %s", err, tt.want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the data folder was made: %v", err)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
}
