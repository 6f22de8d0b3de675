package recepcion

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// tokenAnswer is the token service's JSON answer (Keycloak field names).
type tokenAnswer struct {
	AccessToken      string `json:"access_token"`
	ExpiresIn        int64  `json:"expires_in"`
	RefreshToken     string `json:"refresh_token"`
	RefreshExpiresIn int64  `json:"refresh_expires_in"`
	TokenType        string `json:"token_type"`
}

// oidcError renders the token service's error body ("invalid_grant: Invalid
// user credentials"), or "" when the body is not one.
func oidcError(body []byte) string {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		return ""
	}
	if e.Description == "" {
		return e.Error
	}
	return e.Error + ": " + e.Description
}

// tokens is the state of one company's session. It is replaced whole, so
// readers load it without a lock.
type tokens struct {
	fingerprint  [32]byte // of the credentials that obtained it
	access       string
	useUntil     time.Time // renew the access token from this instant
	expires      time.Time // the access token is dead from this instant
	refresh      string
	refreshUntil time.Time // log in again from this instant
}

// session is one company's token cache entry. At most one renewal runs at
// a time (flight); every caller that needs a token meanwhile waits for it
// and shares its result, success or failure, so that a thousand concurrent
// calls make one exchange with the token service, and a token service that
// hangs is waited for once, not a thousand times in a row.
type session struct {
	state atomic.Pointer[tokens]
	// refused is the last login the token service refused for bad
	// credentials; nil once a login succeeds.
	refused atomic.Pointer[refusal]
	// worked is the last token obtained, and with which credentials.
	worked atomic.Pointer[success]
	// tested is the last test login (CheckLogin) refused; nil once one
	// works.
	tested atomic.Pointer[refusal]

	mu     sync.Mutex
	flight *flight
}

// refusal remembers credentials the token service refused: their
// fingerprint (a hash, never the password), when, and the answer. The same
// credentials are not tried again before Options.RefusedCredentialsWait has
// passed, so that retries of many documents do not lock the taxpayer's
// account with failed logins; changed credentials are tried at once.
type refusal struct {
	fp  [32]byte
	at  time.Time
	err error
}

// success remembers when credentials (their fingerprint) last got a token.
type success struct {
	fp [32]byte
	at time.Time
}

// flight is one renewal in progress.
type flight struct {
	done   chan struct{}
	fp     [32]byte
	access string
	err    error
}

type tokenCache struct {
	c        *Client
	mu       sync.Mutex
	sessions map[int64]*session

	// refusedMu guards refusedAt: when each company's login was last
	// refused as if for wrong credentials, for the outage rule.
	refusedMu sync.Mutex
	refusedAt map[int64]time.Time
}

func fingerprint(creds Credentials) [32]byte {
	h := sha256.New()
	h.Write([]byte(creds.Username))
	h.Write([]byte{0})
	h.Write(creds.Password)
	var f [32]byte
	h.Sum(f[:0])
	return f
}

func (tc *tokenCache) session(companyID int64) *session {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	s := tc.sessions[companyID]
	if s == nil {
		s = &session{}
		tc.sessions[companyID] = s
	}
	return s
}

// token returns a valid access token for the company, obtaining or renewing
// it when needed. Concurrent callers for one company share one exchange.
func (tc *tokenCache) token(ctx context.Context, creds Credentials) (string, error) {
	if creds.Username == "" || len(creds.Password) == 0 {
		return "", fmt.Errorf("tax authority token for company %d: %w", creds.CompanyID, ErrMissingCredentials)
	}
	fp := fingerprint(creds)
	s := tc.session(creds.CompanyID)
	for {
		if t := s.state.Load(); t != nil && t.fingerprint == fp && t.access != "" && tc.c.clock.Now().Before(t.useUntil) {
			return t.access, nil
		}
		if err := tc.stillRefused(s, fp, creds); err != nil {
			return "", fmt.Errorf("tax authority token for company %d: %w", creds.CompanyID, err)
		}
		if err := ctx.Err(); err != nil {
			return "", ClassifyTransport(OpToken, err, false)
		}
		s.mu.Lock()
		f := s.flight
		if f == nil {
			f = &flight{done: make(chan struct{}), fp: fp}
			s.flight = f
			// The renewal runs on its own so that the caller that started it
			// may give up without failing the others; it is bounded by
			// TokenTimeout per exchange.
			go tc.fly(context.WithoutCancel(ctx), s, f, creds)
		}
		s.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return "", ClassifyTransport(OpToken, ctx.Err(), false)
		}
		if f.fp != fp {
			continue // a renewal for other credentials (a password change): renew again
		}
		return f.access, f.err
	}
}

