package sandbox

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// idp is the simulated token service (Keycloak's OpenID Connect token
// endpoint, resource-owner password and refresh grants).
type idp struct {
	s *Sandbox

	mu       sync.Mutex
	users    map[string]string
	access   map[string]accessToken
	refresh  map[string]*oidcSession
	sessions map[*oidcSession]struct{}
	grants   int // since the last sweep of expired entries
}

type oidcSession struct {
	user    string
	expires time.Time // the session's maximum: refresh tokens die with it
	revoked bool
}

type accessToken struct {
	session *oidcSession
	expires time.Time
}

func newIDP(s *Sandbox, users map[string]string) *idp {
	p := &idp{
		s:        s,
		users:    map[string]string{},
		access:   map[string]accessToken{},
		refresh:  map[string]*oidcSession{},
		sessions: map[*oidcSession]struct{}{},
	}
	for u, pw := range users {
		p.users[u] = pw
	}
	return p
}

func (p *idp) addUser(u, pw string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users[u] = pw
}

func (p *idp) revokeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for sess := range p.sessions {
		sess.revoked = true
	}
	p.access = map[string]accessToken{}
	p.refresh = map[string]*oidcSession{}
	p.sessions = map[*oidcSession]struct{}{}
}

// userShape is the form of the tax authority's user names (spec §15.1):
// cp + a letter for the kind of taxpayer, the formatted identification,
// and the environment's domain, with "stag." for staging. A production
// user name against staging, a classic mistake, is refused like a wrong
// password.
var userShape = regexp.MustCompile(`^cp[a-z]-[0-9][0-9-]*@(stag\.)?comprobanteselectronicos\.go\.cr$`)

// shapedLike reports whether u is a user name of the realm's environment
// (a realm ending in -stag is staging's).
func shapedLike(realm, u string) bool {
	m := userShape.FindStringSubmatch(strings.ToLower(u))
	return m != nil && (m[1] != "") == strings.HasSuffix(realm, "-stag")
}

func (p *idp) checkPassword(u, pw string) bool {
	if u == "" || pw == "" || !shapedLike(p.s.opts.Realm, u) {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.users) == 0 {
		return true
	}
	want, ok := p.users[u]
	return ok && subtle.ConstantTimeCompare([]byte(want), []byte(pw)) == 1
}

// authenticate returns the user of a valid access token.
func (p *idp) authenticate(token string) (string, bool) {
	now := p.s.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.access[token]
	if !ok || !now.Before(t.expires) || t.session.revoked {
		return "", false
	}
	return t.session.user, true
}

func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// issue mints an access token and a refresh token in sess. Caller holds mu.
func (p *idp) issue(sess *oidcSession, now time.Time) map[string]any {
	o := p.s.opts
	access := newToken()
	accessExp := now.Add(o.AccessTokenLifetime)
	p.access[access] = accessToken{session: sess, expires: accessExp}
	refresh := newToken()
	p.refresh[refresh] = sess
	p.sessions[sess] = struct{}{}
	p.grants++
	if p.grants >= 1024 {
		p.sweep(now)
		p.grants = 0
	}
	return map[string]any{
		"access_token":       access,
		"expires_in":         int64(o.AccessTokenLifetime / time.Second),
		"refresh_expires_in": int64(sess.expires.Sub(now) / time.Second),
		"refresh_token":      refresh,
		"token_type":         "bearer",
		"not-before-policy":  0,
		"session_state":      newToken()[:22],
		"scope":              "",
	}
}

// sweep forgets expired tokens and sessions. Caller holds mu.
func (p *idp) sweep(now time.Time) {
	for k, t := range p.access {
		if !now.Before(t.expires) {
			delete(p.access, k)
		}
	}
	for k, sess := range p.refresh {
		if !now.Before(sess.expires) {
			delete(p.refresh, k)
			delete(p.sessions, sess)
		}
	}
}

