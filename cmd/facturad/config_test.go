package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"facturad/pipeline"
	"facturad/tenant/sqlite"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want func(Config) string // returns a complaint, or ""
	}{
		{
			name: "ok/defaults",
			want: func(c Config) string {
				if c != DefaultConfig() {
					return "not the defaults"
				}
				if c.DrainDelay != 5*time.Second || c.AccessLogSample != 1 {
					return "drain delay or access log sample not at their documented defaults"
				}
				return ""
			},
		},
		{
			name: "ok/environment",
			env:  map[string]string{"FACTURAD_LISTEN": ":1", "FACTURAD_ADMIN_LISTEN": ":2", "FACTURAD_MIGRATE": "true", "FACTURAD_SHUTDOWN_TIMEOUT": "5s", "FACTURAD_DRAIN_DELAY": "2s", "FACTURAD_ACCESS_LOG_SAMPLE": "0.25", "FACTURAD_TLS_CERT_FILE": "c.pem", "FACTURAD_TLS_KEY_FILE": "k.pem"},
			want: func(c Config) string {
				if c.Listen != ":1" || c.AdminListen != ":2" || !c.Migrate || c.ShutdownTimeout != 5*time.Second ||
					c.DrainDelay != 2*time.Second || c.AccessLogSample != 0.25 || c.TLSCertFile != "c.pem" || c.TLSKeyFile != "k.pem" {
					return "environment not applied"
				}
				return ""
			},
		},
		{
			name: "ok/flags win over environment, hyphen alias",
			env:  map[string]string{"FACTURAD_ADMIN_LISTEN": ":2"},
			args: []string{"--admin-listen", ":3", "--log_level", "debug"},
			want: func(c Config) string {
				if c.AdminListen != ":3" || c.LogLevel != "debug" {
					return "flags not applied"
				}
				return ""
			},
		},
		{
			name: "ok/tax-authority pace",
			env:  map[string]string{"FACTURAD_HACIENDA_RATE": "2.5"},
			args: []string{"--hacienda-burst", "3"},
			want: func(c Config) string {
				if rate, burst := c.pace(); rate != 2.5 || burst != 3 {
					return "pace not applied"
				}
				if rate, burst := DefaultConfig().pace(); rate != pipeline.DefaultRate || burst != pipeline.DefaultBurst {
					return "default pace is not the pipeline's"
				}
				return ""
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			c, err := LoadConfig(fs, tt.args, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.want(c); msg != "" {
				t.Errorf("%s: %+v", msg, c)
			}
		})
	}
}

