package seal_test

import (
	"bytes"
	"testing"

	"facturad/tenant/seal"
)

// FuzzOpen: Open never panics and never accepts anything but what Seal made
// for the same company and purpose.
func FuzzOpen(f *testing.F) {
	s, err := seal.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		f.Fatal(err)
	}
	good, _ := s.Seal(1, "pin", []byte("1234"))
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte{seal.Version1})
	f.Add(make([]byte, seal.Overhead))
	f.Fuzz(func(t *testing.T, in []byte) {
		plain, err := s.Open(1, "pin", in)
		// Only a value sealed with this key (here: the seed, "1234") can
		// open; the fuzzer cannot forge a GCM tag. (The seed is sealed again
		// in each fuzzing process, so compare the plain text, not bytes.)
		if err == nil && len(in) > 0 && string(plain) != "1234" {
			t.Fatalf("forged value opened to %q", plain)
		}
	})
}