func oidcFail(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func (p *idp) handleToken(w http.ResponseWriter, r *http.Request) {
	if code := p.s.tokenRefusal(); code != 0 {
		p.s.stats.tokenRefused.Add(1)
		if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		if code == http.StatusBadRequest || code == http.StatusUnauthorized {
			// What a real outage looked like: the identity provider, its
			// user store unreachable, refused every login as if the
			// credentials were wrong.
			oidcFail(w, code, "invalid_grant", "Invalid user credentials")
			return
		}
		oidcFail(w, code, "temporarily_unavailable", "The token service refused the request (sandbox fault).")
		return
	}
	if !p.form(w, r) {
		return
	}
	if r.PostForm.Get("client_id") != p.s.opts.ClientID {
		p.s.stats.tokenRefused.Add(1)
		oidcFail(w, http.StatusUnauthorized, "invalid_client", "Invalid client or Invalid client credentials")
		return
	}
	now := p.s.clock.Now()
	switch r.PostForm.Get("grant_type") {
	case "password":
		user, pw := r.PostForm.Get("username"), r.PostForm.Get("password")
		if !p.checkPassword(user, pw) {
			p.s.stats.tokenRefused.Add(1)
			oidcFail(w, http.StatusUnauthorized, "invalid_grant", "Invalid user credentials")
			return
		}
		p.mu.Lock()
		ans := p.issue(&oidcSession{user: user, expires: now.Add(p.s.opts.RefreshTokenLifetime)}, now)
		p.mu.Unlock()
		p.s.stats.passwordGrants.Add(1)
		writeToken(w, ans)
	case "refresh_token":
		p.mu.Lock()
		sess, ok := p.refresh[r.PostForm.Get("refresh_token")]
		if !ok || sess.revoked || !now.Before(sess.expires) {
			p.mu.Unlock()
			p.s.stats.tokenRefused.Add(1)
			oidcFail(w, http.StatusBadRequest, "invalid_grant", "Token is not active")
			return
		}
		ans := p.issue(sess, now)
		p.mu.Unlock()
		p.s.stats.refreshGrants.Add(1)
		writeToken(w, ans)
	case "":
		oidcFail(w, http.StatusBadRequest, "invalid_request", "Missing form parameter: grant_type")
	default:
		oidcFail(w, http.StatusBadRequest, "unsupported_grant_type", "Unsupported grant_type")
	}
}

func (p *idp) handleLogout(w http.ResponseWriter, r *http.Request) {
	if !p.form(w, r) {
		return
	}
	if r.PostForm.Get("client_id") != p.s.opts.ClientID {
		oidcFail(w, http.StatusUnauthorized, "invalid_client", "Invalid client or Invalid client credentials")
		return
	}
	p.mu.Lock()
	sess, ok := p.refresh[r.PostForm.Get("refresh_token")]
	if ok {
		sess.revoked = true
		delete(p.sessions, sess)
		for k, s := range p.refresh {
			if s == sess {
				delete(p.refresh, k)
			}
		}
		for k, t := range p.access {
			if t.session == sess {
				delete(p.access, k)
			}
		}
	}
	p.mu.Unlock()
	if !ok {
		oidcFail(w, http.StatusBadRequest, "invalid_grant", "Invalid refresh token")
		return
	}
	p.s.stats.logouts.Add(1)
	w.WriteHeader(http.StatusNoContent)
}

// form parses a form-encoded body, answering 400 when it is not one.
func (p *idp) form(w http.ResponseWriter, r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/x-www-form-urlencoded" {
		oidcFail(w, http.StatusBadRequest, "invalid_request", "Content-Type must be application/x-www-form-urlencoded")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oidcFail(w, http.StatusBadRequest, "invalid_request", "Unreadable form")
		return false
	}
	return true
}

func writeToken(w http.ResponseWriter, ans map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	_ = json.NewEncoder(w).Encode(ans)
}

// bearer extracts the token of an "Authorization: bearer …" header; the
// scheme is matched without regard to case.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

func retryAfterHeader(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return strconv.FormatInt(s, 10)
}
