// Package cmdline is the command line the project's commands share: a flag
// set whose flags may also be read from environment variables, whose
// --help lists each flag once with its default and its variable, and whose
// parse errors are one line naming the flag; and the check that a host is
// this machine, which a command that reaches a service needs before it may
// reach one elsewhere.
package cmdline

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"facturad/hacienda/spelling"
)

// Flags is a command's flag set and what its --help shows: each flag once,
// as --name, its usage, and a line with its default and its environment
// variable. --help is written to stdout (and parsing returns
// flag.ErrHelp, which a main treats as success); a parse error is
// returned as one line, and nothing is written beside it.
type Flags struct {
	*flag.FlagSet
	// name is the command as it is typed: "facturad serve", "loadgen".
	name string
	// prefix starts the errors of a subcommand ("serve: "), which its
	// main prints after the program's name.
	prefix  string
	summary string
	docs    map[string]doc

	stdout, stderr io.Writer
	buf            bytes.Buffer

	// Alias, when set, reports whether a flag is another spelling of one
	// listed: the help and the suggestions for a mistyped flag leave it
	// out.
	Alias func(name string) bool
	// Notes, when set and ok, gives the help's notes of a flag in place
	// of its default and environment variable.
	Notes func(f *flag.Flag) (notes []string, ok bool)
	// Preamble, when set, is a paragraph of the help between its usage
	// line and the flags.
	Preamble string
	// Others, when set, follows the usage line in parentheses: where the
	// program's other commands are listed.
	Others string
	// Shown, when set, is called each time the help is written for --help.
	Shown func()
}

// doc is what the help says of a flag besides its usage.
type doc struct {
	// env is the environment variable the flag is read from when it is
	// not given on the command line.
	env string
	// def is the default in words, for a flag whose zero value means
	// something else ("random", "generated and printed once"); empty
	// shows the flag's default value.
	def string
}

// New makes the flag set of the command program, or of its subcommand cmd
// when cmd is not empty; summary is what the command does, the help's
// first line (none when empty).
func New(program, cmd, summary string, stdout, stderr io.Writer) *Flags {
	name, prefix := program, ""
	if cmd != "" {
		name, prefix = program+" "+cmd, cmd+": "
	}
	f := &Flags{
		FlagSet: flag.NewFlagSet(name, flag.ContinueOnError),
		name:    name,
		prefix:  prefix,
		summary: summary,
		docs:    map[string]doc{},
		stdout:  stdout,
		stderr:  stderr,
	}
	// While parsing, what the flag package writes (an error and the
	// usage, or the usage for --help) is held until it is known which.
	f.SetOutput(&f.buf)
	f.Usage = func() { f.WriteHelp(f.Output()) }
	return f
}

// Env makes the flag name read the environment variable v when it is not
// on the command line (applied by ParseEnv).
func (f *Flags) Env(name, v string) {
	d := f.docs[name]
	d.env = v
	f.docs[name] = d
}

// EnvOf is the environment variable the flag name is read from, or "".
func (f *Flags) EnvOf(name string) string { return f.docs[name].env }

// DefaultIs gives the flag name's default in words, for a flag whose zero
// value stands for something else.
func (f *Flags) DefaultIs(name, words string) {
	d := f.docs[name]
	d.def = words
	f.docs[name] = d
}

