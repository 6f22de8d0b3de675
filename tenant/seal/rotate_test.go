package seal_test

import (
	"bytes"
	"errors"
	"testing"

	"facturad/tenant/seal"
)

// TestRewrap moves values sealed under an old master key to a new one: the
// plain text is kept, only the wrap changes, the new value opens without
// the old key, and the associated data still binds it to its company and
// purpose.
func TestRewrap(t *testing.T) {
	oldS, oldKey := newSealer(t)
	_, newKey := newSealer(t)
	_, otherKey := newSealer(t)
	rotating, err := seal.NewWithPrevious(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	newOnly, err := seal.New(newKey)
	if err != nil {
		t.Fatal(err)
	}
	plain := bytes.Repeat([]byte("certificado "), 100)
	underOld, err := oldS.Seal(7, "certificate", plain)
	if err != nil {
		t.Fatal(err)
	}

	// Before: the rotating sealer opens it; the new key alone does not.
	if got, err := rotating.Open(7, "certificate", underOld); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("rotating Open of an old value: %v", err)
	}
	if _, err := newOnly.Open(7, "certificate", underOld); !errors.Is(err, seal.ErrOpen) {
		t.Fatalf("new key alone opened an old value: %v", err)
	}

	rewrapped, changed, err := rotating.Rewrap(7, "certificate", underOld)
	if err != nil || !changed {
		t.Fatalf("Rewrap = changed %v, %v", changed, err)
	}
	const wrapEnd = 1 + 12 + 48
	if !bytes.Equal(rewrapped[wrapEnd:], underOld[wrapEnd:]) {
		t.Error("Rewrap changed the data nonce or the ciphertext")
	}
	if bytes.Equal(rewrapped[1:wrapEnd], underOld[1:wrapEnd]) {
		t.Error("Rewrap kept the old wrap")
	}
	if got, err := newOnly.Open(7, "certificate", rewrapped); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("new key alone, after Rewrap: %v", err)
	}
	if _, err := oldS.Open(7, "certificate", rewrapped); !errors.Is(err, seal.ErrOpen) {
		t.Errorf("old key still opens the rewrapped value: %v", err)
	}

	// The binding to company and purpose holds after the rewrap.
	for _, tt := range []struct {
		name    string
		company int64
		purpose string
	}{
		{"error/other company", 8, "certificate"},
		{"error/other purpose", 7, "certificate-pin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := newOnly.Open(tt.company, tt.purpose, rewrapped); !errors.Is(err, seal.ErrOpen) {
				t.Errorf("Open = %v, want ErrOpen", err)
			}
			if _, _, err := rotating.Rewrap(tt.company, tt.purpose, underOld); !errors.Is(err, seal.ErrOpen) {
				t.Errorf("Rewrap = %v, want ErrOpen", err)
			}
		})
	}

	// Again: already under the new key, nothing to do.
	same, changed, err := rotating.Rewrap(7, "certificate", rewrapped)
	if err != nil || changed || !bytes.Equal(same, rewrapped) {
		t.Errorf("second Rewrap = changed %v, %v", changed, err)
	}
	// Empty stays empty.
	if out, changed, err := rotating.Rewrap(7, "certificate", nil); err != nil || changed || len(out) != 0 {
		t.Errorf("Rewrap(nil) = %x, %v, %v", out, changed, err)
	}
	// New values are sealed under the new key.
	fresh, err := rotating.Seal(7, "certificate-pin", []byte("1234"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := newOnly.Open(7, "certificate-pin", fresh); err != nil || string(got) != "1234" {
		t.Errorf("a value sealed while rotating does not open under the new key: %v", err)
	}

	t.Run("error/wrong old key", func(t *testing.T) {
		wrong, err := seal.NewWithPrevious(newKey, otherKey)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := wrong.Rewrap(7, "certificate", underOld); !errors.Is(err, seal.ErrOpen) {
			t.Errorf("Rewrap with the wrong previous key = %v, want ErrOpen", err)
		}
		if _, err := wrong.Open(7, "certificate", underOld); !errors.Is(err, seal.ErrOpen) {
			t.Errorf("Open with the wrong previous key = %v, want ErrOpen", err)
		}
	})
	t.Run("error/damaged ciphertext is not carried over", func(t *testing.T) {
		bad := bytes.Clone(underOld)
		bad[len(bad)-1] ^= 1
		if _, _, err := rotating.Rewrap(7, "certificate", bad); !errors.Is(err, seal.ErrOpen) {
			t.Errorf("Rewrap of a damaged value = %v, want ErrOpen", err)
		}
	})
	t.Run("error/previous equal to current", func(t *testing.T) {
		if _, err := seal.NewWithPrevious(newKey, newKey); err == nil {
			t.Error("NewWithPrevious accepted the current key as previous")
		}
	})
}
