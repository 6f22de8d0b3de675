package signer

import (
	"bytes"
	"errors"
	"testing"

	"facturad/signer/certmint"
)

// The iteration counts of a PKCS#12 file are read from its structure and
// an absurd one is refused before any key is derived.
func TestIterationCap(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		m, err := certmint.MintCertificate(certmint.Options{
			TipoIdentificacion: "02", Identificacion: "3101123456", Name: "EMPRESA", PIN: "1234",
			Key: certmint.TestKey(0), Legacy: legacy, Iterations: 65536,
		})
		if err != nil {
			t.Fatal(err)
		}
		w := iterWalk{budget: 20_000}
		w.walk(m.P12, 0)
		if w.max != 65536 {
			t.Errorf("legacy %v: read %d iterations, want 65536", legacy, w.max)
		}
		if _, err := LoadPKCS12(m.P12, []byte("1234")); err != nil {
			t.Errorf("legacy %v: a file under the cap: %v", legacy, err)
		}

		// The same file declaring 8,388,607 iterations (2^23 - 1; the
		// three-byte INTEGER 65536 rewritten in place): refused as too
		// costly, not as a wrong PIN the decoder would find after deriving.
		costly := bytes.ReplaceAll(m.P12, []byte{0x02, 0x03, 0x01, 0x00, 0x00}, []byte{0x02, 0x03, 0x7f, 0xff, 0xff})
		if bytes.Equal(costly, m.P12) {
			t.Fatal("no iteration count found to rewrite")
		}
		_, err = LoadPKCS12(costly, []byte("1234"))
		if !errors.Is(err, ErrTooCostly) {
			t.Errorf("legacy %v: err = %v, want ErrTooCostly", legacy, err)
		}
	}
	// Counts too long for 64 bits, and negative ones.
	var w iterWalk
	w.count([]byte{0x01, 0, 0, 0, 0, 0, 0, 0, 0})
	if w.max != ^uint64(0) {
		t.Errorf("a 9-byte count read as %d", w.max)
	}
	w = iterWalk{}
	w.count([]byte{0xff})
	if w.max != 0 {
		t.Errorf("a negative count read as %d", w.max)
	}
}

// FuzzCheckIterations: the walk never panics and stays within its budget,
// whatever the bytes.
func FuzzCheckIterations(f *testing.F) {
	m, err := certmint.MintCertificate(certmint.Options{TipoIdentificacion: "02", Identificacion: "3101123456", Name: "EMPRESA", PIN: "1234", Key: certmint.TestKey(0)})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(m.P12)
	f.Add([]byte{0x30, 0x03, 0x04, 0x00, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		w := iterWalk{budget: 20_000}
		w.walk(b, 0)
		if w.budget < 0 {
			t.Fatalf("budget went negative: %d", w.budget)
		}
	})
}
