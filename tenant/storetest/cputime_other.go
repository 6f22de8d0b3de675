//go:build !unix

package storetest

import "testing"

// ReportCPU reports nothing where getrusage is not available.
func ReportCPU(*testing.B) func() { return func() {} }
