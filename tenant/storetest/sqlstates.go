package storetest

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"facturad/tenant"
)

// The SQL an engine writes out names states and phases by their codes: the
// partial indexes' conditions must match the queries that use them, and a
// schema's checks are text. CheckSQLStates holds every such list in
// sources (an engine's schema and Go files, by name) to tenant's tables,
// so that a change to the tables fails here until the SQL follows it.
var (
	estadoIn     = regexp.MustCompile(`estado IN \(([^)]*)\)`)
	estadoOr     = regexp.MustCompile(`\(estado = '\d\d'(?: OR estado = '\d\d')+\)`)
	phaseEstado  = regexp.MustCompile(`phase \|\| ':' \|\| estado IN \(([^)]*)\)`)
	quoted       = regexp.MustCompile(`'([^']*)'`)
	waitsCompany = regexp.MustCompile(`estado = '(\d\d)' AND next_attempt_at IS NULL`)
)

func quotedIn(s string) []string {
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// CheckSQLStates checks the state and phase lists in sources.
func CheckSQLStates(t *testing.T, sources map[string][]byte) {
	t.Helper()
	codes := func(states []tenant.State) []string {
		out := make([]string, len(states))
		for i, s := range states {
			out[i] = string(s)
		}
		return out
	}
	all, unsettled := codes(tenant.States()), codes(tenant.UnsettledStates)
	var pairs []string
	for _, ph := range tenant.Phases() {
		pairs = append(pairs, string(ph)+":"+string(ph.Estado()))
	}
	sort.Strings(pairs)
	seen := 0
	for name, b := range sources {
		text := string(b)
		for _, m := range phaseEstado.FindAllStringSubmatch(text, -1) {
			seen++
			got := quotedIn(m[1])
			sort.Strings(got)
			if !slices.Equal(got, pairs) {
				t.Errorf("%s: the phase check lists %v, the phases are %v", name, got, pairs)
			}
		}
		text = phaseEstado.ReplaceAllString(text, "")
		for _, m := range estadoIn.FindAllStringSubmatch(text, -1) {
			seen++
			if got := quotedIn(m[1]); !slices.Equal(got, all) && !slices.Equal(got, unsettled) {
				t.Errorf("%s: %q is neither every state %v nor the unsettled ones %v", name, m[0], all, unsettled)
			}
		}
		for _, m := range estadoOr.FindAllString(text, -1) {
			seen++
			if got := quotedIn(m); !slices.Equal(got, unsettled) {
				t.Errorf("%s: %q is not the unsettled states %v", name, m, unsettled)
			}
		}
		for _, m := range waitsCompany.FindAllStringSubmatch(text, -1) {
			seen++
			if want := string(tenant.PhaseCredentials.Estado()); m[1] != want || strings.Contains(m[0], "IS NOT") {
				t.Errorf("%s: rows stopped on credentials are found as estado %s, their phase's is %s", name, m[1], want)
			}
		}
	}
	if seen == 0 {
		t.Error("no state list found in the sources: the patterns no longer match the SQL")
	}
}
