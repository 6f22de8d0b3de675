package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// setUsage makes fs's --help list each flag once, as --name with its
// default, and for a setting its environment variable. Settings are
// registered under two names (admin_listen and admin-listen): only the
// hyphenated one is shown.
func setUsage(fs *flag.FlagSet, cmd string, settings []setting) {
	byName := make(map[string]setting, len(settings))
	for _, s := range settings {
		byName[strings.ReplaceAll(s.name, "_", "-")] = s
		byName[s.name] = s
	}
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: facturad %s [flags]   (`facturad help` lists the other commands)\n\n", cmd)
		if len(settings) > 0 {
			fmt.Fprintf(w, "Each setting is a flag --name and an environment variable FACTURAD_NAME; flags win.\n\n")
		}
		fs.VisitAll(func(f *flag.Flag) {
			s, isSetting := byName[f.Name]
			if isSetting && strings.Contains(f.Name, "_") {
				return // the underscore alias of a hyphenated flag
			}
			def := f.DefValue
			if isSetting {
				def = s.defaultText()
			}
			fmt.Fprintf(w, "  --%s\n      %s\n", f.Name, f.Usage)
			var notes []string
			switch {
			case strings.Contains(f.Usage, "(default"):
			case def != "":
				notes = append(notes, "default "+def)
			case isSetting:
				notes = append(notes, "default unset")
			}
			if isSetting {
				notes = append(notes, "env FACTURAD_"+strings.ToUpper(s.name))
			}
			if len(notes) > 0 {
				fmt.Fprintf(w, "      (%s)\n", strings.Join(notes, "; "))
			}
		})
	}
}

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
			return d.dur.String()
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

// defaultConfig is DefaultConfig, kept for the help text's defaults.
var defaultConfig = DefaultConfig()
