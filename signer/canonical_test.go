package signer

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
)

// canonicalOf parses doc and returns goxmldsig's inclusive C14N 1.0 of its
// root element, the reference the scanner's claim is checked against.
func canonicalOf(t testing.TB, doc []byte) []byte {
	t.Helper()
	d := etree.NewDocument()
	if err := d.ReadFromBytes(doc); err != nil {
		t.Fatalf("parse: %v", err)
	}
	c, err := dsig.MakeC14N10RecCanonicalizer().Canonicalize(d.Root())
	if err != nil {
		t.Fatalf("canonicalize: %v", err)
	}
	return c
}

const canonNS = `https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/facturaElectronica`

func TestScanCanonical(t *testing.T) {
	t.Parallel()
	decl := `<?xml version="1.0" encoding="utf-8"?>`
	body := `<FacturaElectronica xmlns="` + canonNS + `"><Clave>506</Clave><Otros><OtroTexto codigo="a&amp;b&lt;c&quot;d e>f">x &amp; y &lt; z &gt; w&#xD;` + "\n\t" + `ñ€😀</OtroTexto><OtroTexto></OtroTexto></Otros></FacturaElectronica>`
	tests := []struct {
		name string
		doc  string
	}{
		{name: "ok/builder form", doc: decl + body},
		{name: "ok/no declaration", doc: body},
		{name: "ok/declaration variants", doc: `<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>` + "\n" + body + "\n"},
		{name: "ok/indented", doc: decl + "\n<a xmlns=\"urn:a\">\n  <b>1</b>\n  <c>\n    <d>2</d>\n  </c>\n</a>\n"},
		{name: "ok/namespaces and attributes on the root", doc: `<r xmlns="urn:d" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" xmlns:xsd="http://www.w3.org/2001/XMLSchema" a="1" b="2"><x a="1" b="" c="3"></x></r>`},
		{name: "ok/no namespace", doc: `<r><x>1</x></r>`},

		{name: "refused/comment", doc: decl + strings.Replace(body, "<Clave>", "<!-- c --><Clave>", 1)},
		{name: "refused/comment before the root", doc: decl + "<!-- c -->" + body},
		{name: "refused/processing instruction", doc: decl + strings.Replace(body, "<Clave>", "<?pi x?><Clave>", 1)},
		{name: "refused/processing instruction before the root", doc: decl + `<?xml-stylesheet href="a.xsl"?>` + body},
		{name: "refused/CDATA", doc: decl + strings.Replace(body, "<Clave>506", "<Clave><![CDATA[506]]>", 1)},
		{name: "refused/DOCTYPE", doc: decl + "<!DOCTYPE FacturaElectronica>" + body},
		{name: "refused/CR in text", doc: decl + strings.Replace(body, "506", "5\r06", 1)},
		{name: "refused/literal > in text", doc: decl + strings.Replace(body, "506", "5>06", 1)},
		{name: "refused/&quot; in text", doc: decl + strings.Replace(body, "506", "5&quot;06", 1)},
		{name: "refused/character reference in text", doc: decl + strings.Replace(body, "506", "5&#48;6", 1)},
		{name: "refused/&gt; in an attribute", doc: `<r><x a="1&gt;2"></x></r>`},
		{name: "refused/tab in an attribute", doc: "<r><x a=\"1\t2\"></x></r>"},
		{name: "refused/tab reference in an attribute", doc: `<r><x a="1&#x9;2"></x></r>`},
		{name: "refused/LF reference in an attribute", doc: `<r><x a="1&#xA;2"></x></r>`},
		{name: "refused/single-quoted attribute", doc: `<r><x a='1'></x></r>`},
		{name: "refused/attributes out of order", doc: `<r><x b="1" a="2"></x></r>`},
		{name: "refused/duplicate attribute", doc: `<r><x a="1" a="2"></x></r>`},
		{name: "refused/root attributes out of order", doc: `<r b="1" a="2"></r>`},
		{name: "refused/plain attribute before a namespace", doc: `<r a="1" xmlns="urn:a"></r>`},
		{name: "refused/prefixes out of order", doc: `<r xmlns:b="urn:b" xmlns:a="urn:a"></r>`},
		{name: "refused/default namespace after a prefix", doc: `<r xmlns:a="urn:a" xmlns="urn:d"></r>`},
		{name: "refused/empty default namespace", doc: `<r xmlns=""></r>`},
		{name: "refused/namespace on a child", doc: `<r xmlns="urn:a"><x xmlns="urn:a"></x></r>`},
		{name: "refused/prefixed child", doc: `<r xmlns:p="urn:p"><p:x></p:x></r>`},
		{name: "refused/prefixed attribute", doc: `<r xmlns:p="urn:p"><x p:a="1"></x></r>`},
		{name: "refused/xml:lang", doc: `<r xml:lang="es"><x></x></r>`},
		{name: "refused/self-closing tag", doc: `<r><x/></r>`},
		{name: "refused/space before >", doc: `<r><x ></x></r>`},
		{name: "refused/space in end tag", doc: `<r><x></x ></r>`},
		{name: "refused/two spaces before an attribute", doc: `<r><x  a="1"></x></r>`},
		{name: "refused/mismatched end tag", doc: `<r><x></y></r>`},
		{name: "refused/unclosed", doc: `<r><x></x>`},
		{name: "refused/text after the root", doc: `<r></r>x`},
		{name: "refused/element after the root", doc: `<r></r><s></s>`},
		{name: "refused/invalid UTF-8", doc: "<r>\xff</r>"},
		{name: "refused/control character", doc: "<r>\x01</r>"},
		{name: "refused/U+FFFE", doc: "<r>\uFFFE</r>"},
		{name: "refused/latin-1 declared", doc: `<?xml version="1.0" encoding="ISO-8859-1"?><r></r>`},
		{name: "refused/XML 1.1", doc: `<?xml version="1.1"?><r></r>`},
		{name: "refused/malformed declaration", doc: `<?xml version="1.0" x?><r></r>`},
		{name: "refused/empty", doc: ``},
		{name: "refused/not XML", doc: `hola`},
	}
	key, chain := fixture(t).Key, fixtureChain(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := []byte(tt.doc)
			r, ok := scanCanonical(doc)
			if want := strings.HasPrefix(tt.name, "ok/"); ok != want {
				t.Fatalf("scanCanonical = %v, want %v", ok, want)
			}
			if !ok {
				return
			}
			// The claim the fast path rests on.
			if got := canonicalOf(t, doc); !bytes.Equal(got, doc[r.start:r.end]) {
				t.Errorf("canonical form differs from the bytes:\n got %q\nwant %q", got, doc[r.start:r.end])
			}
			if !bytes.HasPrefix(doc[r.endTag:], []byte("</"+r.name+">")) {
				t.Errorf("end tag at %d: %q", r.endTag, doc[r.endTag:])
			}
			// And the signature is the full path's.
			fast, full := signBothWays(t, doc, key, chain)
			if !bytes.Equal(fast, full) {
				t.Error("the fast and the full path sign differently")
			}
		})
	}
}

