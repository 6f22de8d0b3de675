package pipeline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"facturad/hacienda/sandbox"
	"facturad/tenant"
)

// TestIdentityProviderOutage: the token service refuses every login as if
// the credentials were wrong for a while (the outage measured: 401
// invalid_grant for 60 s). Documents of a company that had no token before
// are stopped on its credentials meanwhile; once the token service works
// again they reach their verdict with no client action within the
// documented bound (CredentialsProbe after the stop, CredentialsProbeMax
// at most), or at once when the company checks one of them. The test's
// clock moves a minute per round of the background worker.
func TestIdentityProviderOutage(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			for _, tt := range []struct {
				name  string
				check bool // the company checks its first document after the outage
				bound time.Duration
			}{
				{"ok/settled by the background worker within the bound", false, time.Hour + time.Minute},
				{"ok/settled at once after a check", true, 0},
			} {
				t.Run(tt.name, func(t *testing.T) {
					testIdentityProviderOutage(t, sk.open, tt.check, tt.bound)
				})
			}
		})
	}
}

func testIdentityProviderOutage(t *testing.T, open func(testing.TB) fullStore, check bool, bound time.Duration) {
	b := setup(t, setupOptions{store: open, clientClock: true})
	ctx := context.Background()
	if err := b.sb.SetFaults(sandbox.Faults{TokenRefusal: 401}); err != nil {
		t.Fatal(err)
	}
	var claves []string
	for i := range 7 {
		out := b.mustSend(t, request("01", fmt.Sprintf("idp-%d", i)))
		if out.Estado != tenant.StateNotSentYet {
			t.Fatalf("send during the outage: %s", describe(out))
		}
		claves = append(claves, out.Document.Clave)
	}
	for _, c := range claves {
		if d := b.stored(t, c); !d.StoppedOnCredentials() {
			t.Fatalf("%s: not stopped on credentials: estado %s next %v", c, d.Estado, d.NextAttemptAt)
		}
	}
	b.clock.advance(time.Minute) // the outage lasts a minute
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	recovered := b.clock.now()
	settled := func() bool {
		for _, c := range claves {
			if b.stored(t, c).Estado != tenant.StateAccepted {
				return false
			}
		}
		return true
	}
	step := time.Minute
	if check {
		// Within RefusedCredentialsWait of the refusals: a check logs in
		// all the same, and its success moves every stopped document on.
		ck, err := b.p.Check(ctx, b.branch, claves[0])
		if err != nil {
			t.Fatal(err)
		}
		if ck.Failed || ck.Estado != tenant.StateNotSentYet {
			t.Fatalf("check after the outage: %s", describe(ck))
		}
		for _, c := range claves {
			if d := b.stored(t, c); d.NextAttemptAt.IsZero() || d.NextAttemptAt.After(b.clock.now()) {
				t.Fatalf("%s: not due after the check: next %v", c, d.NextAttemptAt)
			}
		}
		step = 10 * time.Millisecond // a poll's delay, no more
	}
	for range 100 {
		if settled() {
			break
		}
		if _, err := b.p.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		b.clock.advance(step)
	}
	took := b.clock.now().Sub(recovered)
	if !settled() {
		t.Fatalf("not every document settled %v after the token service recovered", took)
	}
	if took > max(bound, time.Second) {
		t.Errorf("settled %v after the token service recovered, want at most %v", took, bound)
	}
	t.Logf("all %d documents accepted %v (test clock) after the token service recovered", len(claves), took)
	if st := b.sb.Stats(); st.Submissions != int64(len(claves)) || st.Duplicates != 0 {
		t.Errorf("the sandbox received %d submissions, %d duplicates", st.Submissions, st.Duplicates)
	}
}

// TestOutageOfManyCompaniesIsNotACredentialsStop: when several companies
// are refused at once, the refusals are taken for an outage of the token
// service: the later documents are retried like any other outage, not
// stopped.
func TestOutageOfManyCompaniesIsNotACredentialsStop(t *testing.T) {
	b := setup(t, setupOptions{clientClock: true})
	_, second := b.newCompany(t, "3101123457")
	_, third := b.newCompany(t, "3101123458")
	if err := b.sb.SetFaults(sandbox.Faults{TokenRefusal: 401}); err != nil {
		t.Fatal(err)
	}
	var last Outcome
	for i, pr := range []tenant.Principal{b.branch, second, third} {
		last = b.mustSendAs(t, pr, request("01", fmt.Sprintf("many-%d", i)))
	}
	d := b.stored(t, last.Document.Clave)
	if d.Phase == tenant.PhaseCredentials || d.LastError == credentialsMessage {
		t.Fatalf("the third company's document was stopped on its credentials: %q", d.LastError)
	}
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	b.runDueUntil(t, 5, func() bool { return b.stored(t, last.Document.Clave).Estado == tenant.StateAccepted })
}
