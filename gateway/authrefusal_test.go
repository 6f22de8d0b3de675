package gateway

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"facturad/tenant"
	"facturad/tenant/storetest"
)

// The refusals authentication can give on any route, 429 while a user
// backs off after failed logins and 503 while every slow password check is
// busy, are answered in the A.7 form with Retry-After, as the OpenAPI
// document describes them on every authenticated operation (every call of
// these tests is checked against it).
func TestAuthenticationRefusals(t *testing.T) {
	t.Run("error/429 after failed authentications, even to the right pair", func(t *testing.T) {
		w := newWorld(t)
		co := w.createCompany(t, w.admin, "3101123456", "Empresa Insistente S.A.")
		bad := co.user
		bad.pass += "x"
		// A route of the delivery calls, one of the tenancy calls and one
		// of the document calls: every authenticated route is behind the
		// same check.
		paths := []string{
			fmt.Sprintf("/api/companies/%d/webhooks/v4", co.id),
			fmt.Sprintf("/api/companies/%d/branches/v4", co.id),
			"/api/documents/calculate/v4",
		}
		// The allowed failures are 401s; the backoff starts after them.
		var r reply
		for i := 0; i < tenant.UserFailuresAllowed+3 && (i == 0 || r.status == 401); i++ {
			r = w.do(t, "GET", paths[i%2], &bad, "", nil)
			if r.status == 401 && i > tenant.UserFailuresAllowed {
				t.Fatalf("failure %d still answered 401", i+1)
			}
		}
		requireRetryAfter(t, r, 429)
		for _, p := range paths[:2] {
			requireRetryAfter(t, w.do(t, "GET", p, &co.user, "", nil), 429)
		}
		requireRetryAfter(t, w.do(t, "POST", paths[2], &co.user, "application/json", []byte(`{}`)), 429)
	})

	t.Run("error/503 while every password check is busy", func(t *testing.T) {
		gate := &gatedHasher{entered: make(chan struct{}, 1), release: make(chan struct{})}
		w := newWorldOn(t, storetest.NewSQLite(t), func(o *tenant.ServiceOptions) {
			gate.PasswordHasher = o.Passwords
			o.Passwords, o.SlowHashes, o.SlowHashWait = gate, 1, 50*time.Millisecond
		})
		// Two users never seen, whose passwords (no credential key:
		// stored under the slow hash) take the slow check.
		a := w.createCompany(t, w.admin, "3101123456", "Empresa Uno S.A.")
		b := w.createCompany(t, w.admin, "3101654321", "Empresa Dos S.A.")
		gate.armed.Store(true)
		first := make(chan int, 1)
		go func() {
			first <- doWith(t, w.api, "GET", fmt.Sprintf("/api/companies/%d/branches/v4", a.id), &a.user, "", nil).status
		}()
		select {
		case <-gate.entered: // the first call holds the only slot
		case <-time.After(10 * time.Second):
			t.Fatal("the first call never reached the password check")
		}
		requireRetryAfter(t, w.do(t, "GET", fmt.Sprintf("/api/companies/%d/branches/v4", b.id), &b.user, "", nil), 503)
		close(gate.release)
		select {
		case got := <-first:
			if got != 200 {
				t.Errorf("the call that held the slot answered %d", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the first call did not finish")
		}
	})
}

// requireRetryAfter fails unless r is the A.7 body of status with a
// Retry-After of at least a second.
func requireRetryAfter(t *testing.T, r reply, status int) {
	t.Helper()
	requireA7(t, r, status)
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("%d with Retry-After %q", status, r.header.Get("Retry-After"))
	}
}

// gatedHasher, once armed, holds each password check until release is
// closed, and says on entered (when there is room) that one has started.
type gatedHasher struct {
	tenant.PasswordHasher
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (g *gatedHasher) Verify(enc string, p []byte) (bool, error) {
	if !g.armed.Load() {
		return g.PasswordHasher.Verify(enc, p)
	}
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.release
	return g.PasswordHasher.Verify(enc, p)
}
