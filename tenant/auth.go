package tenant

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
	"time"
)

// Authentication (A.1): every request carries an API token and the HTTP
// Basic pair of the same user.
//
// Cold path (first request of a pair, or after the cache entry expired):
// find the user by the SHA-256 of the token, compare the user name, verify
// the password with the slow hash, check that the user, its company and its
// branch are active, then cache the result under the token's digest for
// AuthTTL. The cached value is the principal plus HMAC-SHA256(AuthKey,
// token digest | user name | password).
//
// Warm path: SHA-256 of the token, one cache read, one HMAC and a
// constant-time compare. No store read and no slow hash. A pair whose HMAC
// does not match the cached one is refused at once: a token belongs to one
// user and API passwords never change, so a mismatch is a wrong pair.
//
// Invalidation: deactivating a user, or setting its company or branch
// activo=N, deletes the cache entries of every user concerned (keys are
// derived from the stored token digests), so the next request of any
// replica takes the cold path and is refused.

// authEntryVersion is the first byte of a cached entry; an entry of another
// version is ignored (cold path), so the format can change between releases.
const authEntryVersion = 1

// authCacheKey is the cache key of a token: the hex SHA-256 of the token,
// the same digest the store keeps.
func authCacheKey(tokenHash []byte) string { return hex.EncodeToString(tokenHash) }

// pairDigest binds the token digest, user name and password under AuthKey.
// HMAC states are pooled: keying one costs more than the digest itself.
func (s *Service) pairDigest(tokenHash []byte, username, password string) [sha256.Size]byte {
	m, _ := s.hmacs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, s.authKey)
	}
	m.Reset()
	m.Write(tokenHash)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(username)))
	m.Write(n[:])
	io.WriteString(m, username)
	io.WriteString(m, password)
	var out [sha256.Size]byte
	m.Sum(out[:0])
	s.hmacs.Put(m)
	return out
}

var roleCodes = map[Role]byte{RoleAdmin: 1, RoleReseller: 2, RoleBranch: 3}

func roleOf(code byte) (Role, bool) {
	switch code {
	case 1:
		return RoleAdmin, true
	case 2:
		return RoleReseller, true
	case 3:
		return RoleBranch, true
	}
	return "", false
}

// entry layout: version(1) role(1) userID(8) companyID(8) branchID(8)
// digest(32) username(rest)
const authEntryHeader = 1 + 1 + 8 + 8 + 8 + sha256.Size

func encodeAuthEntry(p Principal, digest []byte) []byte {
	b := make([]byte, 0, authEntryHeader+len(p.Username))
	b = append(b, authEntryVersion, roleCodes[p.Role])
	b = binary.BigEndian.AppendUint64(b, uint64(p.UserID))
	b = binary.BigEndian.AppendUint64(b, uint64(p.CompanyID))
	b = binary.BigEndian.AppendUint64(b, uint64(p.BranchID))
	b = append(b, digest...)
	return append(b, p.Username...)
}

func decodeAuthEntry(b []byte) (Principal, []byte, bool) {
	if len(b) < authEntryHeader || b[0] != authEntryVersion {
		return Principal{}, nil, false
	}
	role, ok := roleOf(b[1])
	if !ok {
		return Principal{}, nil, false
	}
	p := Principal{
		Role:      role,
		UserID:    int64(binary.BigEndian.Uint64(b[2:10])),
		CompanyID: int64(binary.BigEndian.Uint64(b[10:18])),
		BranchID:  int64(binary.BigEndian.Uint64(b[18:26])),
		Username:  string(b[authEntryHeader:]),
	}
	return p, b[26:authEntryHeader], true
}

