package storetest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"facturad/hacienda"
	"facturad/tenant"
)

// The SQL an engine writes out names document types, states and phases
// by their codes: an index matches only the expression written in its
// queries, and a schema's checks are text. CheckSQLVocabulary holds every
// such list to the tables they come from (hacienda's document types,
// tenant's states and phases), so that a change to a table fails here
// until the SQL follows it.
var (
	estadoIn     = regexp.MustCompile(`estado IN \(([^)]*)\)`)
	estadoOr     = regexp.MustCompile(`\(estado = '\d\d'(?: OR estado = '\d\d')+\)`)
	phaseEstado  = regexp.MustCompile(`phase \|\| ':' \|\| estado IN \(([^)]*)\)`)
	quoted       = regexp.MustCompile(`'([^']*)'`)
	waitsCompany = regexp.MustCompile(`estado = '(\d\d)' AND next_attempt_at IS NULL`)
	byBuyer      = regexp.MustCompile(`CASE WHEN tipo (?:= '\d\d'|IN \([^)]*\)) THEN emisor_numero`)
	messageTipo  = regexp.MustCompile(`(?m)^\s*tipo\s.*CHECK \(tipo IN \(([^)]*)\)\)`)
)

// CheckSQLVocabulary reads the engine whose tests run (its Go files and its
// schema, migrations/0001_schema.sql, in the test's folder) and checks
// every list of document types, states and phases written there.
func CheckSQLVocabulary(t *testing.T) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string][]byte{}
	for _, f := range append(files, "migrations/0001_schema.sql") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources[f] = b
	}
	checkSQLTypes(t, sources)
	CheckSQLStates(t, sources)
}

// checkSQLTypes: the listing's counterparty is the Emisor in the types
// the buyer issues, and a received document's message is numbered as a
// receiver's message.
func checkSQLTypes(t *testing.T, sources map[string][]byte) {
	t.Helper()
	buyer := hacienda.TypeCodes(func(t hacienda.TypeInfo) bool { return t.IssuedByBuyer })
	messages := hacienda.TypeCodes(hacienda.TypeInfo.IsReceiverMessage)
	var counterparty, tipo int
	for name, b := range sources {
		for _, m := range byBuyer.FindAllString(string(b), -1) {
			counterparty++
			if got := quotedIn(m); !slices.Equal(got, buyer) {
				t.Errorf("%s: the listing's counterparty names types %v, the types issued by the buyer are %v", name, got, buyer)
			}
		}
		for _, m := range messageTipo.FindAllStringSubmatch(string(b), -1) {
			tipo++
			if got := quotedIn(m[1]); !slices.Equal(got, messages) {
				t.Errorf("%s: a message's tipo is checked against %v, the receiver's messages are %v", name, got, messages)
			}
		}
	}
	if counterparty == 0 || tipo == 0 {
		t.Errorf("found %d counterparty expressions and %d tipo checks: the patterns no longer match the SQL", counterparty, tipo)
	}
}

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
