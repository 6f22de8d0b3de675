package pipeline

import (
	"fmt"
	"os"
	"time"
)

// FaultPointEnv names the environment variable that stops a send call at
// one of its steps, for crash tests only: the process that reaches the step
// prints a line naming it to standard error and hangs there, so that a
// test can kill it with SIGKILL at exactly that point. Unset (always, in
// production) it costs one string comparison per step.
const FaultPointEnv = "FACTURAD_TEST_FAULT_POINT"

// The steps of a send call a crash test can stop at, in order.
const (
	FaultNumbered  = "numbered"  // the number is stored (00, no clave or XML yet)
	FaultBuilt     = "built"     // the XML is built, not signed
	FaultSigned    = "signed"    // signed, not stored
	FaultStored    = "stored"    // stored signed (05), not submitted
	FaultSubmitted = "submitted" // received by the tax authority, not recorded
)

// FaultPoints lists the steps in the order a send call reaches them.
var FaultPoints = []string{FaultNumbered, FaultBuilt, FaultSigned, FaultStored, FaultSubmitted}

// faultPoint is read once at start.
var faultPoint = os.Getenv(FaultPointEnv)

// fault hangs the calling send forever at the named step when the crash
// test asked for it.
func (j *job) fault(step string) {
	if j.send {
		faultAt(step)
	}
}

// faultAt hangs the calling send or receive call forever at the named
// step when the crash test asked for it (the receive call reaches the same
// steps with its message).
func faultAt(step string) {
	if faultPoint == "" || faultPoint != step {
		return
	}
	fmt.Fprintf(os.Stderr, "facturad: fault point %s reached\n", step)
	for {
		time.Sleep(time.Hour)
	}
}