// Authenticate checks an API token and Basic pair and returns who is
// calling. A wrong, unknown or deactivated pair is ErrUnauthenticated; other
// errors mean the store could not be asked.
func (s *Service) Authenticate(ctx context.Context, token, username, password string) (Principal, error) {
	if token == "" || username == "" || password == "" {
		return Principal{}, ErrUnauthenticated
	}
	th := sha256.Sum256([]byte(token))
	key := authCacheKey(th[:])
	sum := s.pairDigest(th[:], username, password)
	digest := sum[:]

	v, ok, err := s.cache.Get(ctx, key)
	if err != nil {
		s.cacheTrouble(ctx, "read", err)
	} else if ok {
		if p, want, ok := decodeAuthEntry(v); ok {
			if p.Role == RoleAdmin {
				// An admin's password may be a person's choice, weak enough
				// to guess: the backoff holds on the warm path too. Generated
				// credentials carry too much entropy for guessing to matter.
				if err := s.throttled(ctx, key); err != nil {
					return Principal{}, err
				}
			}
			if hmac.Equal(digest, want) {
				return p, nil
			}
			if p.Role == RoleAdmin {
				// Only where the warm path also enforces the lock: a
				// guess against a cached generated password is futile,
				// and counting it would lock the working client out of
				// its next cold login.
				s.failed(ctx, key, ErrUnauthenticated)
			}
			return Principal{}, ErrUnauthenticated
		}
	}

	// The cold path costs a store read and perhaps a slow hash: refused
	// while the user or the address backs off after failures.
	if err := s.throttled(ctx, key); err != nil {
		return Principal{}, err
	}
	// Concurrent cold requests of one pair share one slow check.
	flightKey := key + hex.EncodeToString(digest)
	res, err := s.flight.do(flightKey, func() (Principal, error) {
		return s.authenticateCold(ctx, th[:], key, digest, username, password)
	})
	if err != nil {
		s.failed(ctx, key, err)
	}
	return res, err
}

func (s *Service) authenticateCold(ctx context.Context, tokenHash []byte, key string, digest []byte, username, password string) (Principal, error) {
	u, err := s.store.APIUserByTokenHash(ctx, tokenHash)
	if errors.Is(err, ErrNotFound) {
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	if !TokenHashEqual(u.TokenHash, tokenHash) ||
		subtle.ConstantTimeCompare([]byte(u.Username), []byte(username)) != 1 {
		return Principal{}, ErrUnauthenticated
	}
	ok, err := s.verifyPassword(ctx, u, []byte(password))
	var busy *BusyError
	if errors.As(err, &busy) {
		return Principal{}, err
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate user %d: %w", u.ID, err)
	}
	if !ok {
		return Principal{}, ErrUnauthenticated
	}
	if err := s.checkActive(ctx, u); err != nil {
		return Principal{}, err
	}
	p := Principal{UserID: u.ID, Username: u.Username, Role: u.Role, CompanyID: u.CompanyID, BranchID: u.BranchID}
	if _, known := roleCodes[p.Role]; !known {
		return Principal{}, fmt.Errorf("authenticate user %d: unknown role %q", u.ID, p.Role)
	}
	if err := s.cache.Set(ctx, key, encodeAuthEntry(p, digest), s.ttl); err != nil {
		s.cacheTrouble(ctx, "write", err)
		return p, nil
	}
	// A deactivation that ran between the checks above and the write would
	// have deleted nothing; look again now that the entry exists, and drop
	// it if the user may no longer act.
	u2, err := s.store.APIUserByTokenHash(ctx, tokenHash)
	if err == nil {
		err = s.checkActive(ctx, u2)
	}
	if err != nil {
		if derr := s.cache.Delete(ctx, key); derr != nil {
			s.cacheTrouble(ctx, "delete", derr)
		}
		if errors.Is(err, ErrNotFound) {
			return Principal{}, ErrUnauthenticated
		}
		return Principal{}, err
	}
	return p, nil
}

// checkActive refuses a user that is inactive or whose company or branch is
// (ErrUnauthenticated), and reports store failures as they are.
func (s *Service) checkActive(ctx context.Context, u APIUser) error {
	if !u.Activo {
		return ErrUnauthenticated
	}
	if u.Role != RoleBranch {
		return nil
	}
	c, err := s.store.Company(ctx, u.CompanyID)
	if errors.Is(err, ErrNotFound) {
		return ErrUnauthenticated
	}
	if err != nil {
		return fmt.Errorf("authenticate user %d: %w", u.ID, err)
	}
	if !c.Activo {
		return ErrUnauthenticated
	}
	b, err := s.store.Branch(ctx, u.BranchID)
	if errors.Is(err, ErrNotFound) {
		return ErrUnauthenticated
	}
	if err != nil {
		return fmt.Errorf("authenticate user %d: %w", u.ID, err)
	}
	if !b.Activo || b.CompanyID != u.CompanyID {
		return ErrUnauthenticated
	}
	return nil
}

// forgetUsers deletes the cached credentials of users, so that their next
// request is checked against the store. The deletion is tried three times;
// if the cache stays unreachable an *UnavailableError is returned (the
// change itself is already stored, and making it again is safe: the
// caller is told to retry, 503); the deletion is then retried in the
// background until the entries expire. Nothing can stand in for the
// shared cache here: another replica would keep accepting the old pair.
func (s *Service) forgetUsers(ctx context.Context, users []APIUser) error {
	if len(users) == 0 {
		return nil
	}
	keys := make([]string, 0, len(users))
	for _, u := range users {
		if len(u.TokenHash) > 0 {
			keys = append(keys, authCacheKey(u.TokenHash))
		}
	}
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return Unavailable(errors.Join(err, ctx.Err()))
			case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
			}
		}
		if err = s.cache.Delete(ctx, keys...); err == nil {
			return nil
		}
	}
	s.log.ErrorContext(ctx, "cached credentials could not be dropped; retrying in the background until they expire",
		"users", len(keys), "ttl_s", s.ttl.Seconds(), "err", err)
	go s.retryForget(keys)
	return Unavailable(fmt.Errorf("drop cached credentials: %w", err))
}

