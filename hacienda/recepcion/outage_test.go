package recepcion_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
)

// TestLoginRefusalTakenForOutage: a login refused as if for wrong
// credentials is the company's to correct only when nothing says the token
// service is failing; credentials that worked minutes ago, or several
// companies refused at once, make it an outage: retryable, not remembered.
func TestLoginRefusalTakenForOutage(t *testing.T) {
	refuse := sandbox.Faults{TokenRefusal: 401}
	company := func(id int64) recepcion.Credentials { c := creds; c.CompanyID = id; return c }
	tests := []struct {
		name string
		// before runs first: a login that works, time passing...
		before func(t *testing.T, b *bundle)
		calls  []recepcion.Credentials // refused in turn; the last one is judged
		outage bool
	}{
		{"credentials/one company, never worked", nil, []recepcion.Credentials{company(1)}, false},
		{"outage/the same credentials worked minutes ago", func(t *testing.T, b *bundle) {
			login(t, b, company(1))
			b.clock.Advance(10 * time.Minute) // past the access token's life
		}, []recepcion.Credentials{company(1)}, true},
		{"credentials/they worked longer ago than CredentialsTrust", func(t *testing.T, b *bundle) {
			login(t, b, company(1))
			b.clock.Advance(16 * time.Minute)
		}, []recepcion.Credentials{company(1)}, false},
		{"credentials/two companies refused", nil, []recepcion.Credentials{company(1), company(2)}, false},
		{"outage/three companies refused within the window", nil, []recepcion.Credentials{company(1), company(2), company(3)}, true},
		{"credentials/three companies, the first out of the window", func(t *testing.T, b *bundle) {
			refused(t, b, company(9))
			b.clock.Advance(3 * time.Minute)
		}, []recepcion.Credentials{company(1), company(2)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, sandbox.Options{Checks: noChecks}, recepcion.Options{CredentialsTrust: 15 * time.Minute})
			if tt.before != nil {
				tt.before(t, b)
			}
			if err := b.sb.SetFaults(refuse); err != nil {
				t.Fatal(err)
			}
			var err error
			for _, c := range tt.calls {
				_, err = b.client.Status(context.Background(), c, unknownClave())
			}
			v := recepcion.Judge(err)
			switch {
			case tt.outage && (errors.Is(err, recepcion.ErrCredentials) || v.Kind != recepcion.Transient):
				t.Fatalf("%v judged %s, want an outage (transient)", err, v.Kind)
			case !tt.outage && (!errors.Is(err, recepcion.ErrCredentials) || v.Kind != recepcion.BadCredentials):
				t.Fatalf("%v judged %s, want refused credentials", err, v.Kind)
			}
			// An outage is not remembered: the next call logs in again.
			before := b.sb.Stats().TokenRefused
			_, _ = b.client.Status(context.Background(), tt.calls[len(tt.calls)-1], unknownClave())
			logged := b.sb.Stats().TokenRefused > before
			if logged != tt.outage {
				t.Errorf("the next call logged in: %v, want %v", logged, tt.outage)
			}
		})
	}
}

// TestIgnoreRefusalLogsIn: a caller that insists logs in within
// RefusedCredentialsWait; the background's calls do not.
func TestIgnoreRefusalLogsIn(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks}, recepcion.Options{RefusedCredentialsWait: 10 * time.Minute})
	if err := b.sb.SetFaults(sandbox.Faults{TokenRefusal: 401}); err != nil {
		t.Fatal(err)
	}
	refused(t, b, creds)
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Status(context.Background(), creds, unknownClave()); !errors.Is(err, recepcion.ErrCredentials) {
		t.Fatalf("within the wait: %v, want the remembered refusal", err)
	}
	insist := creds
	insist.IgnoreRefusal = true
	if _, err := b.client.Status(context.Background(), insist, unknownClave()); !errors.Is(err, recepcion.ErrNotFound) {
		t.Fatalf("insisting: %v, want a login and the API's answer", err)
	}
	// The login that worked clears the refusal for every caller.
	if _, err := b.client.Status(context.Background(), creds, unknownClave()); !errors.Is(err, recepcion.ErrNotFound) {
		t.Fatalf("after the insisting login: %v", err)
	}
}

// login gets a token for c.
func login(t *testing.T, b *bundle, c recepcion.Credentials) {
	t.Helper()
	if _, err := b.client.Status(context.Background(), c, unknownClave()); !errors.Is(err, recepcion.ErrNotFound) {
		t.Fatalf("login of company %d: %v", c.CompanyID, err)
	}
}

// refused makes a refused login of c (under a refusal fault).
func refused(t *testing.T, b *bundle, c recepcion.Credentials) {
	t.Helper()
	if err := b.sb.SetFaults(sandbox.Faults{TokenRefusal: 401}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Status(context.Background(), c, unknownClave()); !errors.Is(err, recepcion.ErrCredentials) {
		t.Fatalf("refused login of company %d: %v", c.CompanyID, err)
	}
}

// unknownClave is a well-formed clave the sandbox never received.
func unknownClave() string { c, _ := claveFor(77); return c }