// fly runs one renewal and publishes its result.
func (tc *tokenCache) fly(ctx context.Context, s *session, f *flight, creds Credentials) {
	f.access, f.err = tc.renew(ctx, s, creds, f.fp)
	s.mu.Lock()
	s.flight = nil
	s.mu.Unlock()
	close(f.done)
}

// renew obtains a new access token: by the refresh grant while the refresh
// token lives, by logging in otherwise or when the refresh is refused.
func (tc *tokenCache) renew(ctx context.Context, s *session, creds Credentials, fp [32]byte) (string, error) {
	now := tc.c.clock.Now()
	t := s.state.Load()
	if t != nil && t.fingerprint != fp {
		t = nil // the company's user or password changed: start over
	}
	if t != nil && t.access != "" && now.Before(t.useUntil) {
		return t.access, nil // renewed by the previous flight
	}
	alive := func() bool { return t != nil && t.access != "" && now.Before(t.expires) }
	if t != nil && t.refresh != "" && now.Before(t.refreshUntil) {
		nt, err := tc.grant(ctx, creds, fp, "refresh_token", t.refresh)
		if err == nil {
			s.state.Store(nt)
			return nt.access, nil
		}
		var ae *APIError
		if !errors.As(err, &ae) || (ae.Status != http.StatusBadRequest && ae.Status != http.StatusUnauthorized) {
			if alive() {
				return t.access, nil // renewal failed early: the old token still works
			}
			return "", err
		}
		// The refresh token was refused (expired, revoked, session ended):
		// log in again below.
		tc.c.log.DebugContext(ctx, "tax-authority refresh refused, logging in again", "company", creds.CompanyID, "cause", ae.Cause)
	}
	if err := tc.stillRefused(s, fp, creds); err != nil {
		return "", err // refused by a flight that ended meanwhile
	}
	nt, err := tc.grant(ctx, creds, fp, "password", "")
	if err != nil {
		if errors.Is(err, ErrCredentials) {
			err = tc.judgeRefusal(ctx, s, creds, fp, err)
		}
		if errors.Is(err, ErrCredentials) {
			s.refused.Store(&refusal{fp: fp, at: tc.c.clock.Now(), err: err})
			tc.c.log.WarnContext(ctx, "tax-authority login refused; these credentials are not tried again for a while",
				"company", creds.CompanyID, "wait_s", tc.c.opts.RefusedCredentialsWait.Seconds())
		}
		if alive() && !errors.Is(err, ErrCredentials) {
			return t.access, nil
		}
		s.state.Store(nil)
		return "", err
	}
	s.refused.Store(nil)
	s.worked.Store(&success{fp: fp, at: tc.c.clock.Now()})
	s.state.Store(nt)
	return nt.access, nil
}