func TestLoadConfigErrors(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := LoadConfig(fs, nil, env(map[string]string{"FACTURAD_MIGRATE": "maybe"})); err == nil {
		t.Error("a bad boolean in the environment was accepted")
	}
	for _, v := range []string{"-1", "NaN", "+Inf", "fast"} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		if _, err := LoadConfig(fs, nil, env(map[string]string{"FACTURAD_HACIENDA_RATE": v})); err == nil {
			t.Errorf("hacienda_rate %q was accepted", v)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{name: "ok/embedded default", mutate: func(*Config) {}},
		{name: "ok/postgres with key", mutate: func(c *Config) {
			c.DatabaseURL = "postgres://x"
			c.MasterKey = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
		}},
		{name: "error/postgres without key", mutate: func(c *Config) { c.DatabaseURL = "postgres://x" }, wantErr: "FACTURAD_MASTER_KEY: required"},
		{name: "ok/profiler on loopback", mutate: func(c *Config) { c.PprofListen = "127.0.0.1:6060" }},
		{name: "ok/profiler on localhost", mutate: func(c *Config) { c.PprofListen = "localhost:6060" }},
		{name: "error/profiler on every address", mutate: func(c *Config) { c.PprofListen = ":6060" }, wantErr: "FACTURAD_PPROF_LISTEN"},
		{name: "error/profiler on a public address", mutate: func(c *Config) { c.PprofListen = "10.0.0.5:6060" }, wantErr: "FACTURAD_PPROF_LISTEN"},
		{name: "error/short key", mutate: func(c *Config) { c.MasterKey = "AAAA" }, wantErr: "exactly 32 bytes"},
		{name: "error/environment", mutate: func(c *Config) { c.HaciendaEnv = "prod" }, wantErr: "FACTURAD_HACIENDA_ENV"},
		{name: "error/registry policy", mutate: func(c *Config) { c.RegistryChecks = "strict" }, wantErr: "FACTURAD_REGISTRY_CHECKS"},
		{name: "error/registry ttl", mutate: func(c *Config) { c.RegistryTTL = 0 }, wantErr: "FACTURAD_REGISTRY_TTL"},
		{name: "error/registry url", mutate: func(c *Config) { c.RegistryURL = "api.hacienda.go.cr" }, wantErr: "FACTURAD_REGISTRY_URL"},
		{name: "ok/registry warn", mutate: func(c *Config) { c.RegistryChecks = "warn"; c.RegistryTTL = time.Hour }},
		{name: "error/one override", mutate: func(c *Config) { c.HaciendaAPI = "http://x" }, wantErr: "set both or neither"},
		{name: "error/rate above the limiter's", mutate: func(c *Config) { c.HaciendaRate = 200_000 }, wantErr: "FACTURAD_HACIENDA_RATE"},
		{name: "error/log level", mutate: func(c *Config) { c.LogLevel = "loud" }, wantErr: "FACTURAD_LOG_LEVEL"},
		{name: "ok/public url on the sandbox", mutate: func(c *Config) { c.PublicURL = "http://127.0.0.1:8080" }},
		{name: "ok/public url https", mutate: func(c *Config) { c.HaciendaEnv, c.PublicURL = "production", "https://facturas.example.cr/" }},
		{name: "error/public url http in production", mutate: func(c *Config) { c.HaciendaEnv, c.PublicURL = "production", "http://facturas.example.cr" }, wantErr: "must be https"},
		{name: "error/public url relative", mutate: func(c *Config) { c.PublicURL = "/facturad" }, wantErr: "FACTURAD_PUBLIC_URL"},
		{name: "error/public url with query", mutate: func(c *Config) { c.PublicURL = "https://x.cr/?a=1" }, wantErr: "FACTURAD_PUBLIC_URL"},
		{name: "ok/no drain delay", mutate: func(c *Config) { c.DrainDelay = 0 }},
		{name: "error/drain delay as long as the shutdown timeout", mutate: func(c *Config) { c.DrainDelay = c.ShutdownTimeout }, wantErr: "FACTURAD_DRAIN_DELAY"},
		{name: "error/drain delay longer than the shutdown timeout", mutate: func(c *Config) { c.DrainDelay, c.ShutdownTimeout = 10*time.Second, 5*time.Second }, wantErr: "below FACTURAD_SHUTDOWN_TIMEOUT"},
		{name: "error/negative drain delay", mutate: func(c *Config) { c.DrainDelay = -time.Second }, wantErr: "FACTURAD_DRAIN_DELAY"},
		{name: "ok/access log sampled", mutate: func(c *Config) { c.AccessLogSample = 0.01 }},
		{name: "error/access log sample above 1", mutate: func(c *Config) { c.AccessLogSample = 1.5 }, wantErr: "FACTURAD_ACCESS_LOG_SAMPLE"},
		{name: "ok/tls pair", mutate: func(c *Config) { c.TLSCertFile, c.TLSKeyFile = "tls.crt", "tls.key" }},
		{name: "error/tls certificate without key", mutate: func(c *Config) { c.TLSCertFile = "tls.crt" }, wantErr: "FACTURAD_TLS_CERT_FILE and FACTURAD_TLS_KEY_FILE"},
		{name: "ok/admin credentials", mutate: func(c *Config) {
			c.AdminUser, c.AdminPassword, c.AdminToken = "ops@example.cr", "twelve-chars", strings.Repeat("t", 32)
		}},
		{name: "error/admin password too short", mutate: func(c *Config) { c.AdminPassword = "eleven-char" }, wantErr: "FACTURAD_ADMIN_PASSWORD: must have at least 12 characters"},
		{name: "error/admin token too short", mutate: func(c *Config) { c.AdminToken = strings.Repeat("t", 31) }, wantErr: "FACTURAD_ADMIN_TOKEN: must have at least 32 characters"},
		{name: "error/admin user", mutate: func(c *Config) { c.AdminUser = "a b" }, wantErr: "FACTURAD_ADMIN_USER: must have 3 to 64"},
		{name: "ok/webhooks to private addresses in the sandbox", mutate: func(c *Config) { c.WebhookAllowPrivate = true }},
		{name: "error/webhooks to private addresses outside the sandbox", mutate: func(c *Config) { c.HaciendaEnv, c.WebhookAllowPrivate = "staging", true }, wantErr: "FACTURAD_WEBHOOK_ALLOW_PRIVATE: only with FACTURAD_HACIENDA_ENV sandbox"},
		{name: "ok/deliveries kept for ever", mutate: func(c *Config) { c.DeliveryRetention = 0 }},
		{name: "error/negative delivery retention", mutate: func(c *Config) { c.DeliveryRetention = -time.Hour }, wantErr: "FACTURAD_DELIVERY_RETENTION: must not be negative"},
		{name: "error/tls key without certificate", mutate: func(c *Config) { c.TLSKeyFile = "tls.key" }, wantErr: "FACTURAD_TLS_CERT_FILE and FACTURAD_TLS_KEY_FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			err := c.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			// A command reading some settings only is held to the
			// problems of those (validateFor), found by the setting each
			// is about; its message starts with that setting's name, here
			// its variable, as none was given.
			for _, p := range c.problems() {
				if !slices.ContainsFunc(c.settings(), func(s setting) bool { return s.name == p.setting }) {
					t.Errorf("the problem %q is about %q, no setting", p, p.setting)
				}
				if !strings.HasPrefix(p.Error(), settingEnv(p.setting)+" ") && !strings.HasPrefix(p.Error(), settingEnv(p.setting)+":") {
					t.Errorf("the problem %q does not start with %s", p, settingEnv(p.setting))
				}
			}
		})
	}
}

