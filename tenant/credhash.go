package tenant

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"facturad/hacienda/msg"
)

// Generated credentials (API passwords of 24 random bytes) carry far more
// entropy than any guessing could cover, so a slow hash adds nothing to
// them and costs 19 MiB and tens of milliseconds per check: a reseller's
// thousand companies logging in after a restart ran hundreds of Argon2id
// hashes at once and took gigabytes. They are stored as HMAC-SHA-256 under
// a server key (derived from the master key, the same on every replica),
// compared in constant time. Argon2id stays for passwords a person chose
// (the bootstrap admin's), and every Argon2id check waits for one of a few
// slots, so that no flood can run more of them at once than there are
// cores. An old Argon2id hash of a generated password is re-stored as HMAC
// on its next successful use.

// hmacPrefix marks a stored HMAC-SHA-256 hash: "$hmac-sha256$v=1$<b64>".
const hmacPrefix = "$hmac-sha256$v=1$"

// BusyError refuses a request whose slow password check found no free slot
// in time: 503 with Retry-After, as overloads are answered.
type BusyError struct{ After time.Duration }

func (e *BusyError) Error() string {
	return "too many password checks at once; try again shortly"
}

// Describe is the refusal for the caller.
func (e *BusyError) Describe() msg.Message { return msg.CredentialsBusy.With() }

// HTTPStatus is 503.
func (e *BusyError) HTTPStatus() int { return 503 }

// RetryAfter is how long the caller should wait.
func (e *BusyError) RetryAfter() time.Duration { return e.After }

// Shed is true: the refusal is the process's bound on slow password checks
// (load), not a failure.
func (e *BusyError) Shed() bool { return true }

// credMAC is HMAC-SHA-256 of a generated password under the credential key.
func (s *Service) credMAC(password []byte) []byte {
	m := hmac.New(sha256.New, s.credKey)
	m.Write(password)
	return m.Sum(nil)
}

// fastHash is the stored form of a generated password.
func (s *Service) fastHash(password []byte) string {
	return hmacPrefix + base64.RawStdEncoding.EncodeToString(s.credMAC(password))
}

// hashPassword returns the stored form of a password: HMAC for a generated
// one when the service has a credential key, Argon2id otherwise.
func (s *Service) hashPassword(ctx context.Context, password []byte, chosen bool) (string, error) {
	if !chosen && len(s.credKey) > 0 {
		return s.fastHash(password), nil
	}
	release, err := s.slowSlot(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return s.passwords.Hash(password)
}

// verifyPassword checks password against u's stored hash. A generated
// password still stored under Argon2id is re-stored as HMAC once it
// matches (admins keep Argon2id: their passwords may be chosen).
func (s *Service) verifyPassword(ctx context.Context, u APIUser, password []byte) (ok bool, err error) {
	if rest, isFast := strings.CutPrefix(u.PasswordHash, hmacPrefix); isFast {
		if len(s.credKey) == 0 {
			return false, errors.New("a password is stored as HMAC but the service has no credential key")
		}
		want, err := base64.RawStdEncoding.DecodeString(rest)
		if err != nil {
			return false, fmt.Errorf("stored password hash: %w", err)
		}
		return hmac.Equal(s.credMAC(password), want), nil
	}
	release, err := s.slowSlot(ctx)
	if err != nil {
		return false, err
	}
	ok, err = s.passwords.Verify(u.PasswordHash, password)
	release()
	if err != nil || !ok {
		return ok, err
	}
	if u.Role != RoleAdmin && len(s.credKey) > 0 {
		// A generated password still under Argon2id: store it as HMAC, so
		// that its next cold check costs nothing. A failure only means
		// the next check is slow again.
		if err := s.store.SetAPIUserPasswordHash(ctx, u.ID, u.PasswordHash, s.fastHash(password)); err != nil {
			s.log.WarnContext(ctx, "re-store a password hash", "user", u.ID, "err", err)
		}
	}
	return true, nil
}

// slowSlot waits for one of the slow-hash slots, at most SlowHashWait and
// never past ctx; it answers a *BusyError when none frees in time.
func (s *Service) slowSlot(ctx context.Context) (release func(), err error) {
	if ctx.Err() != nil {
		// The caller has gone: start no slow work for it.
		return nil, &BusyError{After: time.Second}
	}
	select {
	case s.slow <- struct{}{}:
		return func() { <-s.slow }, nil
	default:
	}
	t := time.NewTimer(s.slowWait)
	defer t.Stop()
	select {
	case s.slow <- struct{}{}:
		return func() { <-s.slow }, nil
	case <-t.C:
		return nil, &BusyError{After: time.Second}
	case <-ctx.Done():
		return nil, &BusyError{After: time.Second}
	}
}