// retryForget keeps trying to delete cache entries after a failed
// invalidation (the cache was unreachable), once a second, until it works
// or the entries have expired anyway.
func (s *Service) retryForget(keys []string) {
	deadline := time.Now().Add(s.ttl)
	for time.Now().Before(deadline) {
		time.Sleep(time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := s.cache.Delete(ctx, keys...)
		cancel()
		if err == nil {
			s.log.Info("cached credentials dropped after a retry", "users", len(keys))
			return
		}
	}
}

// forgetCompanyUsers drops the cached credentials of a company's users, of
// one branch when branchID is not zero.
func (s *Service) forgetCompanyUsers(ctx context.Context, companyID, branchID int64) error {
	users, err := s.store.APIUsers(ctx, companyID, branchID)
	if err != nil {
		return fmt.Errorf("list users to drop cached credentials: %w", err)
	}
	return s.forgetUsers(ctx, users)
}

// cacheTrouble logs a cache failure at warn, at most once every 30 seconds,
// so that a Redis outage does not flood the log. Authentication carries on
// from the store.
func (s *Service) cacheTrouble(ctx context.Context, op string, err error) {
	now := time.Now().UnixNano()
	last := s.lastCacheErr.Load()
	if now-last < int64(30*time.Second) || !s.lastCacheErr.CompareAndSwap(last, now) {
		return
	}
	s.log.WarnContext(ctx, "auth cache unavailable; authenticating from the store", "op", op, "err", err)
}

// flightGroup runs one call per key at a time and shares its result with
// the callers that arrive while it runs.
type flightGroup struct {
	mu    sync.Mutex
	calls map[string]*flightCall
}

type flightCall struct {
	done chan struct{}
	p    Principal
	err  error
}

func (g *flightGroup) do(key string, fn func() (Principal, error)) (Principal, error) {
	g.mu.Lock()
	if g.calls == nil {
		g.calls = map[string]*flightCall{}
	}
	if c, ok := g.calls[key]; ok {
		g.mu.Unlock()
		<-c.done
		return c.p, c.err
	}
	// Until fn returns, the shared result is a failure: a panicking fn must
	// not leave the waiters with a zero Principal and no error.
	c := &flightCall{done: make(chan struct{}), err: errors.New("authentication aborted")}
	g.calls[key] = c
	g.mu.Unlock()

	defer func() {
		g.mu.Lock()
		delete(g.calls, key)
		g.mu.Unlock()
		close(c.done)
	}()
	c.p, c.err = fn()
	return c.p, c.err
}