// backup and rekey list, take and read from the environment only the
// settings they use: not the service's delivery, TLS or listener settings,
// whose presence in their help said they mattered, and whose bad value in
// a shared environment would have failed them.
func TestCommandSettings(t *testing.T) {
	names := map[string]bool{}
	for _, s := range (&Config{}).settings() {
		names[s.name] = true
	}
	for cmd, only := range commandSettings {
		for _, n := range only {
			if !names[n] {
				t.Errorf("%s: %q is no setting", cmd, n)
			}
		}
	}
	for _, tt := range []struct {
		cmd       string
		want, not []string
	}{
		{"backup", []string{"--data-dir", "--database-url", "--master-key", "--out", "--sandbox"},
			[]string{"--webhook-workers", "--smtp-url", "--listen", "--tls-cert-file", "--drain-delay", "--master-key-previous", "--log-level"}},
		{"rekey", []string{"--data-dir", "--database-url", "--master-key", "--master-key-previous", "--log-level"},
			[]string{"--webhook-workers", "--smtp-url", "--listen", "--tls-cert-file", "--drain-delay", "--migrate", "--out"}},
		{"requeue-emails", []string{"--data-dir", "--database-url", "--since", "--company"},
			[]string{"--master-key", "--webhook-workers", "--smtp-url", "--listen", "--log-level", "--migrate"}},
		{"migrate", []string{"--database-url", "--log-level"},
			[]string{"--data-dir", "--master-key", "--webhook-workers", "--listen", "--migrate", "--redis-url"}},
		{"admin-reset", []string{"--data-dir", "--database-url", "--redis-url", "--master-key", "--master-key-previous",
			"--admin-user", "--admin-password", "--admin-token", "--log-level"},
			[]string{"--webhook-workers", "--smtp-url", "--listen", "--admin-listen", "--tls-cert-file", "--drain-delay", "--migrate", "--lease", "--out"}},
	} {
		t.Run("ok/"+tt.cmd+" help", func(t *testing.T) {
			var stdout strings.Builder
			if err := run(context.Background(), []string{tt.cmd, "--help"}, &stdout, io.Discard, env(nil)); !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("err = %v, want flag.ErrHelp", err)
			}
			blocks := helpBlocks(t, stdout.String())
			for _, f := range tt.want {
				if _, ok := blocks[strings.TrimPrefix(f, "--")]; !ok {
					t.Errorf("%s --help does not list %s:\n%s", tt.cmd, f, stdout.String())
				}
			}
			for _, f := range tt.not {
				if strings.Contains(stdout.String(), f+"\n") {
					t.Errorf("%s --help lists %s, which it does not use:\n%s", tt.cmd, f, stdout.String())
				}
			}
			if len(blocks) != len(tt.want) {
				t.Errorf("%s --help lists %d flags, want %d:\n%s", tt.cmd, len(blocks), len(tt.want), stdout.String())
			}
		})
		t.Run("ok/"+tt.cmd+"'s help words a setting its own way", func(t *testing.T) {
			var stdout strings.Builder
			_ = run(context.Background(), []string{tt.cmd, "--help"}, &stdout, io.Discard, env(nil))
			for name, h := range commandHelp[tt.cmd] {
				if !strings.Contains(stdout.String(), h.usage) || !strings.Contains(stdout.String(), h.def) {
					t.Errorf("%s --help does not give %s its own wording %+v:\n%s", tt.cmd, name, h, stdout.String())
				}
			}
		})
		t.Run("error/"+tt.cmd+" takes no other setting's flag", func(t *testing.T) {
			err := run(context.Background(), []string{tt.cmd, "--webhook-workers", "3"}, io.Discard, io.Discard, env(nil))
			if err == nil || !strings.Contains(err.Error(), "webhook-workers") {
				t.Fatalf("err = %v, want the unknown flag named", err)
			}
		})
	}
	// The service's environment, with a value backup would have refused
	// before, does not stop a backup, which does not use it.
	dir := t.TempDir()
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, "facturad.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	out := filepath.Join(t.TempDir(), "copy.db")
	err = run(context.Background(), []string{"backup", "--out", out}, io.Discard, io.Discard,
		env(map[string]string{"FACTURAD_DATA_DIR": dir, "FACTURAD_WEBHOOK_WORKERS": "many", "FACTURAD_SMTP_URL": "ftp://nowhere"}))
	if err != nil {
		t.Fatalf("backup in the service's environment: %v", err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no backup written: %v", err)
	}
}

