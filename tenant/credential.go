package tenant

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
)

// Generated secrets: 24 random bytes give a 32-character password and 32
// random bytes a 43-character token, both base64url without padding (no
// ':' so the password is safe inside HTTP Basic).
const (
	passwordBytes = 24
	tokenBytes    = 32
	suffixChars   = 6
)

func randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// randomSuffix returns n lower-case letters and digits.
func randomSuffix(n int) (string, error) {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789" // 32 symbols, no look-alikes
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return string(b), nil
}

// generatedUsername derives a readable user name from a company's
// identification and branch code plus a random suffix, such as
// "3101123456-001-k7fq2m": support can tell whose it is at a glance, and the
// suffix keeps it unique when a branch gets several users.
func generatedUsername(identificacion, sucursal string) (string, error) {
	suffix, err := randomSuffix(suffixChars)
	if err != nil {
		return "", err
	}
	parts := []string{}
	if identificacion != "" {
		parts = append(parts, identificacion)
	}
	if sucursal != "" {
		parts = append(parts, sucursal)
	}
	return strings.Join(append(parts, suffix), "-"), nil
}

// newSecrets returns a fresh password and API token.
func newSecrets() (password, token string, err error) {
	if password, err = randomString(passwordBytes); err != nil {
		return "", "", err
	}
	if token, err = randomString(tokenBytes); err != nil {
		return "", "", err
	}
	return password, token, nil
}
