// Package seal encrypts the tenants' secrets at rest: the signing
// certificate (.p12), its PIN and the tax-authority password.
//
// It uses envelope encryption with AES-256-GCM. Every secret gets a fresh
// random 32-byte data key; the secret is encrypted under the data key and the
// data key is wrapped (also AES-256-GCM) under a key-encryption key derived
// from the master key. Both encryptions authenticate the same associated
// data, which names the format version, the company id and the secret's
// purpose, so a sealed value opens only for the company and the column it
// was written for: a sealed PIN copied into the certificate column, or into
// another company's row, fails to open.
//
// Sealed format, version 1 (all lengths in bytes):
//
//	version (1) = 0x01
//	wrap nonce (12) | wrapped data key (32 + 16 tag)
//	data nonce (12) | ciphertext (len(plaintext) + 16 tag)
//
// The associated data of both encryptions is
//
//	"facturad-seal" | version (1) | company id (8, big endian) | purpose
//
// A new scheme gets a new version byte; Open dispatches on it, so stored
// values of the old version keep opening while new ones are written in the
// new format.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
)

// KeySize is the size of the master key and of every data key.
const KeySize = 32

// Version1 is the first (current) sealed format.
const Version1 byte = 0x01

const (
	nonceSize   = 12
	tagSize     = 16
	wrappedSize = KeySize + tagSize
	headerSize  = 1 + nonceSize + wrappedSize + nonceSize
	// Overhead is how many bytes a sealed value adds to its plain text.
	Overhead = headerSize + tagSize
)

// Labels for the keys derived from the master key. Changing one changes
// every key derived with it, so they are part of the format.
const (
	labelKEK = "facturad seal key-wrap v1"
)

// ErrOpen means a sealed value did not open: it was tampered with, belongs
// to another company or purpose, or was sealed under another master key.
// The cause is deliberately not told apart.
var ErrOpen = errors.New("seal: sealed value does not open")

// Sealer seals and opens secrets under one master key, and during a
// rotation also opens those sealed under previous master keys. It is safe
// for concurrent use.
type Sealer struct {
	kek cipher.AEAD
	// previous are the key-encryption keys of earlier master keys: they
	// open, never seal.
	previous []cipher.AEAD
}

// New returns a Sealer for a 32-byte master key. The master key itself is
// not kept: only the key-encryption key derived from it.
func New(masterKey []byte) (*Sealer, error) {
	return NewWithPrevious(masterKey)
}

// NewWithPrevious returns a Sealer that seals under masterKey and opens
// values sealed under masterKey or any of previous: the state of a
// replica during a master-key rotation, until Rewrap has moved every stored
// value to the new key.
func NewWithPrevious(masterKey []byte, previous ...[]byte) (*Sealer, error) {
	kek, err := newKEK(masterKey)
	if err != nil {
		return nil, err
	}
	s := &Sealer{kek: kek}
	for i, p := range previous {
		if subtle.ConstantTimeCompare(p, masterKey) == 1 {
			return nil, fmt.Errorf("seal: previous master key %d is the current one", i+1)
		}
		k, err := newKEK(p)
		if err != nil {
			return nil, fmt.Errorf("seal: previous master key %d: %w", i+1, err)
		}
		s.previous = append(s.previous, k)
	}
	return s, nil
}

func newKEK(masterKey []byte) (cipher.AEAD, error) {
	if len(masterKey) != KeySize {
		return nil, fmt.Errorf("seal: master key must be %d bytes, got %d", KeySize, len(masterKey))
	}
	kek, err := DeriveKey(masterKey, labelKEK)
	if err != nil {
		return nil, err
	}
	defer clear(kek)
	return newGCM(kek)
}

// DeriveKey derives an independent 32-byte key for one use (named by label)
// from the master key with HKDF-SHA256, so that the master key is never used
// directly for two purposes.
func DeriveKey(masterKey []byte, label string) ([]byte, error) {
	if len(masterKey) != KeySize {
		return nil, fmt.Errorf("seal: master key must be %d bytes, got %d", KeySize, len(masterKey))
	}
	k, err := hkdf.Key(sha256.New, masterKey, nil, label, KeySize)
	if err != nil {
		return nil, fmt.Errorf("seal: derive key: %w", err)
	}
	return k, nil
}

