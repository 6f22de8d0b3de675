package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// withEnviron makes the environment env (NAME=value) the process's, as
// environ lists it, for the test, and returns its getenv.
func withEnviron(t *testing.T, env []string) func(string) string {
	t.Helper()
	saved := environ
	environ = func() []string { return env }
	t.Cleanup(func() { environ = saved })
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return func(k string) string { return vars[k] }
}

// A FACTURAD_ variable that is no setting stops the start, named with the
// setting it probably meant; the variables that other programs of the
// project, its tests and the platforms set are let through.
func TestUnknownVariables(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  []string
		want []string // each a whole line of the error; none: no error
	}{
		{"error/typo", []string{"FACTURAD_LISTN=:8081"}, []string{
			"FACTURAD_LISTN is not a setting; did you mean FACTURAD_LISTEN? (`facturad serve --help` lists every setting; unset it if it is for another program)"}},
		{"error/lower case", []string{"facturad_listen=:8081"}, []string{"facturad_listen is not a setting; did you mean FACTURAD_LISTEN? ("}},
		{"error/a part of a setting's name", []string{"FACTURAD_TRUSTED_CA=ca.pem"}, []string{"FACTURAD_TRUSTED_CA is not a setting; did you mean FACTURAD_SANDBOX_TRUSTED_CA? ("}},
		{"error/two letters off", []string{"FACTURAD_ADMIN_PASWORD=x"}, []string{"FACTURAD_ADMIN_PASWORD is not a setting; did you mean FACTURAD_ADMIN_PASSWORD? ("}},
		{"error/nothing close", []string{"FACTURAD_COLOUR=blue"}, []string{"FACTURAD_COLOUR is not a setting ("}},
		{"error/a port meant as a setting", []string{"FACTURAD_PORT=8081"}, []string{"FACTURAD_PORT is not a setting ("}},
		{"error/a service host that is no address", []string{"FACTURAD_SERVICE_HOST=facturad.example"}, []string{"FACTURAD_SERVICE_HOST is not a setting ("}},
		{"error/each one, in order", []string{"FACTURAD_LISTEN=:8081", "FACTURAD_WEBHOOK_WORKER=3", "FACTURAD_DRAIN_DELYA=0s"}, []string{
			"FACTURAD_DRAIN_DELYA is not a setting; did you mean FACTURAD_DRAIN_DELAY? (",
			"FACTURAD_WEBHOOK_WORKER is not a setting; did you mean FACTURAD_WEBHOOK_WORKERS? ("}},
		{"ok/settings", []string{"FACTURAD_LISTEN=:8081", "FACTURAD_HACIENDA_STAGING_API_URL=https://a", "FACTURAD_HACIENDA_STAGING_TOKEN_URL=https://b", "FACTURAD_HACIENDA_ENV=staging"}, nil},
		{"ok/other programs' and tests' variables", []string{"FACTURAD_SANDBOX_ADMIN_TOKEN=t", "FACTURAD_LOADGEN_URL=http://127.0.0.1:8080",
			"FACTURAD_TEST_RUN_AS_SERVICE=1", "FACTURAD_TEST_FAULT_POINT=signed", "FACTURAD_LIST_BENCH_ROWS=20000", "FACTURAD_EXPORT_MEM_DOCS=1000"}, nil},
		{"ok/kubernetes service links", []string{"FACTURAD_SERVICE_HOST=10.96.0.12", "FACTURAD_SERVICE_PORT=80", "FACTURAD_SERVICE_PORT_API=80",
			"FACTURAD_PORT=tcp://10.96.0.12:80", "FACTURAD_PORT_80_TCP=tcp://10.96.0.12:80", "FACTURAD_PORT_80_TCP_PROTO=tcp",
			"FACTURAD_PORT_80_TCP_PORT=80", "FACTURAD_PORT_80_TCP_ADDR=10.96.0.12",
			"FACTURAD_ADMIN_SERVICE_HOST=fd00::12", "FACTURAD_ADMIN_PORT=tcp://[fd00::12]:9090", "FACTURAD_ADMIN_PORT_9090_TCP_PORT=9090"}, nil},
		{"ok/empty is unset", []string{"FACTURAD_LISTN="}, nil},
		{"ok/other prefixes", []string{"FACTURADO=1", "MY_FACTURAD_LISTN=1", "PATH=/bin"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			getenv := withEnviron(t, tt.env)
			_, err := loadConfig("serve", nil, io.Discard, io.Discard, getenv)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("the start went on")
			}
			lines := strings.Split(err.Error(), "\n")
			if lines[0] != "configuration:" || len(lines) != len(tt.want)+1 {
				t.Fatalf("err = %q, want configuration: and %d lines", err, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i+1], w) {
					t.Errorf("line %d: %q, want %q", i+1, lines[i+1], w)
				}
			}
		})
	}
	t.Run("error/beside the other problems, before the command's own check", func(t *testing.T) {
		getenv := withEnviron(t, []string{"FACTURAD_DATA_DRI=/srv/facturad", "FACTURAD_DATABASE_URL=postgres://x", "FACTURAD_LOG_LEVEL=loud"})
		_, err := loadConfig("backup", nil, io.Discard, io.Discard, getenv)
		want := "configuration:\n" +
			"FACTURAD_DATA_DRI is not a setting; did you mean FACTURAD_DATA_DIR? (`facturad serve --help` lists every setting; unset it if it is for another program)\n" +
			"FACTURAD_MASTER_KEY: required with FACTURAD_DATABASE_URL (PostgreSQL), as base64 of 32 bytes; generate one with `facturad keygen`"
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v, want\n%s", err, want)
		}
	})
}