// signBothWays signs doc with and without WithCanonicalInput (same clock,
// same id) and checks that the fast path was taken exactly when the
// scanner accepts doc.
func signBothWays(t testing.TB, doc []byte, key crypto.Signer, chain []*x509.Certificate) (fast, full []byte) {
	t.Helper()
	clock := WithClock(func() time.Time { return goldenTime })
	id := WithID("both-ways")
	var took bool
	fast, err := Sign(doc, key, chain, PolicyV44, clock, id, WithCanonicalInput(), withFastPathReport(&took))
	if err != nil {
		t.Fatalf("Sign with WithCanonicalInput: %v", err)
	}
	if want := IsCanonicalInput(doc); took != want {
		t.Errorf("fast path taken = %v, IsCanonicalInput = %v", took, want)
	}
	full, err = Sign(doc, key, chain, PolicyV44, clock, id, withFastPathReport(&took))
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if took {
		t.Error("fast path taken without WithCanonicalInput")
	}
	return fast, full
}

// TestCanonicalInputFallsBack signs well-formed documents the scanner
// refuses, several of them with a canonical form that differs from their
// bytes: WithCanonicalInput must give the full path's signature, which
// verifies.
func TestCanonicalInputFallsBack(t *testing.T) {
	t.Parallel()
	key, chain := fixture(t).Key, fixtureChain(t)
	for _, doc := range []string{
		`<r><x a='1'></x></r>`,
		`<r><x b="1" a="2"></x></r>`,
		`<r><x/></r>`,
		`<r><x a="1&gt;2">&quot;</x></r>`,
		`<r xmlns="urn:a"><x xmlns="urn:a"></x></r>`,
		`<r><!-- c --><x><![CDATA[<&>]]></x></r>`,
		"<r>\r\n<x >1</x ></r>",
	} {
		t.Run("ok/"+doc, func(t *testing.T) {
			if IsCanonicalInput([]byte(doc)) {
				t.Fatal("accepted as canonical")
			}
			fast, full := signBothWays(t, []byte(doc), key, chain)
			if !bytes.Equal(fast, full) {
				t.Error("WithCanonicalInput changed the signature of a refused document")
			}
			if _, err := Verify(fast); err != nil {
				t.Errorf("Verify: %v", err)
			}
		})
	}
}

