package main

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"facturad/tenant"
)

// warnLines are the lines logged at warn in the JSON log logs, each as its
// keys and values.
func warnLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if line["level"] == "WARN" {
			out = append(out, line)
		}
	}
	return out
}

// Every warning of a start names the settings it is about as the
// operator gave them, as the configuration's errors do: the flag as typed
// or the variable, and by its variable one that was not given; the log's
// "setting" key keeps the setting's name in the table, however given.
func TestStartWarningsNameWhatWasSet(t *testing.T) {
	const key = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	bootstrap := func(generated ...string) func(*wiring) {
		return func(w *wiring) {
			w.printBootstrapChange(io.Discard, tenant.AdminChange{Created: true, Credentials: tenant.Credentials{Usuario: "admin"}, Generated: generated}, false)
		}
	}
	for _, tt := range []struct {
		// setting is given value, once by its flag and once by its
		// variable; an empty value given by a flag is given, one in
		// the environment is not (an empty setting is an unset one).
		setting, value string
		// with are other settings, given in the environment, that make
		// the warning apply.
		with map[string]string
		// warning is a part of the warning's message that only it has.
		warning string
		// key is the warning's "setting"; "" for one that has none.
		key string
		// part, when set, is the part of the start that logs the
		// warning, instead of the configuration's warnings
		// (wiring.warnSettings).
		part func(*wiring)
	}{
		{setting: "database_url", value: "postgres://x", with: map[string]string{"master_key": key},
			warning: " is set without ", key: "database_url"},
		{setting: "redis_url", value: "", with: map[string]string{"database_url": "postgres://x", "master_key": key},
			warning: " is set without ", key: "database_url"},
		{setting: "webhook_allow_private", value: "true",
			warning: "webhooks may call loopback and private addresses", key: "webhook_allow_private"},
		{setting: "listen", value: ":8080",
			warning: "the API serves plain HTTP beyond loopback", key: "listen"},
		{setting: "listen", value: "10.0.0.5:8080",
			warning: "the API serves plain HTTP beyond loopback", key: "listen"},
		{setting: "tls_cert_file", value: "",
			warning: "the API serves plain HTTP beyond loopback", key: "listen"},
		{setting: "tls_key_file", value: "",
			warning: "the API serves plain HTTP beyond loopback", key: "listen"},
		{setting: "trusted_proxies", value: "",
			warning: "the API serves plain HTTP beyond loopback", key: "listen"},
		{setting: "hacienda_api_url", value: "http://127.0.0.1:1", with: map[string]string{"hacienda_token_url": "http://127.0.0.1:2"},
			warning: "no trust bundle for the tax authority's answers", key: "hacienda_trust_bundle"},
		{setting: "hacienda_trust_bundle", value: "", with: map[string]string{"hacienda_api_url": "http://127.0.0.1:1", "hacienda_token_url": "http://127.0.0.1:2"},
			warning: "no trust bundle for the tax authority's answers", key: "hacienda_trust_bundle"},
		{setting: "admin_password", value: "a-long-password-123",
			warning: "bootstrap admin credentials were generated and not shown", part: bootstrap("apiToken")},
		{setting: "admin_token", value: "tok-0123456789abcdef0123456789abcdef",
			warning: "bootstrap admin credentials were generated and not shown", part: bootstrap("contrasena")},
	} {
		s := setting{name: tt.setting}
		for _, via := range []struct{ name, want, not string }{
			{"environment", s.env(), "--" + s.flagName()},
			{"flag", "--" + s.flagName(), s.env()},
		} {
			t.Run("ok/"+tt.setting+"="+tt.value+" by "+via.name, func(t *testing.T) {
				env := map[string]string{}
				for k, v := range tt.with {
					env[settingEnv(k)] = v
				}
				var args []string
				if via.name == "environment" {
					env[s.env()] = tt.value
				} else {
					args = append(args, "--"+s.flagName()+"="+tt.value)
				}
				c, err := loadConfig("serve", args, io.Discard, io.Discard, func(k string) string { return env[k] })
				if err != nil {
					t.Fatalf("the configuration is refused: %v", err)
				}
				var logs syncBuffer
				w := &wiring{c: c, log: newLogger(&logs, c.LogLevel)}
				if tt.part != nil {
					tt.part(w)
				} else {
					w.warnSettings()
				}
				var found []map[string]any
				for _, l := range warnLines(t, logs.String()) {
					if m, _ := l["msg"].(string); strings.Contains(m, tt.warning) {
						found = append(found, l)
					}
				}
				if len(found) != 1 {
					t.Fatalf("%d warnings %q, want 1:\n%s", len(found), tt.warning, logs.String())
				}
				namesAsGiven(t, found[0]["msg"].(string), via.want, via.not)
				if got, _ := found[0]["setting"].(string); got != tt.key {
					t.Errorf("setting %q, want %q", got, tt.key)
				}
			})
		}
	}
}

