package signer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
)

// goldenInputs lists the unsigned test documents: every
// testdata/golden/<name>.xml except the signed outputs.
func goldenInputs(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob("testdata/golden/*.xml")
	if err != nil {
		t.Fatal(err)
	}
	var in []string
	for _, p := range all {
		if !strings.HasSuffix(p, ".signed.xml") {
			in = append(in, p)
		}
	}
	if len(in) == 0 {
		t.Fatal("no golden inputs")
	}
	return in
}

// TestGolden signs every test document with the fixture certificate, a
// fixed clock and fixed ids, and pins the exact signed bytes. Each signed
// document must also pass Verify, xmlsec1 and (for the v4.4 documents) its
// official XSD. Run with -update to rewrite the .signed.xml files.
func TestGolden(t *testing.T) {
	chain := fixtureChain(t)
	key := fixture(t).Key
	for _, in := range goldenInputs(t) {
		name := strings.TrimSuffix(filepath.Base(in), ".xml")
		t.Run("ok/"+name, func(t *testing.T) {
			t.Parallel()
			doc, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			signed, err := Sign(doc, key, chain, PolicyV44,
				WithClock(func() time.Time { return goldenTime }),
				WithID("golden-"+name))
			if err != nil {
				t.Fatal(err)
			}
			goldenPath := strings.TrimSuffix(in, ".xml") + ".signed.xml"
			if *update {
				if err := os.WriteFile(goldenPath, signed, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(goldenPath)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(signed, want) {
				t.Errorf("signed bytes differ from %s (run with -update if the change is intended)", goldenPath)
			}

			// The original bytes are kept: the output is the input with the
			// signature inserted before the root's end tag.
			end := bytes.LastIndex(doc, []byte("</"))
			if !bytes.HasPrefix(signed, doc[:end]) || !bytes.HasSuffix(signed, doc[end:]) {
				t.Error("the document bytes around the signature changed")
			}

			res, err := Verify(signed)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !res.Certificate.Equal(chain[0]) || !res.SigningTime.Equal(goldenTime) || res.SignatureID != "Signature-golden-"+name {
				t.Errorf("VerifyResult = %+v", res)
			}
			if err := xmlsecVerify(t, signed, fixtureCAPEM); err != nil {
				t.Errorf("xmlsec1: %v", err)
			}
			if !strings.HasPrefix(name, "extra-") {
				if err := xsdValidate(t, signed); err != nil {
					t.Errorf("XSD: %v", err)
				}
			}
		})
	}
}

// TestWholeDocumentC14N11Equals10 guards the shortcut Sign takes: it
// digests the whole document with goxmldsig's C14N 1.1 canonicalizer
// while declaring C14N 1.0, which is only right as long as both give the
// same bytes for an element without element ancestors.
func TestWholeDocumentC14N11Equals10(t *testing.T) {
	t.Parallel()
	for _, in := range goldenInputs(t) {
		doc, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		d := etree.NewDocument()
		if err := d.ReadFromBytes(doc); err != nil {
			t.Fatal(err)
		}
		c10, err := dsig.MakeC14N10RecCanonicalizer().Canonicalize(d.Root())
		if err != nil {
			t.Fatal(err)
		}
		c11, err := dsig.MakeC14N11Canonicalizer().Canonicalize(d.Root())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c10, c11) {
			t.Errorf("%s: C14N 1.0 and 1.1 differ for the whole document", in)
		}
	}
}
