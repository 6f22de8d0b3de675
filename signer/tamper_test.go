package signer

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"facturad/signer/certmint"
)

func signedExample(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile("testdata/golden/FE-ejemplo1.xml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Sign(doc, fixture(t).Key, fixtureChain(t), PolicyV44, WithClock(func() time.Time { return goldenTime }))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// replaceOnce replaces the first occurrence of old after the marker, and
// fails the test if there is none.
func replaceOnce(t *testing.T, b []byte, after, old, new string) []byte {
	t.Helper()
	start := bytes.Index(b, []byte(after))
	if start < 0 {
		t.Fatalf("marker %q not found", after)
	}
	i := bytes.Index(b[start:], []byte(old))
	if i < 0 {
		t.Fatalf("%q not found after %q", old, after)
	}
	i += start
	out := append([]byte{}, b[:i]...)
	out = append(out, new...)
	return append(out, b[i+len(old):]...)
}

// TestTampering changes signed documents in the ways an attacker or a
// careless re-serialiser would; each change must fail both Verify and
// xmlsec1.
func TestTampering(t *testing.T) {
	signed := signedExample(t)
	if _, err := Verify(signed); err != nil {
		t.Fatalf("untouched document: %v", err)
	}
	if err := xmlsecVerify(t, signed, fixtureCAPEM); err != nil {
		t.Fatalf("untouched document, xmlsec1: %v", err)
	}

	other, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02", Identificacion: "3101999999", Name: "OTRA EMPRESA", PIN: "1",
		Key: certmint.TestKey(5), NotBefore: goldenTime.AddDate(-1, 0, 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	leafB64 := base64.StdEncoding.EncodeToString(fixture(t).Leaf.Raw)
	otherB64 := base64.StdEncoding.EncodeToString(other.Leaf.Raw)

	tests := []struct {
		name   string
		tamper func([]byte) []byte
	}{
		{"error/one byte of the document content", func(b []byte) []byte {
			return replaceOnce(t, b, "<Emisor>", "EMPRESA DE EJEMPLO", "EMPRESA DE EJEMPLA")
		}},
		{"error/one byte of an amount", func(b []byte) []byte {
			return replaceOnce(t, b, "<TotalComprobante>", "38015", "38016")
		}},
		{"error/one byte of SignedProperties", func(b []byte) []byte {
			return replaceOnce(t, b, "<xades:SigningTime>", "10:30:00", "10:31:00")
		}},
		{"error/one byte of the signed policy", func(b []byte) []byte {
			return replaceOnce(t, b, "<xades:SigPolicyHash>", "DWxin1x", "DWxin1y")
		}},
		{"error/swapped certificate", func(b []byte) []byte {
			return bytes.Replace(b, []byte(leafB64), []byte(otherB64), 1)
		}},
		{"error/one byte of the signature value", func(b []byte) []byte {
			i := bytes.Index(b, []byte("<ds:SignatureValue"))
			j := bytes.Index(b[i:], []byte(">")) + i + 5
			c := append([]byte{}, b...)
			if c[j] == 'A' {
				c[j] = 'B'
			} else {
				c[j] = 'A'
			}
			return c
		}},
		{"error/re-indented document", func(b []byte) []byte {
			return bytes.Replace(b, []byte("\n<Emisor>"), []byte("\n  <Emisor>"), 1)
		}},
		{"error/line added after the root start tag", func(b []byte) []byte {
			return replaceOnce(t, b, "<Clave>", "<Clave>", "\n<Clave>")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := tt.tamper(signed)
			if bytes.Equal(bad, signed) {
				t.Fatal("tamper changed nothing")
			}
			if _, err := Verify(bad); err == nil {
				t.Error("Verify accepted the tampered document")
			} else if !errors.Is(err, ErrInvalidSignature) {
				t.Errorf("Verify error %v does not wrap ErrInvalidSignature", err)
			}
			if err := xmlsecVerify(t, bad, fixtureCAPEM); err == nil {
				t.Error("xmlsec1 accepted the tampered document")
			}
		})
	}
}

// TestVerifyRefuses covers signatures that are intact but not acceptable.
func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("testdata/golden/FE-ejemplo1.xml")
	if err != nil {
		t.Fatal(err)
	}
	key, chain := fixture(t).Key, fixtureChain(t)
	at := func(tm time.Time) Option { return WithClock(func() time.Time { return tm }) }

	otherPolicy := PolicyV44
	otherPolicy.Identifier = "https://example.com/another-policy.pdf"
	withOtherPolicy, err := Sign(doc, key, chain, otherPolicy, at(goldenTime))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(withOtherPolicy); !errors.Is(err, ErrPolicyMismatch) {
		t.Errorf("other policy: err = %v, want ErrPolicyMismatch", err)
	}
	if _, err := VerifyWith(withOtherPolicy, VerifyOptions{Policy: otherPolicy}); err != nil {
		t.Errorf("other policy, expected explicitly: %v", err)
	}

	good, err := Sign(doc, key, chain, PolicyV44, at(goldenTime))
	if err != nil {
		t.Fatal(err)
	}
	// The Id of SignedProperties used twice (an XML wrapping attempt).
	i := bytes.Index(good, []byte("<xades:SignedProperties "))
	idStart := bytes.Index(good[i:], []byte(`Id="`)) + i + 4
	idEnd := bytes.IndexByte(good[idStart:], '"') + idStart
	// It goes into an extra ds:Object, which no reference covers.
	dup := replaceOnce(t, good, "</ds:KeyInfo>", "</ds:KeyInfo>", `</ds:KeyInfo><ds:Object><Copia Id="`+string(good[idStart:idEnd])+`"/></ds:Object>`)
	if _, err := Verify(dup); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("duplicate Id: err = %v", err)
	}

	if _, err := Verify(doc); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("unsigned: err = %v", err)
	}
	if _, err := Verify([]byte("not xml at all")); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("not XML: err = %v", err)
	}

	// Trust: the fixture chains to its CA, not to another one.
	caPEM, err := os.ReadFile(fixtureCAPEM)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509CertPool(t, caPEM)
	if _, err := VerifyWith(good, VerifyOptions{Roots: roots}); err != nil {
		t.Errorf("trusted root: %v", err)
	}
	otherCA, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(6)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyWith(good, VerifyOptions{Roots: x509CertPool(t, otherCA.CertPEM())}); err == nil {
		t.Error("untrusted root accepted")
	}
}
