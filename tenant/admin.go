package tenant

import (
	"context"
	"errors"
	"fmt"

	"facturad/hacienda/msg"
)

// AdminChange says what SetAdminCredentials did to the bootstrap admin.
type AdminChange struct {
	// Credentials holds the user name and, in clear, the password and token
	// that were set now (configured or generated); a part left as it was
	// is empty.
	Credentials Credentials
	// Created is set when the admin did not exist and was created.
	Created bool
	// PasswordSet and TokenSet are set when the stored password or token
	// was replaced.
	PasswordSet, TokenSet bool
	// Reactivated is set when a deactivated admin was switched on again.
	Reactivated bool
	// Generated lists what was generated rather than given: "contrasena",
	// "apiToken".
	Generated []string
}

// Changed reports whether anything was stored.
func (c AdminChange) Changed() bool {
	return c.Created || c.PasswordSet || c.TokenSet || c.Reactivated
}

// SetAdminCredentials makes the named bootstrap admin (default "admin")
// accept the given password and token, creating it when it is absent.
//
// A given value that the admin already has is left alone; one it does not
// have replaces the stored one. An empty value is generated when the admin
// is created or when reset is true (a recovery, which also switches a
// deactivated admin on again), and is otherwise left as stored. Cached
// credentials of the admin are dropped after a change, so that no replica
// sharing the cache keeps accepting the old pair.
//
// It is how configured admin credentials take effect on an existing admin
// at start, and how admin access is recovered (facturad admin-reset).
func (s *Service) SetAdminCredentials(ctx context.Context, username, password, token string, reset bool) (AdminChange, error) {
	if username == "" {
		username = DefaultAdminUser
	}
	e := newValidationError()
	checkUsername(e, "FACTURAD_ADMIN_USER", username)
	if password != "" && len(password) < MinAdminPassword {
		e.Add("FACTURAD_ADMIN_PASSWORD", msg.MinLength.With(MinAdminPassword))
	}
	if token != "" && len(token) < MinAdminToken {
		e.Add("FACTURAD_ADMIN_TOKEN", msg.MinLength.With(MinAdminToken))
	}
	if err := e.orNil(); err != nil {
		return AdminChange{}, err
	}
	u, err := s.store.APIUserByUsername(ctx, 0, username)
	if errors.Is(err, ErrNotFound) {
		ch, cerr := s.createAdmin(ctx, username, password, token)
		if !errors.Is(cerr, ErrConflict) {
			return ch, cerr
		}
		// Another replica starting at the same time may have created it
		// first: then it is updated like any existing admin.
		u, err = s.store.APIUserByUsername(ctx, 0, username)
	}
	switch {
	case err != nil:
		return AdminChange{}, fmt.Errorf("bootstrap admin %q: %w", username, err)
	case u.Role != RoleAdmin:
		return AdminChange{}, fmt.Errorf("bootstrap admin: user name %q is taken by a %s user: %w", username, u.Role, ErrConflict)
	}

	ch := AdminChange{Credentials: Credentials{Usuario: username}}
	gp, gt, err := newSecrets()
	if err != nil {
		return AdminChange{}, err
	}
	if password == "" && reset {
		password = gp
		ch.Generated = append(ch.Generated, "contrasena")
	}
	if token == "" && reset {
		token = gt
		ch.Generated = append(ch.Generated, "apiToken")
	}

	if password != "" {
		same, err := s.verifyPassword(ctx, u, []byte(password))
		if err != nil {
			// An unreadable stored hash is replaced, not kept.
			s.log.WarnContext(ctx, "bootstrap admin: stored password hash unreadable; replacing it", "user", u.ID, "err", err)
		}
		if !same {
			hash, err := s.hashPassword(ctx, []byte(password), true)
			if err != nil {
				return AdminChange{}, fmt.Errorf("bootstrap admin: hash password: %w", err)
			}
			if err := s.store.SetAPIUserPasswordHash(ctx, u.ID, u.PasswordHash, hash); err != nil {
				return AdminChange{}, fmt.Errorf("bootstrap admin: %w", err)
			}
			// The store skips a replacement when the hash changed meanwhile:
			// read it back so that a lost race is reported, not hidden.
			now, err := s.store.APIUserByUsername(ctx, 0, username)
			if err != nil {
				return AdminChange{}, fmt.Errorf("bootstrap admin: %w", err)
			}
			switch {
			case now.PasswordHash == hash:
				ch.PasswordSet = true
				ch.Credentials.Contrasena = password
			default:
				// Replicas starting together with the same configured
				// password: another one stored it first, under its own
				// salt. Only a different password is a conflict.
				if ok, _ := s.verifyPassword(ctx, now, []byte(password)); !ok {
					return AdminChange{}, fmt.Errorf("bootstrap admin: its password was changed by someone else meanwhile; run again: %w", ErrConflict)
				}
			}
		}
	}
	if token != "" {
		if h := HashToken(token); !TokenHashEqual(u.TokenHash, h) {
			err := s.store.SetAPIUserToken(ctx, u.ID, u.TokenHash, h)
			switch {
			case err == nil:
				ch.TokenSet = true
				ch.Credentials.APIToken = token
			case errors.Is(err, ErrConflict):
				// Another replica stored a token meanwhile: the same one
				// (configured alike) is no conflict.
				now, rerr := s.store.APIUserByUsername(ctx, 0, username)
				if rerr != nil {
					return AdminChange{}, fmt.Errorf("bootstrap admin: %w", rerr)
				}
				if !TokenHashEqual(now.TokenHash, h) {
					return AdminChange{}, fmt.Errorf("bootstrap admin: its token was changed by someone else meanwhile; run again: %w", err)
				}
			default:
				return AdminChange{}, fmt.Errorf("bootstrap admin: %w", err)
			}
		}
	}
	if reset && !u.Activo {
		if err := s.store.SetAPIUserActive(ctx, u.ID, true); err != nil {
			return AdminChange{}, fmt.Errorf("bootstrap admin: %w", err)
		}
		ch.Reactivated = true
	}
	if ch.Changed() {
		// The cache is keyed by the old token: drop its entry, so that the
		// old pair stops working and a new password under the old token is
		// checked against the store.
		if err := s.forgetUsers(ctx, []APIUser{u}); err != nil {
			return ch, fmt.Errorf("bootstrap admin: credentials stored, but cached ones not dropped: %w", err)
		}
	}
	return ch, nil
}

// createAdmin creates the bootstrap admin, generating what is not given.
func (s *Service) createAdmin(ctx context.Context, username, password, token string) (AdminChange, error) {
	ch := AdminChange{Created: true}
	gp, gt, err := newSecrets()
	if err != nil {
		return AdminChange{}, err
	}
	if password == "" {
		password = gp
		ch.Generated = append(ch.Generated, "contrasena")
	}
	if token == "" {
		token = gt
		ch.Generated = append(ch.Generated, "apiToken")
	}
	u, creds, err := s.userWith(ctx, username, password, token, RoleAdmin, true)
	if err != nil {
		return AdminChange{}, err
	}
	if err := s.store.CreateAPIUser(ctx, &u); err != nil {
		// ErrConflict: the name is taken, by another replica's admin made
		// meanwhile or by a user that is not an admin; the callers tell
		// which.
		return AdminChange{}, fmt.Errorf("bootstrap admin %q: %w", username, err)
	}
	ch.Credentials = creds
	return ch, nil
}