// The configuration's warnings are given when they apply, and only then.
func TestStartWarnings(t *testing.T) {
	const (
		shared    = "is set without"
		private   = "webhooks may call loopback and private addresses"
		plain     = "the API serves plain HTTP beyond loopback"
		unchecked = "no trust bundle for the tax authority's answers"
	)
	// quiet is a configuration with none of them.
	quiet := func(c *Config) { c.Listen = "127.0.0.1:8080" }
	for _, tt := range []struct {
		name   string
		mutate func(*Config)
		want   []string
	}{
		{"default", func(*Config) {}, []string{plain}},
		{"loopback", quiet, nil},
		{"PostgreSQL and Redis", func(c *Config) { quiet(c); c.DatabaseURL, c.RedisURL = "postgres://x", "redis://r" }, nil},
		{"PostgreSQL alone", func(c *Config) { quiet(c); c.DatabaseURL = "postgres://x" }, []string{shared}},
		{"private webhooks in the sandbox", func(c *Config) { quiet(c); c.WebhookAllowPrivate = true }, []string{private}},
		{"private webhooks elsewhere (refused by Validate)", func(c *Config) { quiet(c); c.HaciendaEnv, c.WebhookAllowPrivate = "staging", true }, nil},
		{"every address behind a named proxy", func(c *Config) { c.Listen, c.TrustedProxies = ":8080", "10.0.0.0/8" }, nil},
		{"every address with TLS", func(c *Config) { c.Listen, c.TLSCertFile, c.TLSKeyFile = ":8443", "tls.crt", "tls.key" }, nil},
		{"a sandbox elsewhere", func(c *Config) { quiet(c); c.HaciendaAPI, c.HaciendaToken = "http://s/api", "http://s/token" }, []string{unchecked}},
		{"a sandbox elsewhere with a bundle", func(c *Config) {
			quiet(c)
			c.HaciendaAPI, c.HaciendaToken, c.HaciendaTrust = "http://s/api", "http://s/token", "ca.pem"
		}, nil},
		{"staging elsewhere", func(c *Config) {
			quiet(c)
			c.HaciendaEnv, c.HaciendaAPI, c.HaciendaToken = "staging", "http://s/api", "http://s/token"
		}, nil},
		{"all at once", func(c *Config) {
			c.DatabaseURL, c.WebhookAllowPrivate, c.HaciendaAPI, c.HaciendaToken = "postgres://x", true, "http://s/api", "http://s/token"
		}, []string{shared, private, plain, unchecked}},
	} {
		t.Run("ok/"+tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			var got []string
			for _, w := range c.warnings() {
				for _, want := range []string{shared, private, plain, unchecked} {
					if strings.Contains(w.msg, want) {
						got = append(got, want)
					}
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("warnings %q, want %q", got, tt.want)
			}
		})
	}
}

// The warning of answers checked against no authority is given exactly
// when the start leaves them without one (openHacienda).
func TestUnanchoredAnswersWarningMatchesTheStart(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(*Config)
	}{
		{"built-in sandbox", func(*Config) {}},
		{"a sandbox elsewhere", func(c *Config) { c.HaciendaAPI, c.HaciendaToken = "http://127.0.0.1:1/api", "http://127.0.0.1:1/token" }},
		{"a sandbox elsewhere with a bundle", func(c *Config) {
			c.HaciendaAPI, c.HaciendaToken, c.HaciendaTrust = "http://127.0.0.1:1/api", "http://127.0.0.1:1/token", "ca.pem"
		}},
		{"staging", func(c *Config) { c.HaciendaEnv = "staging" }},
		{"production elsewhere", func(c *Config) {
			c.HaciendaEnv, c.HaciendaAPI, c.HaciendaToken = "production", "http://127.0.0.1:1/api", "http://127.0.0.1:1/token"
		}},
	} {
		t.Run("ok/"+tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.DataDir = t.TempDir()
			tt.mutate(&c)
			roots := loadedRoots(t, c)
			var stop cleanups
			stop.log = slog.New(slog.DiscardHandler)
			defer stop.run(context.Background())
			_, answers, _, err := openHacienda(context.Background(), c, roots, nil, stop.log, newRegistry(), &stop)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := c.answersUnanchored(), answers.roots == nil; got != want {
				t.Errorf("warned %v, but the answers are without roots: %v", got, want)
			}
		})
	}
}

// loadedRoots is a pool standing for hacienda_trust_bundle's certificates
// when the setting names a file, nil otherwise (loadTrustBundle).
func loadedRoots(t *testing.T, c Config) *x509.CertPool {
	t.Helper()
	if c.HaciendaTrust == "" {
		return nil
	}
	_, _, cert := writeTestCert(t, t.TempDir())
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}
