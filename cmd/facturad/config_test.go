package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"facturad/pipeline"
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
		{name: "error/postgres without key", mutate: func(c *Config) { c.DatabaseURL = "postgres://x" }, wantErr: "master_key: required"},
		{name: "ok/profiler on loopback", mutate: func(c *Config) { c.PprofListen = "127.0.0.1:6060" }},
		{name: "ok/profiler on localhost", mutate: func(c *Config) { c.PprofListen = "localhost:6060" }},
		{name: "error/profiler on every address", mutate: func(c *Config) { c.PprofListen = ":6060" }, wantErr: "pprof_listen"},
		{name: "error/profiler on a public address", mutate: func(c *Config) { c.PprofListen = "10.0.0.5:6060" }, wantErr: "pprof_listen"},
		{name: "error/short key", mutate: func(c *Config) { c.MasterKey = "AAAA" }, wantErr: "exactly 32 bytes"},
		{name: "error/environment", mutate: func(c *Config) { c.HaciendaEnv = "prod" }, wantErr: "hacienda_env"},
		{name: "error/one override", mutate: func(c *Config) { c.HaciendaAPI = "http://x" }, wantErr: "set both or neither"},
		{name: "error/rate above the limiter's", mutate: func(c *Config) { c.HaciendaRate = 200_000 }, wantErr: "hacienda_rate"},
		{name: "error/log level", mutate: func(c *Config) { c.LogLevel = "loud" }, wantErr: "log_level"},
		{name: "ok/public url on the sandbox", mutate: func(c *Config) { c.PublicURL = "http://127.0.0.1:8080" }},
		{name: "ok/public url https", mutate: func(c *Config) { c.HaciendaEnv, c.PublicURL = "production", "https://facturas.example.cr/" }},
		{name: "error/public url http in production", mutate: func(c *Config) { c.HaciendaEnv, c.PublicURL = "production", "http://facturas.example.cr" }, wantErr: "must be https"},
		{name: "error/public url relative", mutate: func(c *Config) { c.PublicURL = "/facturad" }, wantErr: "public_url"},
		{name: "error/public url with query", mutate: func(c *Config) { c.PublicURL = "https://x.cr/?a=1" }, wantErr: "public_url"},
		{name: "ok/no drain delay", mutate: func(c *Config) { c.DrainDelay = 0 }},
		{name: "error/drain delay as long as the shutdown timeout", mutate: func(c *Config) { c.DrainDelay = c.ShutdownTimeout }, wantErr: "drain_delay"},
		{name: "error/drain delay longer than the shutdown timeout", mutate: func(c *Config) { c.DrainDelay, c.ShutdownTimeout = 10*time.Second, 5*time.Second }, wantErr: "below shutdown_timeout"},
		{name: "error/negative drain delay", mutate: func(c *Config) { c.DrainDelay = -time.Second }, wantErr: "drain_delay"},
		{name: "ok/access log sampled", mutate: func(c *Config) { c.AccessLogSample = 0.01 }},
		{name: "error/access log sample above 1", mutate: func(c *Config) { c.AccessLogSample = 1.5 }, wantErr: "access_log_sample"},
		{name: "ok/tls pair", mutate: func(c *Config) { c.TLSCertFile, c.TLSKeyFile = "tls.crt", "tls.key" }},
		{name: "error/tls certificate without key", mutate: func(c *Config) { c.TLSCertFile = "tls.crt" }, wantErr: "tls_cert_file and tls_key_file"},
		{name: "error/tls key without certificate", mutate: func(c *Config) { c.TLSKeyFile = "tls.key" }, wantErr: "tls_cert_file and tls_key_file"},
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
		})
	}
}

// Each command's --help lists every setting once, as --name with its
// default and its environment variable.
func TestHelpListsEachSettingOnce(t *testing.T) {
	for _, cmd := range []string{"serve", "migrate", "backup", "rekey", "admin-reset"} {
		t.Run("ok/"+cmd, func(t *testing.T) {
			var out strings.Builder
			err := run(context.Background(), []string{cmd, "--help"}, io.Discard, &out, env(nil))
			if !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("err = %v, want flag.ErrHelp", err)
			}
			help := out.String()
			for _, s := range (&Config{}).settings() {
				flagName := "--" + strings.ReplaceAll(s.name, "_", "-")
				if n := strings.Count(help, "  "+flagName+"\n"); n != 1 {
					t.Errorf("%s listed %d times", flagName, n)
				}
				if strings.Contains(s.name, "_") && strings.Contains(help, "--"+s.name+"\n") {
					t.Errorf("the alias --%s is listed", s.name)
				}
				// The two lines after the flag's say what it is, then its
				// default and environment variable.
				_, after, _ := strings.Cut(help, "  "+flagName+"\n")
				lines := strings.SplitN(after, "\n", 3)
				if len(lines) < 2 {
					t.Fatalf("%s: nothing after it", flagName)
				}
				notes := lines[0] + "\n" + lines[1]
				if !strings.Contains(notes, "env FACTURAD_"+strings.ToUpper(s.name)+")") {
					t.Errorf("%s: no environment variable in %q", flagName, notes)
				}
				if !strings.Contains(notes, "default") {
					t.Errorf("%s: no default in %q", flagName, notes)
				}
			}
			for _, want := range []string{`(default ":8080"; env FACTURAD_LISTEN)`, `(default 30s; env FACTURAD_SHUTDOWN_TIMEOUT)`, `(default false; env FACTURAD_MIGRATE)`} {
				if !strings.Contains(help, want) {
					t.Errorf("no %q in:\n%s", want, help)
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
}