// TestCanonicalInputGolden signs every golden input both ways: the
// signatures must be identical, and the documents the scanner accepts must
// be their own canonical form.
func TestCanonicalInputGolden(t *testing.T) {
	t.Parallel()
	key, chain := fixture(t).Key, fixtureChain(t)
	docs := map[string][]byte{"ten-line invoice": tenLineInvoice(t)}
	for _, in := range goldenInputs(t) {
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(in)] = b
	}
	accepted := 0
	for name, doc := range docs {
		fast, full := signBothWays(t, doc, key, chain)
		if !bytes.Equal(fast, full) {
			t.Errorf("%s: the fast and the full path sign differently", name)
		}
		if r, ok := scanCanonical(doc); ok {
			accepted++
			if !bytes.Equal(canonicalOf(t, doc), doc[r.start:r.end]) {
				t.Errorf("%s: accepted but not canonical", name)
			}
		}
	}
	if accepted == 0 {
		t.Error("no golden input took the fast path")
	}
	t.Logf("%d of %d inputs are canonical", accepted, len(docs))
}

// FuzzCanonicalInput checks the scanner's claim on arbitrary input:
// whatever it accepts parses, passes the full path's checks, and is byte
// for byte goxmldsig's inclusive C14N 1.0 of its root element.
func FuzzCanonicalInput(f *testing.F) {
	inputs, _ := filepath.Glob("testdata/golden/*.xml")
	for _, p := range inputs {
		if b, err := os.ReadFile(p); err == nil && !strings.HasSuffix(p, ".signed.xml") {
			f.Add(b)
		}
	}
	f.Add([]byte(`<?xml version="1.0" encoding="utf-8"?><r xmlns="urn:a" xmlns:p="urn:p" a="1"><x b="&amp;&lt;&quot;>">&amp;&lt;&gt;&#xD;` + "\n\tñ" + `</x></r>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, ok := scanCanonical(doc)
		if !ok {
			return
		}
		d := etree.NewDocument()
		if err := d.ReadFromBytes(doc); err != nil {
			t.Fatalf("accepted, but does not parse: %v", err)
		}
		if err := checkDocument(d); err != nil {
			t.Fatalf("accepted, but the full path refuses it: %v", err)
		}
		end, err := rootEndTag(doc, d.Root().FullTag())
		if err != nil || end != r.endTag {
			t.Fatalf("end tag at %d, the full path finds %d (%v)", r.endTag, end, err)
		}
		c, err := dsig.MakeC14N10RecCanonicalizer().Canonicalize(d.Root())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c, doc[r.start:r.end]) {
			t.Fatalf("accepted, but not canonical:\n got %q\nwant %q", doc[r.start:r.end], c)
		}
	})
}

// TestCacheSignCanonicalInput checks that the option reaches Sign through
// the per-company cache, as the pipeline passes it.
func TestCacheSignCanonicalInput(t *testing.T) {
	t.Parallel()
	p12, err := os.ReadFile(fixtureP12)
	if err != nil {
		t.Fatal(err)
	}
	src := newMemSource()
	src.put(1, p12, fixturePIN)
	c := newTestCache(t, src, 10)
	var took bool
	signed, err := c.Sign(t.Context(), 1, tenLineInvoice(t), WithCanonicalInput(), withFastPathReport(&took))
	if err != nil {
		t.Fatal(err)
	}
	if !took {
		t.Error("the canonical-input path was not taken")
	}
	if _, err := Verify(signed); err != nil {
		t.Errorf("Verify: %v", err)
	}
}
