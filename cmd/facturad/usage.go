package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"facturad/cmd/internal/cmdline"
)

// commands are the subcommands and what each does, for `facturad help`.
var commands = [][2]string{
	{"serve", "run the service (the default)"},
	{"migrate", "apply the PostgreSQL migrations and exit"},
	{"sandbox", "run the tax-authority sandbox alone"},
	{"mkcert", "mint a throwaway test certificate (.p12)"},
	{"keygen", "print a new random master key (base64)"},
	{"backup", "copy the embedded store and the built-in sandbox's state while it runs (--out FILE)"},
	{"rekey", "re-wrap every sealed value under a new master key"},
	{"admin-reset", "give the bootstrap admin new credentials, printed once"},
	{"requeue", "restart documents stopped for their company (--clave, --company or --all)"},
	{"requeue-emails", "send again the e-mails that failed since a time (--since)"},
	{"version", "print the version, revision, Go release and RSA backend (also --version)"},
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

// commandFlags is a subcommand's flag set (cmdline.Flags) with the
// service's settings it reads: the help lists a setting under its dashed
// name only, with its default as DefaultConfig has it and its environment
// variable.
type commandFlags struct {
	*cmdline.Flags
	cmd      string
	settings map[string]setting // by flag name, both spellings
	// precheck, when set, refuses a configuration the command cannot use
	// at all before its settings are validated, with the command's own
	// explanation rather than a setting's.
	precheck func(Config) error
}

// newCommandFlags makes the flag set of `facturad cmd`. settings, when
// given, are the service's settings that LoadConfig registers on it.
func newCommandFlags(cmd string, stdout, stderr io.Writer, settings []setting) *commandFlags {
	summary := ""
	for _, cm := range commands {
		if cm[0] == cmd {
			summary = cm[1]
		}
	}
	c := &commandFlags{
		Flags:    cmdline.New("facturad", cmd, summary, stdout, stderr),
		cmd:      cmd,
		settings: make(map[string]setting, 2*len(settings)),
	}
	for _, s := range settings {
		c.settings[s.name] = s
		c.settings[s.flagName()] = s
	}
	c.Others = "`facturad help` lists the other commands"
	if len(settings) > 0 {
		c.Preamble = "Each setting is a flag --name and an environment variable FACTURAD_NAME; flags win."
	}
	// The underscore spelling of a setting (admin_listen beside
	// admin-listen) is left out of the help.
	c.Alias = func(name string) bool {
		s, ok := c.settings[name]
		return ok && name != s.flagName()
	}
	c.Notes = c.settingNotes
	c.Shown = func() {
		if helpShown != nil {
			helpShown(c)
		}
	}
	return c
}

// helpShown, when set (by a test), is given each flag set whose help was
// written for --help.
var helpShown func(*commandFlags)

// settingNotes are what the help's line under a setting says: its
// default, then its environment variable; ok is false for a flag that is
// not a setting.
func (c *commandFlags) settingNotes(f *flag.Flag) (notes []string, ok bool) {
	s, ok := c.settings[f.Name]
	if !ok {
		return nil, false
	}
	def := "default unset"
	switch t := s.defaultText(); {
	case s.def != "":
		def = "default: " + s.def
	case t != "":
		def = "default " + t
	}
	return []string{def, "env " + s.env()}, true
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
		case d.days != nil:
			if *d.days%(24*time.Hour) == 0 {
				return strconv.FormatInt(int64(*d.days/(24*time.Hour)), 10) + "d"
			}
			return shortDuration(*d.days)
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