// Each command's --help, written to stdout, lists each of its flags once
// (a setting under its hyphenated name only), with its usage and then one
// line holding exactly one default, the real one, and the environment
// variable it is read from.
func TestHelpListsEachSettingOnce(t *testing.T) {
	var shown *commandFlags
	helpShown = func(c *commandFlags) { shown = c }
	defer func() { helpShown = nil }()
	for _, cm := range commands {
		cmd := cm[0]
		t.Run("ok/"+cmd, func(t *testing.T) {
			shown = nil
			var stdout, stderr strings.Builder
			err := run(context.Background(), []string{cmd, "--help"}, &stdout, &stderr, env(nil))
			if !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("err = %v, want flag.ErrHelp", err)
			}
			if stderr.Len() > 0 {
				t.Errorf("help wrote to stderr: %q", stderr.String())
			}
			if shown == nil || shown.cmd != cmd {
				t.Fatalf("no flag set of %s was shown", cmd)
			}
			help := stdout.String()
			if !strings.HasPrefix(help, "facturad "+cmd+": "+cm[1]+"\n") {
				t.Errorf("help does not start with what %s does:\n%s", cmd, help)
			}
			blocks := helpBlocks(t, help)
			listed := 0
			shown.VisitAll(func(f *flag.Flag) {
				s, isSetting := shown.settings[f.Name]
				if isSetting && f.Name != s.flagName() {
					if _, ok := blocks[f.Name]; ok {
						t.Errorf("the alias --%s is listed", f.Name)
					}
					return
				}
				listed++
				b, ok := blocks[f.Name]
				if !ok {
					t.Errorf("--%s is not listed", f.Name)
					return
				}
				if b.usage != f.Usage {
					t.Errorf("--%s: usage %q, want %q", f.Name, b.usage, f.Usage)
				}
				if n := strings.Count(b.usage+b.notes, "default"); n != 1 {
					t.Errorf("--%s says default %d times: %q %q", f.Name, n, b.usage, b.notes)
				}
				if isSetting {
					checkSettingNotes(t, s, b.notes)
				} else {
					checkFlagNotes(t, shown, f, b.notes)
				}
			})
			if listed != len(blocks) {
				t.Errorf("%d flags listed, the command has %d", len(blocks), listed)
			}
			if len(shown.settings) > 0 && commandSettings[cmd] == nil {
				for _, want := range []string{`(default ":8080"; env FACTURAD_LISTEN)`, `(default 30s; env FACTURAD_SHUTDOWN_TIMEOUT)`,
					`(default false; env FACTURAD_MIGRATE)`, `(default 5m; env FACTURAD_FECHA_EMISION_AHEAD)`, `(default 50; env FACTURAD_HACIENDA_RATE)`} {
					if !strings.Contains(help, want) {
						t.Errorf("no %q in:\n%s", want, help)
					}
				}
			}
		})
	}
	t.Run("ok/help lists the commands", func(t *testing.T) {
		var out strings.Builder
		if err := run(context.Background(), []string{"help"}, &out, io.Discard, env(nil)); err != nil {
			t.Fatal(err)
		}
		for _, c := range commands {
			if !strings.Contains(out.String(), "  "+c[0]+" ") {
				t.Errorf("command %s not listed:\n%s", c[0], out.String())
			}
		}
	})
	t.Run("error/unknown flag is the error alone, which main writes to stderr", func(t *testing.T) {
		var stdout, stderr strings.Builder
		err := run(context.Background(), []string{"sandbox", "--no-such-flag"}, &stdout, &stderr, env(nil))
		if err == nil || errors.Is(err, flag.ErrHelp) || !strings.Contains(err.Error(), "--no-such-flag") || !strings.Contains(err.Error(), "facturad sandbox --help") {
			t.Fatalf("err = %v", err)
		}
		if stdout.Len() > 0 || stderr.Len() > 0 {
			t.Errorf("the help was written beside the error: stdout %q, stderr %q", stdout.String(), stderr.String())
		}
	})
}

