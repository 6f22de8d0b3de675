package cmdline

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// newTestFlags is the flag set of a subcommand "facturad demo" with a
// flag read from the environment, one with a default in words, and an
// alias.
func newTestFlags(stdout, stderr io.Writer) (*Flags, *int, *string) {
	f := New("facturad", "demo", "show the flags", stdout, stderr)
	workers := f.Int("workers", 8, "concurrent callers")
	f.Env("workers", "DEMO_WORKERS")
	id := f.String("run-id", "", "prefix of the ids")
	f.DefaultIs("run-id", "random")
	f.String("run_id", "", "prefix of the ids")
	f.Alias = func(name string) bool { return name == "run_id" }
	return f, workers, id
}

func TestParseEnv(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	tests := []struct {
		name        string
		args        []string
		env         map[string]string
		wantWorkers int
		wantErr     string
	}{
		{"ok/default", nil, nil, 8, ""},
		{"ok/environment", nil, map[string]string{"DEMO_WORKERS": "3"}, 3, ""},
		{"ok/flag wins", []string{"--workers", "5"}, map[string]string{"DEMO_WORKERS": "3"}, 5, ""},
		{"error/environment not a number", nil, map[string]string{"DEMO_WORKERS": "many"}, 0, "DEMO_WORKERS: "},
		{"error/argument", []string{"stray"}, nil, 0, `demo: unexpected arguments ["stray"]`},
		{"error/unknown flag", []string{"--worker", "2"}, nil, 0,
			"demo: unknown flag --worker (did you mean --workers?); `facturad demo --help` lists the flags"},
		{"error/bad value", []string{"--workers", "x"}, nil, 0, `demo: invalid value "x" for --workers: `},
		{"error/no value", []string{"--run-id"}, nil, 0, "demo: flag needs an argument: --run-id;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			f, workers, _ := newTestFlags(&stdout, &stderr)
			err := f.ParseEnv(tt.args, env(tt.env))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n")):
				t.Fatalf("error %v, want one line saying %q", err, tt.wantErr)
			case tt.wantErr == "" && *workers != tt.wantWorkers:
				t.Errorf("workers %d, want %d", *workers, tt.wantWorkers)
			}
			if stdout.Len() > 0 || stderr.Len() > 0 {
				t.Errorf("written while parsing: stdout %q, stderr %q", stdout.String(), stderr.String())
			}
		})
	}
}

// --help writes the help to stdout alone, says what the command does and
// lists each flag once with its default and variable, the alias left out.
func TestHelp(t *testing.T) {
	var stdout, stderr strings.Builder
	f, _, _ := newTestFlags(&stdout, &stderr)
	f.Others = "`facturad help` lists the other commands"
	shown := 0
	f.Shown = func() { shown++ }
	if err := f.ParseEnv([]string{"--help"}, func(string) string { return "" }); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	want := "facturad demo: show the flags\n" +
		"usage: facturad demo [flags]   (`facturad help` lists the other commands)\n\n" +
		"  --run-id\n      prefix of the ids\n      (default: random)\n" +
		"  --workers\n      concurrent callers\n      (default 8; env DEMO_WORKERS)\n"
	if stdout.String() != want || stderr.Len() > 0 || shown != 1 {
		t.Errorf("stdout:\n%s\nwant:\n%s\nstderr %q, shown %d times", stdout.String(), want, stderr.String(), shown)
	}

	// A command of its own, with no flag.
	stdout.Reset()
	g := New("keygen", "", "", &stdout, io.Discard)
	if err := g.ParseEnv([]string{"-h"}, func(string) string { return "" }); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	if want := "usage: keygen\n\nIt takes no flags.\n"; stdout.String() != want {
		t.Errorf("help %q, want %q", stdout.String(), want)
	}
}

func TestLoopbackHost(t *testing.T) {
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"localhost", true}, {"LocalHost", true}, {"127.0.0.1", true}, {"127.8.9.10", true}, {"::1", true},
		{"10.1.2.3", false}, {"0.0.0.0", false}, {"facturas.example.com", false}, {"localhost.example.com", false}, {"", false},
	} {
		if got := LoopbackHost(tt.host); got != tt.want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

// A bad value of a boolean flag is worded with --, as every other flag
// error is.
func TestBoolFlagError(t *testing.T) {
	f := New("facturad", "demo", "", io.Discard, io.Discard)
	f.Bool("migrate", false, "apply migrations")
	err := f.ParseEnv([]string{"--migrate=maybe"}, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), `invalid boolean value "maybe" for --migrate:`) {
		t.Fatalf("err = %v, want the flag named --migrate", err)
	}
}
