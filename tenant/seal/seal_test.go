package seal_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"facturad/tenant/seal"
)

func newSealer(t *testing.T) (*seal.Sealer, []byte) {
	t.Helper()
	k := make([]byte, seal.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	s, err := seal.New(k)
	if err != nil {
		t.Fatal(err)
	}
	return s, k
}

func TestSealRoundTrip(t *testing.T) {
	s, _ := newSealer(t)
	for _, n := range []int{1, 4, 100, 5000} {
		plain := bytes.Repeat([]byte{0xA5}, n)
		sealed, err := s.Seal(42, "certificate", plain)
		if err != nil {
			t.Fatal(err)
		}
		if len(sealed) != n+seal.Overhead {
			t.Errorf("len(sealed) = %d, want %d", len(sealed), n+seal.Overhead)
		}
		if sealed[0] != seal.Version1 {
			t.Errorf("version byte = %d", sealed[0])
		}
		// A short plain text can turn up in random bytes by chance (one
		// byte does in about a third of the sealed values); from 16 bytes
		// on, finding it means it was not encrypted.
		if n >= 16 && bytes.Contains(sealed, plain) {
			t.Error("sealed value contains the plain text")
		}
		got, err := s.Open(42, "certificate", sealed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, plain) {
			t.Fatalf("round trip of %d bytes changed the value", n)
		}
	}
}

func TestSealFreshKeyAndNonceEachTime(t *testing.T) {
	s, _ := newSealer(t)
	a, _ := s.Seal(1, "pin", []byte("1234"))
	b, _ := s.Seal(1, "pin", []byte("1234"))
	if bytes.Equal(a, b) {
		t.Fatal("two seals of one value are equal")
	}
	// The wrapped data keys differ too (fresh data key per secret).
	if bytes.Equal(a[13:61], b[13:61]) {
		t.Fatal("two seals share a wrapped data key")
	}
}

func TestSealEmpty(t *testing.T) {
	s, _ := newSealer(t)
	sealed, err := s.Seal(1, "pin", nil)
	if err != nil || len(sealed) != 0 {
		t.Fatalf("Seal(nil) = %x, %v", sealed, err)
	}
	plain, err := s.Open(1, "pin", nil)
	if err != nil || plain != nil {
		t.Fatalf("Open(nil) = %x, %v", plain, err)
	}
}

func TestOpenRefuses(t *testing.T) {
	s, _ := newSealer(t)
	other, _ := newSealer(t)
	sealed, err := s.Seal(7, "certificate-pin", []byte("5678"))
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		c := bytes.Clone(sealed)
		c[i] ^= 0x01
		return c
	}
	tests := []struct {
		name    string
		sealer  *seal.Sealer
		company int64
		purpose string
		value   []byte
	}{
		{"error/other company", s, 8, "certificate-pin", sealed},
		{"error/other purpose", s, 7, "certificate", sealed},
		{"error/other master key", other, 7, "certificate-pin", sealed},
		{"error/flipped wrap nonce", s, 7, "certificate-pin", flip(1)},
		{"error/flipped wrapped key", s, 7, "certificate-pin", flip(20)},
		{"error/flipped data nonce", s, 7, "certificate-pin", flip(62)},
		{"error/flipped ciphertext", s, 7, "certificate-pin", flip(len(sealed) - 17)},
		{"error/flipped tag", s, 7, "certificate-pin", flip(len(sealed) - 1)},
		{"error/unknown version", s, 7, "certificate-pin", flip(0)},
		{"error/truncated", s, 7, "certificate-pin", sealed[:len(sealed)-1]},
		{"error/header only", s, 7, "certificate-pin", sealed[:seal.Overhead-1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain, err := tt.sealer.Open(tt.company, tt.purpose, tt.value)
			if !errors.Is(err, seal.ErrOpen) {
				t.Fatalf("Open = %q, %v; want ErrOpen", plain, err)
			}
		})
	}
	if _, err := s.Open(7, "certificate-pin", sealed); err != nil {
		t.Fatalf("the untouched value no longer opens: %v", err)
	}
}

func TestNewRejectsBadKey(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33, 64} {
		if _, err := seal.New(make([]byte, n)); err == nil {
			t.Errorf("New with a %d-byte key succeeded", n)
		}
	}
	if _, err := seal.New(make([]byte, 32)); err != nil {
		t.Fatal(err)
	}
}

func TestDeriveKey(t *testing.T) {
	_, k := newSealer(t)
	a, err := seal.DeriveKey(k, "a")
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := seal.DeriveKey(k, "a")
	b, _ := seal.DeriveKey(k, "b")
	if len(a) != 32 || !bytes.Equal(a, a2) || bytes.Equal(a, b) || bytes.Equal(a, k) {
		t.Fatal("derived keys are not stable, distinct and different from the master key")
	}
}

func TestLoadOrCreateMasterKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	k1, err := seal.LoadOrCreateMasterKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != 32 {
		t.Fatalf("key has %d bytes", len(k1))
	}
	path := filepath.Join(dir, seal.MasterKeyFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %#o, want 0600", fi.Mode().Perm())
	}
	k2, err := seal.LoadOrCreateMasterKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k1, k2) {
		t.Fatal("second load returned another key")
	}
}

func TestLoadOrCreateMasterKeyRefuses(t *testing.T) {
	tests := []struct {
		name    string
		content []byte
		mode    os.FileMode
		want    string
	}{
		{"error/group readable", make([]byte, 32), 0o640, "mode"},
		{"error/world readable", make([]byte, 32), 0o604, "mode"},
		{"error/too short", make([]byte, 31), 0o600, "holds 31 bytes"},
		{"error/too long", make([]byte, 44), 0o600, "holds 44 bytes"},
		{"error/empty", nil, 0o600, "holds 0 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, seal.MasterKeyFile)
			if err := os.WriteFile(path, tt.content, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			_, err := seal.LoadOrCreateMasterKey(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
			// The refused file is left alone.
			got, _ := os.ReadFile(path)
			if !bytes.Equal(got, tt.content) {
				t.Fatal("the refused key file was changed")
			}
		})
	}
	t.Run("error/directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, seal.MasterKeyFile), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := seal.LoadOrCreateMasterKey(dir); err == nil {
			t.Fatal("a directory was accepted as the key file")
		}
	})
}

func TestParseMasterKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xFB}, 32)
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"ok/std", base64.StdEncoding.EncodeToString(raw), true},
		{"ok/raw std", base64.RawStdEncoding.EncodeToString(raw), true},
		{"ok/url", base64.URLEncoding.EncodeToString(raw), true},
		{"ok/raw url with spaces", " " + base64.RawURLEncoding.EncodeToString(raw) + "\n", true},
		{"error/empty", "", false},
		{"error/short", base64.StdEncoding.EncodeToString(raw[:16]), false},
		{"error/not base64", "not base64 at all!", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := seal.ParseMasterKey(tt.in)
			if tt.ok {
				if err != nil || !bytes.Equal(k, raw) {
					t.Fatalf("ParseMasterKey = %x, %v", k, err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), tt.in) && tt.in != "" {
				t.Fatal("the error repeats the key")
			}
		})
	}
}

func BenchmarkSeal(b *testing.B) {
	k := make([]byte, 32)
	s, _ := seal.New(k)
	p12 := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		sealed, _ := s.Seal(1, "certificate", p12)
		if _, err := s.Open(1, "certificate", sealed); err != nil {
			b.Fatal(err)
		}
	}
}
