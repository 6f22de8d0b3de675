package main

import (
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"

	"facturad/hacienda/spelling"
	"facturad/pipeline"
)

// givenSettings records how the operator gave each setting that was set:
// by its environment variable, or by a flag as typed, which wins.
type givenSettings struct {
	by map[string]string // setting name → "FACTURAD_LISTEN" or "--listen"
}

// nameOf is how a message about the setting names it: by the flag
// (--listen, as typed) or the environment variable (FACTURAD_LISTEN) the
// operator gave it with, so that the message points at what to change;
// by its environment variable when it was not given. given reports which.
func (c Config) nameOf(setting string) (name string, given bool) {
	if c.given != nil {
		if n, ok := c.given.by[setting]; ok {
			return n, true
		}
	}
	return settingEnv(setting), false
}

// name is nameOf's name.
func (c Config) name(setting string) string {
	n, _ := c.nameOf(setting)
	return n
}

// settingEnv is the environment variable of the setting name.
func settingEnv(name string) string { return setting{name: name}.env() }

// environ lists the process's environment as NAME=value; tests replace
// it.
var environ = os.Environ

// otherVariables are the FACTURAD_ variables of the project that are not
// the service's settings: another command's, a test's or a benchmark's.
// They may be in the service's environment (a shell that also runs the
// tests, a test that starts the service), and the service ignores them.
var otherVariables = []string{
	"FACTURAD_SANDBOX_ADMIN_TOKEN", // facturad sandbox
	"FACTURAD_SANDBOX_DATA_DIR",    // facturad sandbox
	"FACTURAD_LOADGEN_URL",         // loadgen
	"FACTURAD_TEST_RUN_AS_SERVICE", // this command's tests run their binary as the service
	pipeline.FaultPointEnv,         // crash tests: where a send hangs
	"FACTURAD_LIST_BENCH_ROWS",     // the stores' listing benchmarks
	"FACTURAD_EXPORT_MEM_DOCS",     // the export's memory measurement
}

// unknownVariables finds, in the environment env (NAME=value, as
// os.Environ lists it), each variable named FACTURAD_… in any case that is
// neither a setting nor one of otherVariables nor one a platform sets for
// a service named facturad (serviceLinkVariable), and says which setting
// it probably meant. A variable that getenv does not see, or sees empty
// (an empty setting is an unset one), is left out.
func unknownVariables(env []string, getenv func(string) string) []error {
	var known, flags []string
	for _, s := range (&Config{}).settings() {
		known = append(known, s.env())
		flags = append(flags, s.flagName())
	}
	known = append(known, otherVariables...)
	var errs []error
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		rest, ok := cutPrefixFold(name, "FACTURAD_")
		if !ok || slices.Contains(known, name) || serviceLinkVariable(name, value) {
			continue
		}
		if getenv(name) == "" {
			continue
		}
		msg := name + " is not a setting"
		typed := strings.ToLower(strings.ReplaceAll(rest, "_", "-"))
		near := spelling.Nearest(typed, flags)
		if slices.Contains(flags, typed) {
			near = typed // a setting written in another case
		}
		if near != "" {
			msg += "; did you mean " + settingEnv(strings.ReplaceAll(near, "-", "_")) + "?"
		}
		errs = append(errs, fmt.Errorf("%s (`facturad serve --help` lists every setting; unset it if it is for another program)", msg))
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

// cutPrefixFold is strings.CutPrefix with prefix matched in any case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// serviceLinks are the variables Kubernetes gives a pod for each Service
// of its namespace (unless the pod sets enableServiceLinks: false), whose
// shapes Docker's links also use: a Service named facturad, or
// facturad-admin, yields FACTURAD_SERVICE_HOST, FACTURAD_SERVICE_PORT,
// FACTURAD_SERVICE_PORT_<PORT NAME>, FACTURAD_PORT and
// FACTURAD_PORT_<port>_<PROTOCOL> with _PROTO, _PORT and _ADDR; each
// name with the shape of its value. A name may have more than one reading
// (FACTURAD_SERVICE_PORT is also the _PORT of a Service facturad-service).
var serviceLinks = []struct {
	name  *regexp.Regexp
	value func(string) bool
}{
	{serviceLinkName(`SERVICE_HOST`), isAddr},
	{serviceLinkName(`SERVICE_PORT(_[A-Z0-9_]+)?`), isPort},
	{serviceLinkName(`PORT`), serviceLinkURL.MatchString},
	{serviceLinkName(`PORT_[0-9]+_(TCP|UDP|SCTP)`), serviceLinkURL.MatchString},
	{serviceLinkName(`PORT_[0-9]+_(TCP|UDP|SCTP)_PROTO`), func(v string) bool { return v == "tcp" || v == "udp" || v == "sctp" }},
	{serviceLinkName(`PORT_[0-9]+_(TCP|UDP|SCTP)_PORT`), isPort},
	{serviceLinkName(`PORT_[0-9]+_(TCP|UDP|SCTP)_ADDR`), isAddr},
}

// serviceLinkName matches a service link's name ending in suffix.
func serviceLinkName(suffix string) *regexp.Regexp {
	return regexp.MustCompile(`^FACTURAD(_[A-Z0-9_]+)?_` + suffix + `$`)
}

// serviceLinkURL is the value of FACTURAD_PORT and of
// FACTURAD_PORT_<port>_<PROTOCOL>: tcp://10.0.0.11:80.
var serviceLinkURL = regexp.MustCompile(`^(tcp|udp|sctp)://[^/]+:[0-9]+$`)

func isAddr(v string) bool {
	_, err := netip.ParseAddr(v)
	return err == nil
}

func isPort(v string) bool { return v != "" && strings.Trim(v, "0123456789") == "" }

// serviceLinkVariable reports whether name=value is one of the variables
// of a service link (serviceLinks), by its name and by its value: an
// operator's FACTURAD_PORT=8081, meant as a setting, is not one.
func serviceLinkVariable(name, value string) bool {
	for _, l := range serviceLinks {
		if l.name.MatchString(name) && l.value(value) {
			return true
		}
	}
	return false
}