// helpBlock is what a help says of one flag.
type helpBlock struct{ usage, notes string }

// helpBlocks reads a help's flags: "  --name", its usage, and its notes in
// parentheses, each on a line of its own.
func helpBlocks(t *testing.T, help string) map[string]helpBlock {
	t.Helper()
	blocks := map[string]helpBlock{}
	lines := strings.Split(help, "\n")
	for i, l := range lines {
		name, ok := strings.CutPrefix(l, "  --")
		if !ok {
			continue
		}
		if i+2 >= len(lines) || !strings.HasPrefix(lines[i+1], "      ") || !strings.HasPrefix(lines[i+2], "      (") {
			t.Errorf("--%s is not followed by its usage and notes", name)
			continue
		}
		if _, dup := blocks[name]; dup {
			t.Errorf("--%s listed twice", name)
		}
		blocks[name] = helpBlock{usage: strings.TrimPrefix(lines[i+1], "      "), notes: strings.TrimPrefix(lines[i+2], "      ")}
	}
	return blocks
}

// checkSettingNotes checks a setting's notes: its default as DefaultConfig
// has it (or in words where DefaultConfig leaves it zero), then its
// environment variable.
func checkSettingNotes(t *testing.T, s setting, notes string) {
	t.Helper()
	def, ok := strings.CutSuffix(notes, "; env FACTURAD_"+strings.ToUpper(s.name)+")")
	if !ok {
		t.Errorf("%s: notes %q do not end with its environment variable", s.name, notes)
		return
	}
	def = strings.TrimPrefix(def, "(")
	var want, zero Config = DefaultConfig(), Config{}
	wantValue := settingValue(t, &want, s.name)
	switch {
	case def == "default unset" || strings.HasPrefix(def, "default: "):
		if !reflect.ValueOf(wantValue).IsZero() {
			t.Errorf("%s: %q, but its default is %v", s.name, def, wantValue)
		}
		if words := strings.TrimPrefix(def, "default: "); words != def && words != s.def {
			t.Errorf("%s: %q, not its words %q", s.name, def, s.def)
		}
	case strings.HasPrefix(def, "default "):
		v := strings.TrimPrefix(def, "default ")
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		for _, z := range zero.settings() {
			if z.name == s.name {
				if err := z.set(v); err != nil {
					t.Fatalf("%s: shown default %q does not parse: %v", s.name, v, err)
				}
			}
		}
		if got := settingValue(t, &zero, s.name); got != wantValue {
			t.Errorf("%s: shown default %q is %v, DefaultConfig has %v", s.name, v, got, wantValue)
		}
	default:
		t.Errorf("%s: notes %q hold no default", s.name, notes)
	}
}

// settingValue is the value of c's setting name.
func settingValue(t *testing.T, c *Config, name string) any {
	t.Helper()
	for _, s := range c.settings() {
		if s.name != name {
			continue
		}
		switch {
		case s.str != nil:
			return *s.str
		case s.bool != nil:
			return *s.bool
		case s.dur != nil:
			return *s.dur
		case s.days != nil:
			return *s.days
		case s.num != nil:
			return *s.num
		case s.real != nil:
			return *s.real
		}
	}
	t.Fatalf("no setting %s", name)
	return nil
}

