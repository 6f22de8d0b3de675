// Package testenv reads, in one place, the switch with which the project's
// test command (deploy/test.sh) tells every package's tests that it
// provides their services and tools. It imports nothing of ours, so that
// any package's tests may use it.
package testenv

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// RequireServicesVar names the switch that makes a test fail, instead of
// skipping, when a service (PostgreSQL, Redis) or an external tool
// (xmllint, xmlsec1, poppler, zbarimg, promtool...) it needs is missing.
const RequireServicesVar = "TEST_REQUIRE_SERVICES"

// ParseSwitch reads a switch strictly: 1, true and yes are on; 0, false,
// no and the empty string are off (letter case and surrounding spaces do
// not matter); anything else is an error, so that a misspelt value never
// quietly turns every check that depends on it into a skip.
func ParseSwitch(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes":
		return true, nil
	case "", "0", "false", "no":
		return false, nil
	}
	return false, fmt.Errorf("%q is neither on (1, true, yes) nor off (0, false, no, empty)", v)
}

// RequireServices reports whether TEST_REQUIRE_SERVICES asks tests to fail,
// not skip, when a service or tool they need is missing. A value it cannot
// read fails the test.
func RequireServices(t testing.TB) bool {
	t.Helper()
	on, err := ParseSwitch(os.Getenv(RequireServicesVar))
	if err != nil {
		t.Fatalf("%s: %v", RequireServicesVar, err)
	}
	return on
}

// MissingBuilt ends a test that needs what the full test command builds
// rather than installs (SeaweedFS's weed and the S3 store it runs,
// Grafana's dashboard-linter), described by what, when it is missing: a
// skip with -short, where the quick subset (deploy/test.sh --quick) builds
// none of them; otherwise a failure when RequireServices is on, a skip
// when it is off.
func MissingBuilt(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s is not set: -short, the quick subset, builds none (deploy/test.sh builds it)", what)
	}
	if RequireServices(t) {
		t.Fatalf("%s is not set (deploy/test.sh builds it and sets it)", what)
	}
	t.Skipf("%s is not set: run the tests with deploy/test.sh, which builds it", what)
}
