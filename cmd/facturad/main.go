// Command facturad is the facturad service: a multi-tenant gateway that
// issues Costa Rican electronic tax documents (comprobantes electrónicos
// v4.4) and submits them to the Ministerio de Hacienda.
//
// Usage:
//
//	facturad [serve] [flags]   run the service (the default)
//	facturad migrate [flags]   apply the PostgreSQL migrations and exit
//	facturad sandbox [flags]   run the tax-authority sandbox alone
//	facturad mkcert [flags]    mint a throwaway test certificate (.p12)
//	facturad keygen            print a new random master key (base64)
//	facturad backup --out FILE copy the embedded store (and the sandbox's state) while it runs
//	facturad rekey [flags]     re-wrap every sealed value under a new master key
//	facturad admin-reset [flags] give the bootstrap admin new credentials
//	facturad version           print the build's version (also --version)
//
// Every flag also reads an environment variable FACTURAD_<NAME>; run
// `facturad serve -h` for the list.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"facturad/gateway/requestid"
)

func main() {
	ctx, stop := notifyStop(context.Background())
	defer stop()
	if cmd, _ := subcommand(os.Args[1:]); cmd == "serve" {
		if _, set := os.LookupEnv("GOGC"); !set {
			debug.SetGCPercent(defaultGCPercent)
		}
		setMemoryLimit(os.Getenv)
	}
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // --help was asked for and written to stdout
		}
		fmt.Fprintln(os.Stderr, "facturad:", err)
		os.Exit(1)
	}
}

// stopSignal is the cause of main's context once a signal stopped it:
// which signal (interactiveStop tells SIGINT from SIGTERM).
type stopSignal struct{ os.Signal }

func (s stopSignal) Error() string { return s.Signal.String() + " signal received" }

// Is makes a stop by a signal a cancellation, as signal.NotifyContext's
// cause is.
func (s stopSignal) Is(target error) bool { return target == context.Canceled }

// notifyStop is signal.NotifyContext for SIGINT and SIGTERM, whose
// context's cause (context.Cause) is the stopSignal that arrived.
func notifyStop(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			cancel(stopSignal{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(context.Canceled)
	}
}

// interactiveStop reports whether ctx was stopped by SIGINT: Ctrl-C in a
// terminal, where nothing routes traffic to the process and the drain
// delay would only keep its user waiting. Orchestrators, load balancers'
// hosts and init systems stop a service with SIGTERM (Kubernetes, Docker
// and systemd by default), which keeps the drain.
func interactiveStop(ctx context.Context) bool {
	var s stopSignal
	return errors.As(context.Cause(ctx), &s) && s.Signal == os.Interrupt
}

// subcommand splits the arguments into the subcommand (serve when none is
// named) and its own arguments.
func subcommand(args []string) (cmd string, rest []string) {
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		return args[0], args[1:]
	}
	return "serve", args
}

// defaultGCPercent is the service's garbage-collection target when GOGC is
// not set. Most of what a send allocates (370–390 KB per send in
// BenchmarkSend, the in-process sandbox included) dies with the call, so
// collecting less often took about a tenth off a document's CPU
// (docs/performance.md); the cost in memory was not measured apart.
const defaultGCPercent = 400

// run dispatches a subcommand. It is main without the process: tests call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		return runVersion(nil, stdout, stderr)
	}
	cmd, args := subcommand(args)
	switch cmd {
	case "serve":
		return runServe(ctx, args, stdout, stderr, getenv)
	case "migrate":
		return runMigrate(ctx, args, stdout, stderr, getenv)
	case "sandbox":
		return runSandbox(ctx, args, stdout, stderr, getenv)
	case "mkcert":
		return runMkcert(args, stdout, stderr)
	case "backup":
		return runBackup(ctx, args, stdout, stderr, getenv)
	case "rekey":
		return runRekey(ctx, args, stdout, stderr, getenv)
	case "admin-reset":
		return runAdminReset(ctx, args, stdout, stderr, getenv)
	case "requeue":
		return runRequeue(ctx, args, stdout, stderr, getenv)
	case "requeue-emails":
		return runRequeueEmails(ctx, args, stdout, stderr, getenv)
	case "keygen":
		return runKeygen(args, stdout, stderr)
	case "version":
		return runVersion(args, stdout, stderr)
	case "help":
		return writeUsage(stdout)
	default:
		var b strings.Builder
		_ = writeUsage(&b)
		return fmt.Errorf("unknown command %q\n%s", cmd, b.String())
	}
}

// runKeygen prints a new random master key, base64 of 32 bytes.
func runKeygen(args []string, stdout, stderr io.Writer) error {
	fs := newCommandFlags("keygen", stdout, stderr, nil)
	if err := fs.ParseEnv(args, func(string) string { return "" }); err != nil {
		return err
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return err
	}
	_, err := fmt.Fprintln(stdout, base64.StdEncoding.EncodeToString(k))
	return err
}

// loadConfig parses the configuration of a subcommand and validates it:
// the settings it uses (commandSettings), and extra, which registers the
// subcommand's own flags beside them (and may set a precheck, run before
// the settings are validated). --help is written to stdout.
func loadConfig(name string, args []string, stdout, stderr io.Writer, getenv func(string) string, extra ...func(*commandFlags)) (Config, error) {
	only := commandSettings[name]
	settings := settingsOf(name, (&Config{}).settings())
	fs := newCommandFlags(name, stdout, stderr, settings)
	for _, f := range extra {
		f(fs)
	}
	c, err := loadSettings(fs.FlagSet, args, getenv, name)
	if err := fs.Finish(err); err != nil {
		return c, err
	}
	if err := fs.NoArgs(); err != nil {
		return c, err
	}
	// A FACTURAD_ variable that is no setting is a mistyped one, whose
	// value would otherwise be silently left out: it stops every command
	// that reads the service's settings, beside the other problems.
	unknown := unknownVariables(environ(), getenv)
	if fs.precheck != nil && len(unknown) == 0 {
		if err := fs.precheck(c); err != nil {
			return c, err
		}
	}
	if err := errors.Join(append(unknown, c.validateFor(only))...); err != nil {
		return c, fmt.Errorf("configuration:\n%w", err)
	}
	return c, nil
}

// newLogger logs JSON lines at level and up to w; a line logged under a
// request's context carries its request_id, and a duration is written with
// its unit (durationAttr).
func newLogger(w io.Writer, level string) *slog.Logger {
	l, _ := parseLevel(level) // validated before
	return slog.New(requestid.NewHandler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: durationAttr})))
}

// durationAttr rewrites a time.Duration value, which slog's JSON handler
// would write as bare nanoseconds, as a number with its unit in the key:
// seconds under a key ending in "_s", milliseconds under one ending in
// "_ms", and otherwise milliseconds with "_ms" added to the key. A
// duration passed to any log call therefore reads as what it is, whoever
// wrote the call.
func durationAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	d := a.Value.Duration()
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case strings.HasSuffix(a.Key, "_s"):
		return slog.Float64(a.Key, d.Seconds())
	case strings.HasSuffix(a.Key, "_ms"):
		return slog.Float64(a.Key, ms)
	}
	return slog.Float64(a.Key+"_ms", ms)
}
