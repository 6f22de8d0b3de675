package tenant

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// PasswordHasher makes and checks slow password hashes. Argon2id is the
// implementation; tests wrap it to count calls.
type PasswordHasher interface {
	// Hash returns the encoded hash of password, salt and parameters
	// included.
	Hash(password []byte) (string, error)
	// Verify reports whether password matches an encoded hash.
	Verify(encoded string, password []byte) (bool, error)
}

// Argon2id hashes passwords with argon2id and encodes them in the usual
// self-describing form
//
//	$argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt b64>$<hash b64>
//
// Verify reads the parameters from the encoded hash, so raising them later
// keeps old hashes valid. The zero value uses DefaultArgon2id's parameters.
type Argon2id struct {
	Memory  uint32 // KiB
	Time    uint32 // passes
	Threads uint8  // lanes
}

// DefaultArgon2id are the production parameters: 19 MiB, 2 passes, 1 lane
// (the OWASP baseline for argon2id), about 40 ms per hash on a server core.
// Lower parameters are for tests only (they make a test suite with many
// users fast), set through ServiceOptions.Passwords.
var DefaultArgon2id = Argon2id{Memory: 19 * 1024, Time: 2, Threads: 1}

const (
	argonSaltLen = 16
	argonKeyLen  = 32
	// Bounds on the parameters Verify accepts from a stored hash, so that a
	// damaged or planted row cannot make one check cost gigabytes.
	argonMaxMemory = 256 << 10 // 256 MiB in KiB
	argonMaxTime   = 16
)

func (a Argon2id) params() Argon2id {
	if a.Memory == 0 || a.Time == 0 || a.Threads == 0 {
		return DefaultArgon2id
	}
	return a
}

// Hash implements PasswordHasher.
func (a Argon2id) Hash(password []byte) (string, error) {
	p := a.params()
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey(password, salt, p.Time, p.Memory, p.Threads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// Verify implements PasswordHasher. A malformed hash is an error, a wrong
// password is (false, nil).
func (a Argon2id) Verify(encoded string, password []byte) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, errors.New("password hash: not an argon2id hash")
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errors.New("password hash: unsupported argon2 version")
	}
	var p Argon2id
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false, fmt.Errorf("password hash: parameters: %w", err)
	}
	if p.Memory == 0 || p.Memory > argonMaxMemory || p.Time == 0 || p.Time > argonMaxTime || p.Threads == 0 {
		return false, errors.New("password hash: parameters out of bounds")
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return false, errors.New("password hash: bad salt")
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) < 16 || len(want) > 64 {
		return false, errors.New("password hash: bad key")
	}
	got := argon2.IDKey(password, salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// HashToken returns the SHA-256 digest under which an API token is stored
// and looked up. Tokens are 256-bit random values, so a fast hash is enough:
// nobody can search the token space, and the store never holds a token that
// works if the table leaks.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// TokenHashEqual compares two token digests in constant time.
func TokenHashEqual(a, b []byte) bool {
	return len(a) == sha256.Size && subtle.ConstantTimeCompare(a, b) == 1
}