// The check runs in the command itself, on the process's environment:
// the start stops with the variable named before it listens or writes
// anything, and a test's own variables do not stop it.
func TestUnknownVariableStopsTheProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(os.Args[0], serveArgs("--data-dir", dir)...)
	cmd.Env = append(os.Environ(), asServiceEnv+"=1", "FACTURAD_ADMIN_LISTN=127.0.0.1:0")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("err %v, want exit 1; stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
	want := "facturad: configuration:\nFACTURAD_ADMIN_LISTN is not a setting; did you mean FACTURAD_ADMIN_LISTEN? "
	if !strings.HasPrefix(stderr.String(), want) || stdout.Len() > 0 {
		t.Errorf("stdout %q, stderr %q; want stderr to start %q", stdout.String(), stderr.String(), want)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the refused start made the data folder")
	}
}

// Every FACTURAD_ variable that the project's code, scripts and manifests
// name is a setting or one of otherVariables: a variable added elsewhere
// must be added there too, or the service refuses to start beside it.
func TestOtherVariablesAreTheProjects(t *testing.T) {
	known := map[string]bool{}
	for _, s := range (&Config{}).settings() {
		known[s.env()] = true
	}
	for _, v := range otherVariables {
		known[v] = true
	}
	name := regexp.MustCompile(`FACTURAD_[A-Z0-9_]*[A-Z0-9]`)
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if !slices.Contains([]string{".go", ".sh", ".yaml", ".yml"}, ext) && d.Name() != "Dockerfile" {
			return nil
		}
		// This check's own examples of mistakes.
		if rel, _ := filepath.Rel(root, path); rel == filepath.Join("cmd", "facturad", "environ_test.go") || rel == filepath.Join("cmd", "facturad", "environ.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range name.FindAllString(string(b), -1) {
			// "an environment variable FACTURAD_NAME": the help's
			// placeholder, not a variable.
			if m == "FACTURAD_NAME" {
				continue
			}
			seen[m] = true
			if !known[m] {
				t.Errorf("%s names %s, which is neither a setting nor in otherVariables", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range otherVariables {
		if !seen[v] {
			t.Errorf("otherVariables holds %s, which nothing of the project reads any more", v)
		}
	}
}

// Every message about the configuration names a setting the way the
// operator gave it: FACTURAD_X when it came from the environment, --x
// when from a flag; never the internal name (x_y) nor the other way.
func TestConfigErrorsNameWhatWasSet(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	const key, otherKey = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	for _, tt := range []struct {
		setting, bad string
		// with are other settings, given in the environment, that make
		// the rule apply.
		with map[string]string
		// cmd is the command run (serve when empty); a serve that
		// passes the configuration starts on free loopback ports in a
		// temporary folder and fails on what it reads.
		cmd string
		// part, when set, is the part of the start that fails, called
		// on the loaded configuration instead of a whole start, which
		// would open a store first.
		part func(*wiring) error
	}{
		// Values that do not parse.
		{setting: "migrate", bad: "maybe"},
		{setting: "drain_delay", bad: "fast"},
		{setting: "archive_after", bad: "soon"},
		{setting: "max_conns", bad: "-1"},
		{setting: "hacienda_rate", bad: "NaN"},
		// Values that parse, and their rules.
		{setting: "trusted_proxies", bad: "10.0.0.0/33"},
		{setting: "master_key", bad: "AAAA"},
		{setting: "master_key_previous", bad: "AAAA"},
		{setting: "master_key_previous", bad: key, with: map[string]string{"master_key": key}},
		{setting: "database_url", bad: "postgres://x"}, // master_key: required with it
		{setting: "admin_user", bad: "a b"},
		{setting: "admin_password", bad: "short"},
		{setting: "admin_token", bad: "short"},
		{setting: "hacienda_env", bad: "prod"},
		{setting: "sandbox_answer_profile", bad: "tax"},
		{setting: "hacienda_answer_signer", bad: "MH"},
		{setting: "hacienda_api_url", bad: "http://127.0.0.1:1"},
		{setting: "hacienda_token_url", bad: "http://127.0.0.1:1"},
		{setting: "hacienda_staging_api_url", bad: "http://127.0.0.1:1", with: map[string]string{"hacienda_staging_token_url": "http://127.0.0.1:2"}},
		{setting: "hacienda_production_token_url", bad: "http://127.0.0.1:1", with: map[string]string{"hacienda_env": "production"}},
		{setting: "public_url", bad: "/facturad"},
		{setting: "public_url", bad: "http://facturas.example.cr", with: map[string]string{"hacienda_env": "staging"}},
		{setting: "archive_url", bad: "ftp://bucket"},
		{setting: "archive_after", bad: "-1h"},
		{setting: "archive_access_key", bad: "k"},
		{setting: "archive_secret_key", bad: "k"},
		{setting: "registry_checks", bad: "strict"},
		{setting: "registry_ttl", bad: "0s"},
		{setting: "registry_url", bad: "api.hacienda.go.cr"},
		{setting: "smtp_url", bad: "smtp://mail.example.cr"},
		{setting: "smtp_url", bad: "ftp://mail.example.cr", with: map[string]string{"smtp_from": "facturas@example.cr"}},
		{setting: "smtp_from", bad: "nobody", with: map[string]string{"smtp_url": "smtp://mail.example.cr"}},
		{setting: "webhook_allow_private", bad: "true", with: map[string]string{"hacienda_env": "staging"}},
		{setting: "hacienda_env", bad: "staging", with: map[string]string{"webhook_allow_private": "true"}},
		{setting: "delivery_backoff", bad: "-1s"},
		{setting: "delivery_retention", bad: "-1h"},
		{setting: "webhook_timeout", bad: "-1s"},
		{setting: "log_level", bad: "loud"},
		{setting: "sandbox_processing_delay", bad: "-1s"},
		{setting: "hacienda_rate", bad: "200000"},
		{setting: "state_metrics_interval", bad: "0s"},
		{setting: "callback_wait", bad: "0s"},
		{setting: "shutdown_timeout", bad: "0s"},
		{setting: "shutdown_timeout", bad: "3s"}, // below the drain delay
		{setting: "drain_delay", bad: "40s"},
		{setting: "access_log_sample", bad: "1.5"},
		{setting: "tls_cert_file", bad: "tls.crt"},
		{setting: "tls_key_file", bad: "tls.key"},
		{setting: "pprof_listen", bad: ":6060"},
		// What the start reads after the configuration.
		{setting: "hacienda_trust_bundle", bad: "no-such-bundle.pem"},
		{setting: "sandbox_trusted_ca", bad: "no-such-ca.pem"},
		{setting: "tls_cert_file", bad: "no-such.crt", with: map[string]string{"tls_key_file": "no-such.key"}},
		{setting: "listen", bad: busy.Addr().String()},
		{setting: "admin_listen", bad: busy.Addr().String()},
		{setting: "pprof_listen", bad: busy.Addr().String(), part: func(w *wiring) error { return w.startProfiler(make(chan error, 1)) }},
		{setting: "redis_url", bad: "redis://[::1", part: (*wiring).openCacheAndLimiter},
		// The other commands.
		{setting: "database_url", bad: "postgres://x", cmd: "backup"},
		{setting: "data_dir", bad: "no-such-folder", cmd: "rekey", with: map[string]string{"master_key": key, "master_key_previous": otherKey}},
	} {
		cmd := tt.cmd
		if cmd == "" {
			cmd = "serve"
		}
		s := setting{name: tt.setting}
		for _, via := range []struct{ name, want, not string }{
			{"environment", s.env(), "--" + s.flagName()},
			{"flag", "--" + s.flagName(), s.env()},
		} {
			t.Run("error/"+cmd+" "+tt.setting+"="+tt.bad+" by "+via.name, func(t *testing.T) {
				env := map[string]string{}
				for k, v := range tt.with {
					env[settingEnv(k)] = v
				}
				var args []string
				if cmd == "serve" {
					for _, d := range [][2]string{{"log_level", "error"}, {"listen", "127.0.0.1:0"}, {"admin_listen", "127.0.0.1:0"}, {"data_dir", filepath.Join(t.TempDir(), "data")}} {
						if d[0] != tt.setting {
							env[settingEnv(d[0])] = d[1]
						}
					}
				}
				if via.name == "environment" {
					env[s.env()] = tt.bad
				} else {
					args = append(args, "--"+s.flagName()+"="+tt.bad)
				}
				// A start that passes every check is stopped, and fails
				// the test.
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				getenv := func(k string) string { return env[k] }
				var err error
				if tt.part != nil {
					var c Config
					if c, err = loadConfig(cmd, args, io.Discard, io.Discard, getenv); err != nil {
						t.Fatalf("the configuration is refused: %v", err)
					}
					var stop cleanups
					stop.log = slog.New(slog.DiscardHandler)
					defer stop.run(context.Background())
					err = tt.part(&wiring{c: c, log: stop.log, stop: &stop})
				} else {
					err = run(ctx, append([]string{cmd}, args...), io.Discard, io.Discard, getenv)
				}
				if err == nil {
					t.Fatal("no error")
				}
				namesAsGiven(t, err.Error(), via.want, via.not)
			})
		}
	}
}

// namesAsGiven fails unless msg names a setting as want (the flag or the
// variable the operator gave), never as not (the other form), and no
// setting by its internal name (smtp_url).
func namesAsGiven(t *testing.T, msg, want, not string) {
	t.Helper()
	if !strings.Contains(msg, want) {
		t.Errorf("%q does not name %s", msg, want)
	}
	if strings.Contains(msg, not) {
		t.Errorf("%q names %s, which was not given", msg, not)
	}
	for _, o := range (&Config{}).settings() {
		if strings.Contains(o.name, "_") && regexp.MustCompile(`(^|[^A-Za-z_])`+o.name+`($|[^A-Za-z_])`).MatchString(msg) {
			t.Errorf("%q names the internal %s", msg, o.name)
		}
	}
}