// Seal encrypts plaintext for one company and purpose. An empty plaintext
// seals to an empty result, so "not set" stays "not set".
func (s *Sealer) Seal(companyID int64, purpose string, plaintext []byte) ([]byte, error) {
	if len(plaintext) == 0 {
		return nil, nil
	}
	if purpose == "" {
		return nil, errors.New("seal: purpose is required")
	}
	ad := associatedData(Version1, companyID, purpose)

	dataKey := make([]byte, KeySize)
	if _, err := rand.Read(dataKey); err != nil {
		return nil, fmt.Errorf("seal: data key: %w", err)
	}
	defer clear(dataKey)
	data, err := newGCM(dataKey)
	if err != nil {
		return nil, err
	}

	out := make([]byte, headerSize, headerSize+len(plaintext)+tagSize)
	out[0] = Version1
	wrapNonce := out[1 : 1+nonceSize]
	dataNonce := out[1+nonceSize+wrappedSize : headerSize]
	if _, err := rand.Read(wrapNonce); err != nil {
		return nil, fmt.Errorf("seal: nonce: %w", err)
	}
	if _, err := rand.Read(dataNonce); err != nil {
		return nil, fmt.Errorf("seal: nonce: %w", err)
	}
	s.kek.Seal(out[1+nonceSize:1+nonceSize], wrapNonce, dataKey, ad)
	return data.Seal(out, dataNonce, plaintext, ad), nil
}

// Open decrypts a value sealed for the same company and purpose, under
// the current master key or a previous one. An empty sealed value opens to
// nil. Any other failure is ErrOpen.
func (s *Sealer) Open(companyID int64, purpose string, sealed []byte) ([]byte, error) {
	if len(sealed) == 0 {
		return nil, nil
	}
	ad, dataKey, _, err := s.openDataKey(companyID, purpose, sealed)
	if err != nil {
		return nil, err
	}
	defer clear(dataKey)
	return openData(ad, dataKey, sealed)
}

// Rewrap returns sealed with its data key wrapped under the current master
// key. A value already under it is returned as it is with changed false;
// one under a previous master key gets a fresh wrap nonce and wrapped data
// key while its data nonce and ciphertext stay as they are, and changed is
// true. The whole value is authenticated first (company, purpose and
// ciphertext), so a damaged value is reported, not carried over: ErrOpen,
// as when it opens under none of the keys. Empty stays empty.
func (s *Sealer) Rewrap(companyID int64, purpose string, sealed []byte) (out []byte, changed bool, err error) {
	if len(sealed) == 0 {
		return sealed, false, nil
	}
	ad, dataKey, current, err := s.openDataKey(companyID, purpose, sealed)
	if err != nil {
		return nil, false, err
	}
	defer clear(dataKey)
	plain, err := openData(ad, dataKey, sealed)
	if err != nil {
		return nil, false, err
	}
	clear(plain)
	if current {
		return sealed, false, nil
	}
	out = make([]byte, len(sealed))
	copy(out, sealed)
	wrapNonce := out[1 : 1+nonceSize]
	if _, err := rand.Read(wrapNonce); err != nil {
		return nil, false, fmt.Errorf("seal: nonce: %w", err)
	}
	s.kek.Seal(out[1+nonceSize:1+nonceSize], wrapNonce, dataKey, ad)
	return out, true, nil
}

// openDataKey checks the format and unwraps the data key, with the current
// key-encryption key first; current tells which one opened it.
func (s *Sealer) openDataKey(companyID int64, purpose string, sealed []byte) (ad, dataKey []byte, current bool, err error) {
	switch sealed[0] {
	case Version1:
	default:
		return nil, nil, false, fmt.Errorf("%w: unknown format version %d", ErrOpen, sealed[0])
	}
	if len(sealed) < Overhead {
		return nil, nil, false, fmt.Errorf("%w: too short", ErrOpen)
	}
	ad = associatedData(Version1, companyID, purpose)
	wrapNonce := sealed[1 : 1+nonceSize]
	wrapped := sealed[1+nonceSize : 1+nonceSize+wrappedSize]
	if dataKey, err := s.kek.Open(nil, wrapNonce, wrapped, ad); err == nil {
		return ad, dataKey, true, nil
	}
	for _, kek := range s.previous {
		if dataKey, err := kek.Open(nil, wrapNonce, wrapped, ad); err == nil {
			return ad, dataKey, false, nil
		}
	}
	return nil, nil, false, ErrOpen
}

// openData decrypts the ciphertext of sealed with its unwrapped data key.
func openData(ad, dataKey, sealed []byte) ([]byte, error) {
	data, err := newGCM(dataKey)
	if err != nil {
		return nil, err
	}
	dataNonce := sealed[1+nonceSize+wrappedSize : headerSize]
	plain, err := data.Open(nil, dataNonce, sealed[headerSize:], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}

func associatedData(version byte, companyID int64, purpose string) []byte {
	const prefix = "facturad-seal"
	ad := make([]byte, 0, len(prefix)+1+8+len(purpose))
	ad = append(ad, prefix...)
	ad = append(ad, version)
	ad = binary.BigEndian.AppendUint64(ad, uint64(companyID))
	return append(ad, purpose...)
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return aead, nil
}