// ParseEnv parses args and then, for each flag not given, its environment
// variable through getenv. Arguments left after the flags are refused.
func (f *Flags) ParseEnv(args []string, getenv func(string) string) error {
	if err := f.Finish(f.Parse(args)); err != nil {
		return err
	}
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	var errs []error
	f.VisitAll(func(fl *flag.Flag) {
		d := f.docs[fl.Name]
		if d.env == "" || given[fl.Name] {
			return
		}
		if v := getenv(d.env); v != "" {
			if err := f.Set(fl.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", d.env, err))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return f.NoArgs()
}

// NoArgs refuses arguments left after the flags.
func (f *Flags) NoArgs() error {
	if f.NArg() > 0 {
		return fmt.Errorf("%sunexpected arguments %q", f.prefix, f.Args())
	}
	return nil
}

// Finish routes what the flag package wrote while parsing, whose error
// is err: the help to stdout for --help. A parse error is returned as one
// line, which main prints, naming the flag, a known one spelled close to
// an unknown one, and where the flags are listed; the error and the usage
// the flag package wrote are dropped, so that the mistake is not lost
// above a page of help. Later writes (a command's own call of Usage) go to
// stderr directly.
func (f *Flags) Finish(err error) error {
	defer func() {
		f.buf.Reset()
		f.SetOutput(f.stderr)
	}()
	switch {
	case err == nil:
		_, _ = f.stderr.Write(f.buf.Bytes())
		return nil
	case errors.Is(err, flag.ErrHelp):
		if f.Shown != nil {
			f.Shown()
		}
		_, _ = f.stdout.Write(f.buf.Bytes())
		return err
	}
	return f.parseError(err)
}

// parseError words an error of the flag package for the command line:
// "serve: unknown flag --trusted-ca (did you mean --sandbox-trusted-ca?);
// `facturad serve --help` lists the flags".
func (f *Flags) parseError(err error) error {
	// The flag package names a flag -name; the help writes --name.
	msg := strings.NewReplacer("argument: -", "argument: --", "for flag -", "for --", "for -", "for --").Replace(err.Error())
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		msg = "unknown flag --" + name
		if near := f.nearestFlag(name); near != "" {
			msg += " (did you mean --" + near + "?)"
		}
	}
	return fmt.Errorf("%s%s; `%s --help` lists the flags", f.prefix, msg, f.name)
}

// alias reports whether the flag name is another spelling of one listed.
func (f *Flags) alias(name string) bool { return f.Alias != nil && f.Alias(name) }

// nearestFlag returns the flag whose name is closest to name (see
// spelling.Nearest), or "".
func (f *Flags) nearestFlag(name string) string {
	var names []string
	f.VisitAll(func(fl *flag.Flag) {
		if !f.alias(fl.Name) {
			names = append(names, fl.Name)
		}
	})
	return spelling.Nearest(name, names)
}

// WriteHelp writes the command's help to w: what it does, its usage line,
// then each flag once, an alias left out.
func (f *Flags) WriteHelp(w io.Writer) {
	var b strings.Builder
	if f.summary != "" {
		fmt.Fprintf(&b, "%s: %s\n", f.name, f.summary)
	}
	flags := ""
	f.VisitAll(func(*flag.Flag) { flags = " [flags]" })
	fmt.Fprintf(&b, "usage: %s%s", f.name, flags)
	if f.Others != "" {
		fmt.Fprintf(&b, "   (%s)", f.Others)
	}
	b.WriteString("\n\n")
	if f.Preamble != "" {
		b.WriteString(f.Preamble + "\n\n")
	}
	n := 0
	f.VisitAll(func(fl *flag.Flag) {
		if f.alias(fl.Name) {
			return
		}
		n++
		fmt.Fprintf(&b, "  --%s\n      %s\n      (%s)\n", fl.Name, fl.Usage, strings.Join(f.notes(fl), "; "))
	})
	if n == 0 {
		b.WriteString("It takes no flags.\n")
	}
	_, _ = io.WriteString(w, b.String())
}

// notes are what the help's line under a flag says: its default, then its
// environment variable.
func (f *Flags) notes(fl *flag.Flag) []string {
	if f.Notes != nil {
		if notes, ok := f.Notes(fl); ok {
			return notes
		}
	}
	d := f.docs[fl.Name]
	var notes []string
	switch {
	case d.def != "":
		notes = append(notes, "default: "+d.def)
	case fl.DefValue == "":
		notes = append(notes, "default unset")
	case isStringFlag(fl):
		notes = append(notes, "default "+strconv.Quote(fl.DefValue))
	default:
		notes = append(notes, "default "+fl.DefValue)
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

// LoopbackHost reports whether host is localhost or a loopback address.
// Other names are not resolved.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
