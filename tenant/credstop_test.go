package tenant_test

import (
	"testing"
	"time"

	"facturad/tenant"
)

func TestProbeWait(t *testing.T) {
	for n, want := range []time.Duration{5, 10, 20, 40, 60, 60, 60} {
		if got := tenant.ProbeWait(5*time.Minute, time.Hour, n); got != want*time.Minute {
			t.Errorf("ProbeWait(5m, 1h, %d) = %v, want %v", n, got, want*time.Minute)
		}
	}
	if got := tenant.ProbeWait(5*time.Minute, time.Hour, 1<<30); got != time.Hour {
		t.Errorf("ProbeWait of many probes = %v, want the cap", got)
	}
}
