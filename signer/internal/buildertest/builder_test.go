package buildertest

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/sample"
	"facturad/hacienda/xmlcheck"
	"facturad/signer"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
)

const (
	goldenDir = "../../../hacienda/testdata/golden"
	xsdDir    = "../../../hacienda/testdata/xsd/2024/v4.4"
	p12Path   = "../../testdata/fixture.p12"
	caPath    = "../../testdata/fixture-ca.pem"
)

func run(t *testing.T, name string, args ...string) error {
	t.Helper()
	out, err := exec.Command(xmlcheck.Tool(t, name), args...).CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)))
	}
	if name == "xmlsec1" && !strings.Contains(string(out), "SignedInfo References (ok/all): 3/3") {
		return errors.New("xmlsec1 did not check 3 references: " + string(out))
	}
	return nil
}

// TestSignBuiltDocuments signs one document of every type as the builder
// writes it (the builder's pinned example of each type, parsed and built
// again by hacienda.MarshalXML) and checks the result with Verify, xmlsec1
// and the type's official schema.
func TestSignBuiltDocuments(t *testing.T) {
	p12, err := os.ReadFile(p12Path)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := signer.LoadPKCS12(p12, []byte("1234"))
	if err != nil {
		t.Fatal(err)
	}
	chain := append([]*x509.Certificate{cert.Leaf}, cert.Chain...)
	at := time.Date(2025, 9, 15, 10, 30, 0, 0, hacienda.CostaRica)

	for _, typ := range hacienda.DocumentTypes {
		t.Run("ok/"+typ.Abbrev(), func(t *testing.T) {
			t.Parallel()
			example, err := os.ReadFile(filepath.Join(goldenDir, typ.Abbrev()+".xml"))
			if err != nil {
				t.Fatal(err)
			}
			model, err := hacienda.ParseXML(example)
			if err != nil {
				t.Fatal(err)
			}
			if model.Type != typ {
				t.Fatalf("example is of type %v", model.Type)
			}
			built, err := hacienda.MarshalXML(model)
			if err != nil {
				t.Fatal(err)
			}
			// The pipeline signs builder output with WithCanonicalInput: the
			// builder's bytes must take the fast path, and the signature must
			// be the one the full parse-and-canonicalize path makes.
			if !signer.IsCanonicalInput(built) {
				t.Fatal("the builder's output is not accepted as canonical input")
			}
			clock, id := signer.WithClock(func() time.Time { return at }), signer.WithID("built-"+typ.Abbrev())
			signed, err := signer.Sign(built, cert.Key, chain, signer.PolicyV44, clock, id, signer.WithCanonicalInput())
			if err != nil {
				t.Fatal(err)
			}
			full, err := signer.Sign(built, cert.Key, chain, signer.PolicyV44, clock, id)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(signed, full) {
				t.Error("WithCanonicalInput changed the signature")
			}
			if _, err := signer.Verify(signed); err != nil {
				t.Errorf("Verify: %v", err)
			}
			f := filepath.Join(t.TempDir(), typ.Abbrev()+".xml")
			if err := os.WriteFile(f, signed, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := run(t, "xmlsec1", "--verify", "--id-attr:Id", signer.NamespaceXAdES+":SignedProperties",
				"--enabled-key-data", "x509", "--trusted-pem", caPath, f); err != nil {
				t.Errorf("xmlsec1: %v", err)
			}
			schema := filepath.Join(xsdDir, typ.RootElement()+"_V4.4.xsd")
			if err := run(t, "xmllint", "--noout", "--nonet", "--schema", schema, f); err != nil {
				t.Errorf("xmllint: %v", err)
			}
		})
	}
}

// TestSignGeneratedDocuments signs 40 generated documents of every type
// (sample.Documents, built by hacienda.MarshalXML) the way the
// pipeline does, with WithCanonicalInput, and checks that each one is
// accepted as canonical input, that goxmldsig's inclusive C14N 1.0 of its
// root is its own bytes, that the signature equals the full path's, and
// that Verify, xmlsec1 and the type's schema accept the signed document.
func TestSignGeneratedDocuments(t *testing.T) {
	const perType = 40
	p12, err := os.ReadFile(p12Path)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := signer.LoadPKCS12(p12, []byte("1234"))
	if err != nil {
		t.Fatal(err)
	}
	chain := append([]*x509.Certificate{cert.Leaf}, cert.Chain...)
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, hacienda.CostaRica)
	clock := signer.WithClock(func() time.Time { return at })
	dir := t.TempDir()
	files := map[hacienda.DocumentType][]string{}
	for i, d := range sample.Documents(7, perType*len(hacienda.DocumentTypes)) {
		name := fmt.Sprintf("%03d-%s", i, d.Type.Abbrev())
		built, err := hacienda.MarshalXML(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !signer.IsCanonicalInput(built) {
			t.Errorf("%s: not accepted as canonical input", name)
			continue
		}
		root := built[bytes.Index(built, []byte("?>"))+2:] // the bytes after the XML declaration
		if c := c14n10(t, built); !bytes.Equal(c, root) {
			t.Errorf("%s: the canonical form differs from the builder's bytes", name)
			continue
		}
		id := signer.WithID("gen-" + name)
		signed, err := signer.Sign(built, cert.Key, chain, signer.PolicyV44, clock, id, signer.WithCanonicalInput())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		full, err := signer.Sign(built, cert.Key, chain, signer.PolicyV44, clock, id)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(signed, full) {
			t.Errorf("%s: WithCanonicalInput changed the signature", name)
		}
		if _, err := signer.Verify(signed); err != nil {
			t.Errorf("%s: Verify: %v", name, err)
		}
		f := filepath.Join(dir, name+".xml")
		if err := os.WriteFile(f, signed, 0o600); err != nil {
			t.Fatal(err)
		}
		files[d.Type] = append(files[d.Type], f)
	}
	for _, typ := range hacienda.DocumentTypes {
		if len(files[typ]) != perType {
			t.Errorf("%s: %d documents signed", typ.Abbrev(), len(files[typ]))
			continue
		}
		schema := filepath.Join(xsdDir, typ.RootElement()+"_V4.4.xsd")
		if err := run(t, "xmllint", append([]string{"--noout", "--nonet", "--schema", schema}, files[typ]...)...); err != nil {
			t.Errorf("xmllint %s: %v", typ.Abbrev(), err)
		}
		for _, f := range files[typ] {
			if err := run(t, "xmlsec1", "--verify", "--id-attr:Id", signer.NamespaceXAdES+":SignedProperties",
				"--enabled-key-data", "x509", "--trusted-pem", caPath, f); err != nil {
				t.Errorf("xmlsec1 %s: %v", filepath.Base(f), err)
			}
		}
	}
}

// c14n10 returns goxmldsig's inclusive C14N 1.0 of doc's root element.
func c14n10(t *testing.T, doc []byte) []byte {
	t.Helper()
	d := etree.NewDocument()
	if err := d.ReadFromBytes(doc); err != nil {
		t.Fatal(err)
	}
	c, err := dsig.MakeC14N10RecCanonicalizer().Canonicalize(d.Root())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
