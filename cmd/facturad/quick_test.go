package main

import "testing"

// notQuick skips t with -short, as the quick subset (deploy/test.sh
// --quick) runs the tests: a crash, load or replica drill, or a second
// run of an end-to-end test on the other store, which the full test
// command runs. why says which.
func notQuick(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: not in the quick subset (-short)", why)
	}
}
