package seal

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MasterKeyFile is the name of the generated master key inside the data
// folder on the embedded default.
const MasterKeyFile = "master.key"

// ParseMasterKey decodes a master key given in configuration: the standard
// or URL-safe base64 encoding (padded or not) of exactly 32 bytes. The error
// never repeats the value.
func ParseMasterKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("master key is empty")
	}
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding,
	} {
		k, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		if len(k) != KeySize {
			return nil, fmt.Errorf("master key must decode to %d bytes, it decodes to %d", KeySize, len(k))
		}
		return k, nil
	}
	return nil, errors.New("master key is not valid base64")
}

// LoadOrCreateMasterKey returns the master key kept in dir/master.key,
// generating it (32 random bytes, file mode 0600) when the file does not
// exist. The folder is created with mode 0700 if missing.
//
// An existing file is refused, with an error that says how to fix it, when
// anyone but its owner may read or write it, when it is not a regular file,
// or when it does not hold exactly 32 bytes: a key that others could read is
// no longer secret, and a truncated one would seal data nobody can open.
func LoadOrCreateMasterKey(dir string) ([]byte, error) {
	if dir == "" {
		return nil, errors.New("master key: data folder is empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("master key: create data folder: %w", err)
	}
	path := filepath.Join(dir, MasterKeyFile)

	k, err := readMasterKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}

	k = make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("master key: generate: %w", err)
	}
	// O_EXCL: two processes starting on one folder must not both write a
	// key; the loser reads the winner's.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readMasterKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("master key: create %s: %w", path, err)
	}
	_, werr := f.Write(k)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("master key: write %s: %w", path, err)
	}
	return k, nil
}

func readMasterKey(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("master key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("master key: %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("master key: %s has mode %#o, readable or writable by others; "+
			"it must be 0600 (chmod 600 %s) and, if others could read it, its secrets should be considered exposed",
			path, perm, path)
	}
	k, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	if len(k) != KeySize {
		return nil, fmt.Errorf("master key: %s holds %d bytes, want exactly %d; "+
			"it is damaged or not a master key (do not replace it if data was sealed with it)",
			path, len(k), KeySize)
	}
	return k, nil
}