// checkFlagNotes checks a command's own flag's notes: its default value
// (or, for a zero value that stands for something else, words), then the
// environment variable it is read from, which must be read.
func checkFlagNotes(t *testing.T, fs *commandFlags, f *flag.Flag, notes string) {
	t.Helper()
	inner, open := strings.CutPrefix(notes, "(")
	inner, closed := strings.CutSuffix(inner, ")")
	if !open || !closed {
		t.Errorf("--%s: notes %q not in parentheses", f.Name, notes)
		return
	}
	def, envName, hasEnv := strings.Cut(inner, "; env ")
	switch {
	case def == "default unset":
		if f.DefValue != "" {
			t.Errorf("--%s: shown unset, default %q", f.Name, f.DefValue)
		}
	case strings.HasPrefix(def, "default: "):
		switch f.DefValue {
		case "", "0", "0s", "false":
		default:
			t.Errorf("--%s: a default in words (%q) over the value %q", f.Name, def, f.DefValue)
		}
	case strings.HasPrefix(def, "default "):
		v := strings.TrimPrefix(def, "default ")
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		if v != f.DefValue {
			t.Errorf("--%s: shown default %q, the flag's is %q", f.Name, v, f.DefValue)
		}
	default:
		t.Errorf("--%s: notes %q hold no default", f.Name, notes)
	}
	if want := fs.EnvOf(f.Name); envName != want || hasEnv != (want != "") {
		t.Errorf("--%s: environment %q shown, %q read", f.Name, envName, want)
	}
	if !hasEnv {
		return
	}
	// The variable is read when the flag is not given.
	if err := fs.ParseEnv(nil, env(map[string]string{envName: "7"})); err != nil {
		t.Fatalf("--%s from %s: %v", f.Name, envName, err)
	}
	if got := f.Value.String(); got != "7" {
		t.Errorf("--%s is %q with %s=7", f.Name, got, envName)
	}
}

// The command itself exits 0 on --help, with the help on stdout and
// nothing on stderr; keygen prints its help, not a key.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"keygen", "--help"}, {"sandbox", "-h"}, {"help"}} {
		t.Run("ok/"+strings.Join(args, " "), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), asServiceEnv+"=1")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v; stderr %q", err, stderr.String())
			}
			if stderr.Len() > 0 || !strings.Contains(stdout.String(), "usage: facturad") {
				t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
			}
			if strings.Contains(stdout.String(), "=\n") {
				t.Errorf("keygen printed a key: %q", stdout.String())
			}
		})
	}
	// A mistyped flag gets one line on stderr, naming it, a flag of the
	// command spelled close to it, and --help; not the help around it.
	for _, tt := range []struct{ args, want []string }{
		{[]string{"serve", "--trusted-ca", "ca.pem"}, []string{"facturad: serve: unknown flag --trusted-ca (did you mean --sandbox-trusted-ca?)", "`facturad serve --help`"}},
		{[]string{"keygen", "--foo"}, []string{"facturad: keygen: unknown flag --foo;", "`facturad keygen --help`"}},
		{[]string{"sandbox", "--listn", ":0"}, []string{"unknown flag --listn (did you mean --listen?)"}},
		{[]string{"backup", "--out"}, []string{"facturad: backup: flag needs an argument: --out;"}},
	} {
		t.Run("error/"+strings.Join(tt.args, " ")+" is one line", func(t *testing.T) {
			cmd := exec.Command(os.Args[0], tt.args...)
			cmd.Env = append(os.Environ(), asServiceEnv+"=1")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			var ee *exec.ExitError
			if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("err %v, want exit 1; stderr %q", err, stderr.String())
			}
			if stdout.Len() > 0 || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("want one line on stderr and nothing on stdout; stdout %q, stderr %q", stdout.String(), stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q does not say %q", stderr.String(), w)
				}
			}
		})
	}
	t.Run("error/a bad flag exits 1", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "keygen", "--bogus")
		cmd.Env = append(os.Environ(), asServiceEnv+"=1")
		var stdout strings.Builder
		cmd.Stdout = &stdout
		var ee *exec.ExitError
		if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 1 || stdout.Len() > 0 {
			t.Errorf("err %v, stdout %q", err, stdout.String())
		}
	})
}

// No command takes arguments after its flags: a stray word (a flag value
// after a boolean flag, a forgotten --) is refused by name, before any
// work.
func TestUnexpectedArguments(t *testing.T) {
	for _, cmd := range []string{"serve", "migrate", "keygen", "mkcert", "sandbox", "backup", "rekey", "admin-reset", "requeue-emails"} {
		t.Run("error/"+cmd, func(t *testing.T) {
			var stdout, stderr strings.Builder
			err := run(context.Background(), []string{cmd, "stray"}, &stdout, &stderr, func(string) string { return "" })
			if want := cmd + `: unexpected arguments ["stray"]`; err == nil || err.Error() != want {
				t.Errorf("err %v, want %q", err, want)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
}
