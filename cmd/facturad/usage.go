package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// commands are the subcommands and what each does, for `facturad help`.
var commands = [][2]string{
	{"serve", "run the service (the default)"},
	{"migrate", "apply the PostgreSQL migrations and exit"},
	{"sandbox", "run the tax-authority sandbox alone"},
	{"mkcert", "mint a throwaway test certificate (.p12)"},
	{"keygen", "print a new random master key (base64)"},
	{"loadgen", "load a running service and report its throughput"},
	{"backup", "copy the embedded store while it runs (--out FILE)"},
	{"rekey", "re-wrap every sealed value under a new master key"},
	{"admin-reset", "give the bootstrap admin new credentials, printed once"},
	{"requeue", "restart documents stopped for their company (--clave, --company or --all)"},
	{"requeue-emails", "send again the e-mails that failed since a time (--since)"},
}

// writeUsage prints the list of subcommands.
func writeUsage(w io.Writer) error {
	var b strings.Builder
	b.WriteString("usage: facturad [command] [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-12s %s\n", c[0], c[1])
	}
	b.WriteString("\n`facturad <command> --help` lists a command's flags, with their defaults and environment variables.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// flagDoc is what a command's --help says of a flag besides its usage.
type flagDoc struct {
	// env is the environment variable the flag is read from when it is
	// not given on the command line.
	env string
	// def is the default in words, for a flag whose zero value means
	// something else ("random", "generated and printed once"); empty
	// shows the flag's default value.
	def string
}

// commandFlags is a subcommand's flag set and what its --help shows: each
// flag once, as --name, its usage, and a line with its default and its
// environment variable. --help is written to stdout (and Parse returns
// flag.ErrHelp, which main treats as success); a parse error and the
// usage after it go to stderr.
type commandFlags struct {
	*flag.FlagSet
	cmd            string
	settings       map[string]setting // by flag name, both spellings
	docs           map[string]flagDoc
	stdout, stderr io.Writer
	buf            bytes.Buffer
	// precheck, when set, refuses a configuration the command cannot use
	// at all before its settings are validated, with the command's own
	// explanation rather than a setting's.
	precheck func(Config) error
}

// newCommandFlags makes the flag set of `facturad cmd`. settings, when
// given, are the service's settings that LoadConfig registers on it.
func newCommandFlags(cmd string, stdout, stderr io.Writer, settings []setting) *commandFlags {
	c := &commandFlags{
		FlagSet:  flag.NewFlagSet("facturad "+cmd, flag.ContinueOnError),
		cmd:      cmd,
		settings: make(map[string]setting, 2*len(settings)),
		docs:     map[string]flagDoc{},
		stdout:   stdout,
		stderr:   stderr,
	}
	for _, s := range settings {
		c.settings[s.name] = s
		c.settings[s.flagName()] = s
	}
	// While parsing, what the flag package writes (an error and the
	// usage, or the usage for --help) is held until it is known which.
	c.SetOutput(&c.buf)
	c.Usage = func() { c.writeHelp(c.Output()) }
	return c
}

// env makes the flag name read the environment variable v when it is not
// on the command line (applied by parse).
func (c *commandFlags) env(name, v string) {
	d := c.docs[name]
	d.env = v
	c.docs[name] = d
}

// defaultIs gives the flag name's default in words, for a flag whose zero
// value stands for something else.
func (c *commandFlags) defaultIs(name, words string) {
	d := c.docs[name]
	d.def = words
	c.docs[name] = d
}

// parse parses args and then, for each flag not given, its environment
// variable through getenv. Arguments left after the flags are refused:
// no command takes any.
func (c *commandFlags) parse(args []string, getenv func(string) string) error {
	if err := c.finish(c.Parse(args)); err != nil {
		return err
	}
	given := map[string]bool{}
	c.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	c.VisitAll(func(f *flag.Flag) {
		d := c.docs[f.Name]
		if d.env == "" || given[f.Name] {
			return
		}
		if v := getenv(d.env); v != "" {
			if err := c.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", d.env, err))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return c.noArgs()
}

// noArgs refuses arguments left after the flags.
func (c *commandFlags) noArgs() error {
	if c.NArg() > 0 {
		return fmt.Errorf("%s: unexpected arguments %q", c.cmd, c.Args())
	}
	return nil
}

// finish routes what the flag package wrote while parsing: the help to
// stdout for --help. A parse error is returned as one line, which main
// prints, naming the flag, a known one spelled close to an unknown one,
// and where the flags are listed; the error and the usage the flag
// package wrote are dropped, so that the mistake is not lost above a
// page of help. Later writes (a command's own call of Usage) go to stderr
// directly.
func (c *commandFlags) finish(err error) error {
	defer func() {
		c.buf.Reset()
		c.SetOutput(c.stderr)
	}()
	switch {
	case err == nil:
		_, _ = c.stderr.Write(c.buf.Bytes())
		return nil
	case errors.Is(err, flag.ErrHelp):
		if helpShown != nil {
			helpShown(c)
		}
		_, _ = c.stdout.Write(c.buf.Bytes())
		return err
	}
	return c.parseError(err)
}

// parseError words an error of the flag package for the command line:
// "serve: unknown flag --trusted-ca (did you mean --sandbox-trusted-ca?);
// `facturad serve --help` lists the flags".
func (c *commandFlags) parseError(err error) error {
	// The flag package names a flag -name; the help writes --name.
	msg := strings.NewReplacer("argument: -", "argument: --", "for flag -", "for --").Replace(err.Error())
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		msg = "unknown flag --" + name
		if near := c.nearestFlag(name); near != "" {
			msg += " (did you mean --" + near + "?)"
		}
	}
	return fmt.Errorf("%s: %s; `facturad %s --help` lists the flags", c.cmd, msg, c.cmd)
}

// nearestFlag returns the flag whose name is closest to name (one that
// ends or starts with it, or within two edits of it), or "".
func (c *commandFlags) nearestFlag(name string) string {
	best, bestScore := "", 3
	c.VisitAll(func(f *flag.Flag) {
		if s, ok := c.settings[f.Name]; ok && f.Name != s.flagName() {
			return // the underscore spelling; its dashed one is offered
		}
		score := editDistance(name, f.Name)
		if len(name) >= 3 && (strings.HasSuffix(f.Name, "-"+name) || strings.HasPrefix(f.Name, name+"-")) {
			score = 1
		}
		if score < bestScore {
			best, bestScore = f.Name, score
		}
	})
	return best
}

// editDistance is the Levenshtein distance of a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// helpShown, when set (by a test), is given each flag set whose help was
// written for --help.
var helpShown func(*commandFlags)

// writeHelp writes the command's help: each flag once, the underscore
// spelling of a setting (admin_listen beside admin-listen) left out.
func (c *commandFlags) writeHelp(w io.Writer) {
	var b strings.Builder
	for _, cm := range commands {
		if cm[0] == c.cmd {
			fmt.Fprintf(&b, "facturad %s: %s\n", c.cmd, cm[1])
		}
	}
	flags := ""
	c.VisitAll(func(*flag.Flag) { flags = " [flags]" })
	fmt.Fprintf(&b, "usage: facturad %s%s   (`facturad help` lists the other commands)\n\n", c.cmd, flags)
	if len(c.settings) > 0 {
		b.WriteString("Each setting is a flag --name and an environment variable FACTURAD_NAME; flags win.\n\n")
	}
	n := 0
	c.VisitAll(func(f *flag.Flag) {
		if s, ok := c.settings[f.Name]; ok && f.Name != s.flagName() {
			return
		}
		n++
		fmt.Fprintf(&b, "  --%s\n      %s\n      (%s)\n", f.Name, f.Usage, strings.Join(c.notes(f), "; "))
	})
	if n == 0 {
		b.WriteString("It takes no flags.\n")
	}
	_, _ = io.WriteString(w, b.String())
}

// notes are what the help's line under a flag says: its default, then its
// environment variable.
func (c *commandFlags) notes(f *flag.Flag) []string {
	if s, ok := c.settings[f.Name]; ok {
		def := "default unset"
		switch t := s.defaultText(); {
		case s.def != "":
			def = "default: " + s.def
		case t != "":
			def = "default " + t
		}
		return []string{def, "env " + s.env()}
	}
	d := c.docs[f.Name]
	var notes []string
	switch {
	case d.def != "":
		notes = append(notes, "default: "+d.def)
	case f.DefValue == "":
		notes = append(notes, "default unset")
	case isStringFlag(f):
		notes = append(notes, "default "+strconv.Quote(f.DefValue))
	default:
		notes = append(notes, "default "+f.DefValue)
	}
	if d.env != "" {
		notes = append(notes, "env "+d.env)
	}
	return notes
}

// isStringFlag reports whether f holds a string, whose default the help
// quotes.
func isStringFlag(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	_, ok = g.Get().(string)
	return ok
}

// flagName is a setting's flag as the help shows it: admin-listen.
func (s setting) flagName() string { return strings.ReplaceAll(s.name, "_", "-") }

// env is a setting's environment variable: FACTURAD_ADMIN_LISTEN.
func (s setting) env() string { return "FACTURAD_" + strings.ToUpper(s.name) }

// defaultText is a setting's value in DefaultConfig, as it is written in
// a flag; empty when it is unset.
func (s setting) defaultText() string {
	for _, d := range (&defaultConfig).settings() {
		if d.name != s.name {
			continue
		}
		switch {
		case d.str != nil:
			if *d.str == "" {
				return ""
			}
			return strconv.Quote(*d.str)
		case d.bool != nil:
			return strconv.FormatBool(*d.bool)
		case d.dur != nil:
			if *d.dur == 0 {
				return ""
			}
			return shortDuration(*d.dur)
		case d.num != nil:
			if *d.num == 0 {
				return ""
			}
			return strconv.Itoa(*d.num)
		case d.real != nil:
			if *d.real == 0 {
				return ""
			}
			return strconv.FormatFloat(*d.real, 'g', -1, 64)
		}
	}
	return ""
}

// shortDuration writes d as a flag takes it, without the zero units that
// time.Duration.String adds: 5m rather than 5m0s, 72h rather than 72h0m0s.
func shortDuration(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}

// defaultConfig is DefaultConfig, kept for the help text's defaults.
var defaultConfig = DefaultConfig()