// judgeRefusal tells wrong credentials from a token service that fails
// while answering like it: a refusal is taken for an outage when the token
// service says it is unavailable, when the same credentials got a token
// within CredentialsTrust, or when OutageCompanies distinct companies
// (this one included) were refused within OutageWindow. An outage is
// returned as a copy of the refusal with Outage set, which no longer
// matches ErrCredentials; a refusal of the credentials is returned as is.
func (tc *tokenCache) judgeRefusal(ctx context.Context, s *session, creds Credentials, fp [32]byte, err error) error {
	var ae *APIError
	if !errors.As(err, &ae) {
		return err
	}
	o := tc.c.opts
	now := tc.c.clock.Now()
	why := ""
	code, _, _ := strings.Cut(ae.Cause, ":")
	switch code {
	case "temporarily_unavailable", "server_error":
		why = "the token service says " + code
	}
	if w := s.worked.Load(); why == "" && o.CredentialsTrust > 0 && w != nil && w.fp == fp && now.Sub(w.at) < o.CredentialsTrust {
		why = "the same credentials got a token " + now.Sub(w.at).Round(time.Second).String() + " ago"
	}
	if n := tc.refusedCompanies(creds.CompanyID, now); why == "" && o.OutageCompanies > 0 && o.OutageWindow > 0 && n >= o.OutageCompanies {
		why = strconv.Itoa(n) + " companies refused within " + o.OutageWindow.String()
	}
	if why == "" {
		tc.c.metrics.refusals.WithLabelValues("credentials").Inc()
		return err
	}
	tc.c.metrics.refusals.WithLabelValues("outage").Inc()
	tc.c.log.WarnContext(ctx, "tax-authority login refused, taken for an outage of the token service; retried",
		"company", creds.CompanyID, "status", ae.Status, "why", why)
	out := *ae
	out.Outage, out.Retryable = why, true
	return &out
}

// refusedCompanies records that the company's login was refused at now and
// returns how many distinct companies were refused within OutageWindow.
func (tc *tokenCache) refusedCompanies(companyID int64, now time.Time) int {
	tc.refusedMu.Lock()
	defer tc.refusedMu.Unlock()
	if tc.refusedAt == nil {
		tc.refusedAt = map[int64]time.Time{}
	}
	tc.refusedAt[companyID] = now
	n := 0
	for id, at := range tc.refusedAt {
		if now.Sub(at) >= tc.c.opts.OutageWindow {
			delete(tc.refusedAt, id)
			continue
		}
		n++
	}
	return n
}

// stillRefused returns the remembered refusal when these credentials
// (fingerprint fp) were refused less than RefusedCredentialsWait ago, unless
// the caller asks to try them all the same (Credentials.IgnoreRefusal). The
// error matches ErrCredentials and is not retryable; no call is made.
func (tc *tokenCache) stillRefused(s *session, fp [32]byte, creds Credentials) error {
	r := s.refused.Load()
	wait := tc.c.opts.RefusedCredentialsWait
	if creds.IgnoreRefusal || r == nil || r.fp != fp || wait < 0 || !tc.c.clock.Now().Before(r.at.Add(wait)) {
		return nil
	}
	return fmt.Errorf("these credentials were refused at %s; not tried again before %s: %w",
		r.at.UTC().Format(time.RFC3339), r.at.Add(wait).UTC().Format(time.RFC3339), r.err)
}

// invalidate drops the company's access token after the reception API
// refused it, unless it was already replaced. The refresh token is kept:
// the next call tries it before logging in again.
func (tc *tokenCache) invalidate(companyID int64, access string) {
	s := tc.session(companyID)
	for {
		t := s.state.Load()
		if t == nil || t.access != access {
			return
		}
		nt := *t
		nt.access, nt.useUntil, nt.expires = "", time.Time{}, time.Time{}
		if s.state.CompareAndSwap(t, &nt) {
			return
		}
	}
}

// renewAt is when a credential that lives for life seconds, obtained at
// start, should be renewed.
func (tc *tokenCache) renewAt(start time.Time, life int64) time.Time {
	d := time.Duration(life) * time.Second
	margin := tc.c.opts.RefreshBefore
	if margin > d/2 {
		margin = d / 2
	}
	return start.Add(d - margin)
}

