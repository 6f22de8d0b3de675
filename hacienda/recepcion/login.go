package recepcion

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// TestLoginCooldown is how long CheckLogin answers a refused test login
// again without asking, for the same credentials: a caller that repeats
// the test in a loop with a wrong password makes two logins a minute, not
// the dozens that would lock the taxpayer's account at the tax authority.
// Changed credentials are tried at once.
const TestLoginCooldown = 30 * time.Second

// A connection test (contract A.14) logs in afresh to tell a company
// whether its tax-authority user and password work now, and, when they do
// not, what the token service said. It goes around the company's cached
// session on purpose: the session may hold a token obtained hours ago
// with a password changed since at the tax authority, and a test that
// answered from it would say nothing about the password.

// LoginError is why a login of CheckLogin failed, in words a company's
// people can act on. It wraps the client's own error (an *APIError, a
// *TransportError or ErrMissingCredentials), so errors.Is(err,
// ErrCredentials) and Judge work on it as on any other failure.
type LoginError struct {
	// Refused says the token service answered and refused the login (400
	// or 401, as it refuses a wrong user or password): Reason is then its
	// own text, the answer's error_description ("Invalid user
	// credentials"), or its error code when it gave no description.
	Refused bool
	// Reason is the token service's refusal text; for any other failure
	// it starts with "unreachable: " and says how the exchange failed (a
	// timeout, a refused connection, an answer 503 Service Unavailable);
	// for credentials the company does not have, it says so. It never
	// holds the user's password.
	Reason string
	// Err is the client's error.
	Err error
}

func (e *LoginError) Error() string {
	if e.Refused {
		return "tax-authority login refused: " + e.Reason
	}
	return "tax-authority login: " + e.Reason
}

func (e *LoginError) Unwrap() error { return e.Err }

// CheckLogin logs in with creds by a password grant, now, whatever the
// company's cached session holds, and ends the new session at once
// (logout, when the environment has a logout endpoint): the tax authority
// asks for one session per taxpayer and environment, and the one the
// company's calls use is the cached one. A nil error means the token
// service gave a token; any other is a *LoginError.
//
// The company's cached session is not disturbed: its tokens stay as they
// are, and a refusal is not remembered for it (the next call that needs a
// token judges its own login). A refused test is answered again for
// TestLoginCooldown without a login, for the same credentials. A login that works forgets a refusal of the same
// credentials remembered by earlier calls (RefusedCredentialsWait) and
// counts as a recent success of them (CredentialsTrust): the calls waiting
// on them may go on at once. Neither the password nor a token is logged or
// put in an error.
func (c *Client) CheckLogin(ctx context.Context, creds Credentials) error {
	if creds.Username == "" || len(creds.Password) == 0 {
		return &LoginError{Reason: "the company has no tax-authority user or password", Err: ErrMissingCredentials}
	}
	fp := fingerprint(creds)
	s := c.tokens.session(creds.CompanyID)
	if r := s.tested.Load(); r != nil && r.fp == fp && c.clock.Now().Before(r.at.Add(TestLoginCooldown)) {
		le := loginError(r.err)
		le.Reason += fmt.Sprintf(" (the same user and password were refused at %s; tried again from %s)",
			r.at.UTC().Format(time.RFC3339), r.at.Add(TestLoginCooldown).UTC().Format(time.RFC3339))
		return le
	}
	t, err := c.tokens.grant(ctx, creds, fp, "password", "")
	if err != nil {
		le := loginError(err)
		if le.Refused {
			s.tested.Store(&refusal{fp: fp, at: c.clock.Now(), err: err})
		}
		c.log.InfoContext(ctx, "tax-authority test login failed", "company", creds.CompanyID, "refused", le.Refused, "err", err)
		return le
	}
	s.tested.Store(nil)
	c.tokens.confirmed(creds.CompanyID, fp)
	if t.refresh != "" {
		// The login has been answered: the logout is made even when the
		// caller gives up meanwhile, bounded by TokenTimeout. A session
		// that could not be ended expires on its own (refresh_expires_in).
		if err := c.tokens.endSession(context.WithoutCancel(ctx), t.refresh); err != nil {
			c.log.DebugContext(ctx, "tax-authority test session not ended", "company", creds.CompanyID, "err", err)
		}
	}
	c.log.DebugContext(ctx, "tax-authority test login worked", "company", creds.CompanyID)
	return nil
}

// confirmed records that creds (fingerprint fp) just got a token: a
// refusal of the same credentials is forgotten, and the success is the
// evidence judgeRefusal weighs. The session's tokens are left alone.
func (tc *tokenCache) confirmed(companyID int64, fp [32]byte) {
	s := tc.session(companyID)
	if r := s.refused.Load(); r != nil && r.fp == fp {
		s.refused.CompareAndSwap(r, nil)
	}
	s.worked.Store(&success{fp: fp, at: tc.c.clock.Now()})
}

// loginError renders a failed login of CheckLogin.
func loginError(err error) *LoginError {
	var (
		ae *APIError
		te *TransportError
	)
	switch {
	case errors.As(err, &ae) && (ae.Status == http.StatusBadRequest || ae.Status == http.StatusUnauthorized):
		return &LoginError{Refused: true, Reason: refusalText(ae), Err: err}
	case errors.As(err, &ae):
		return &LoginError{Reason: "unreachable: the token service answered " + ae.reason(), Err: err}
	case errors.As(err, &te):
		return &LoginError{Reason: "unreachable: " + transportText(te), Err: err}
	}
	return &LoginError{Reason: "unreachable: the token service could not be reached", Err: err}
}

// refusalText is the token service's own words of a refusal: the
// description of its OpenID Connect error ("invalid_grant: Invalid user
// credentials" gives "Invalid user credentials"), else the error code,
// else the status.
func refusalText(ae *APIError) string {
	code, desc, found := strings.Cut(ae.Cause, ": ")
	switch {
	case found && oauthCode(code) && strings.TrimSpace(desc) != "":
		return strings.TrimSpace(desc)
	case ae.Cause != "":
		return ae.Cause
	}
	return strconv.Itoa(ae.Status) + " " + http.StatusText(ae.Status)
}

// oauthCode reports whether s looks like an OAuth 2.0 error code
// (invalid_grant, unauthorized_client): lower-case letters and
// underscores, the form Keycloak writes before its description.
func oauthCode(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return true
}

// transportText says how an exchange that got no readable answer failed,
// in a few words and its kind, without the underlying error: that one
// names the token URL, which may be an operator's internal egress proxy,
// and goes to the log instead.
func transportText(te *TransportError) string {
	what, ok := map[TransportKind]string{
		KindTimeout:     "no answer in time",
		KindCanceled:    "given up before an answer came",
		KindRefused:     "connection refused",
		KindUnreachable: "no route to the token service",
		KindReset:       "connection reset",
		KindCutOff:      "connection closed before the whole answer",
		KindDNS:         "its host name does not resolve",
		KindTLS:         "TLS failure (its certificate or the protocol)",
		KindUnreadable:  "its answer cannot be read",
		KindTooLarge:    "its answer is too large",
		KindBadRequest:  "the token URL is not valid",
	}[te.Kind]
	if !ok {
		what = "network failure"
	}
	return what + " (" + string(te.Kind) + ")"
}
