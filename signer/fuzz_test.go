package signer

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzVerify feeds arbitrary bytes (seeded with the signed golden files) to
// Verify: it must never panic, and whatever it accepts must carry a
// certificate.
func FuzzVerify(f *testing.F) {
	signed, _ := filepath.Glob("testdata/golden/*.signed.xml")
	for _, p := range signed {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<a xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:Signature/></a>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := Verify(b)
		if err == nil && (res == nil || res.Certificate == nil) {
			t.Fatal("accepted without a certificate")
		}
	})
}

// FuzzLoadPKCS12 feeds arbitrary bytes (seeded with the fixture) to
// LoadPKCS12: it must never panic and never succeed without a key and a
// leaf.
func FuzzLoadPKCS12(f *testing.F) {
	p12, err := os.ReadFile(fixtureP12)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(p12, []byte(fixturePIN))
	f.Add(p12, []byte("0000"))
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x03}, []byte("1"))
	f.Fuzz(func(t *testing.T, b, pin []byte) {
		c, err := LoadPKCS12(b, pin)
		if err == nil && (c.Key == nil || c.Leaf == nil) {
			t.Fatal("loaded without key or leaf")
		}
	})
}