// grant makes one exchange with the token service.
func (tc *tokenCache) grant(ctx context.Context, creds Credentials, fp [32]byte, kind, refresh string) (*tokens, error) {
	form := url.Values{}
	form.Set("grant_type", kind)
	form.Set("client_id", tc.c.ep.ClientID)
	if kind == "password" {
		form.Set("username", creds.Username)
		form.Set("password", string(creds.Password))
	} else {
		form.Set("refresh_token", refresh)
	}
	start := tc.c.clock.Now()
	resp, err := tc.c.exchange(ctx, OpToken, kind, http.MethodPost, tc.c.ep.TokenURL,
		"application/x-www-form-urlencoded; charset=utf-8", []byte(form.Encode()), "")
	if err != nil {
		tc.c.metrics.grant(kind, err)
		return nil, err
	}
	if err := Check(OpToken, resp.status, resp.header, resp.body); err != nil {
		tc.c.metrics.grant(kind, err)
		return nil, err
	}
	var ans tokenAnswer
	if err := json.Unmarshal(resp.body, &ans); err != nil || ans.AccessToken == "" {
		if err == nil {
			err = errors.New("no access_token in the answer")
		}
		te := &TransportError{Op: OpToken, Kind: KindUnreadable, Retryable: true, Err: fmt.Errorf("read token answer: %w", err)}
		tc.c.metrics.grant(kind, te)
		return nil, te
	}
	if ans.TokenType != "" && !strings.EqualFold(ans.TokenType, "bearer") {
		te := &TransportError{Op: OpToken, Kind: KindUnreadable, Retryable: false, Err: fmt.Errorf("token type %q, want bearer", ans.TokenType)}
		tc.c.metrics.grant(kind, te)
		return nil, te
	}
	ans.ExpiresIn = clampLifetime(ans.ExpiresIn, defaultAccessLifetime)
	if ans.RefreshExpiresIn > 0 {
		ans.RefreshExpiresIn = clampLifetime(ans.RefreshExpiresIn, 0)
	}
	t := &tokens{
		fingerprint: fp,
		access:      ans.AccessToken,
		useUntil:    tc.renewAt(start, ans.ExpiresIn),
		expires:     start.Add(time.Duration(ans.ExpiresIn)*time.Second - time.Second),
	}
	if ans.RefreshToken != "" && ans.RefreshExpiresIn > 0 {
		t.refresh = ans.RefreshToken
		t.refreshUntil = tc.renewAt(start, ans.RefreshExpiresIn)
	}
	tc.c.metrics.grant(kind, nil)
	tc.c.log.DebugContext(ctx, "tax-authority token obtained", "company", creds.CompanyID, "grant", kind,
		"expires_in_s", ans.ExpiresIn, "refresh_expires_in_s", ans.RefreshExpiresIn)
	return t, nil
}

// defaultAccessLifetime is assumed when an answer omits expires_in: the
// documented 300 s.
const defaultAccessLifetime = 300

// The bounds of a token lifetime read from the token service, in seconds:
// the documented lifetimes are 300 s (access) and 36,000 s (refresh). A
// lifetime past maxLifetime would overflow the duration arithmetic (a renew
// time in the past, so a token fetched on every call); one under
// minLifetime would do the same by design.
const (
	minLifetime = 10
	maxLifetime = 24 * 60 * 60
)

// clampLifetime bounds a lifetime read from the token service; a missing
// or negative one is def (def 0 keeps it missing).
func clampLifetime(secs, def int64) int64 {
	switch {
	case secs <= 0:
		return def
	case secs < minLifetime:
		return minLifetime
	case secs > maxLifetime:
		return maxLifetime
	}
	return secs
}

// logout ends every session that has a live refresh token.
func (tc *tokenCache) logout(ctx context.Context) error {
	if tc.c.ep.LogoutURL == "" {
		return nil
	}
	tc.mu.Lock()
	var all []*session
	for _, s := range tc.sessions {
		all = append(all, s)
	}
	tc.mu.Unlock()
	var errs []error
	now := tc.c.clock.Now()
	for _, s := range all {
		t := s.state.Swap(nil)
		if t == nil || t.refresh == "" || !now.Before(t.refreshUntil) {
			continue
		}
		if err := tc.endSession(ctx, t.refresh); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// endSession ends the session of a refresh token at the token service
// (logout); nothing when the environment has no logout endpoint.
func (tc *tokenCache) endSession(ctx context.Context, refresh string) error {
	if tc.c.ep.LogoutURL == "" {
		return nil
	}
	form := url.Values{}
	form.Set("client_id", tc.c.ep.ClientID)
	form.Set("refresh_token", refresh)
	resp, err := tc.c.exchange(ctx, OpLogout, "logout", http.MethodPost, tc.c.ep.LogoutURL,
		"application/x-www-form-urlencoded; charset=utf-8", []byte(form.Encode()), "")
	if err != nil {
		return err
	}
	return Check(OpLogout, resp.status, resp.header, resp.body)
}
