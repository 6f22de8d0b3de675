package main

import "testing"

// notQuick skips t with -short, as the quick subset (deploy/test.sh
// --quick) runs the tests: a crash, load or replica drill, an end-to-end
// drill through a running service, or its second run on the other store,
// which the full test command runs (the quick subset keeps one run from
// a company to an accepted invoice, TestReadmeQuickstart). why says
// which.
func notQuick(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: not in the quick subset (-short)", why)
	}
}
