package signer

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
)

// c14nCases are documents that exercise the canonical form's rules beside
// the signed documents of testdata/golden.
var c14nCases = map[string]string{
	"namespaces redeclared and undone": `<a xmlns="urn:a" xmlns:p="urn:p"><b xmlns:p="urn:p"><c xmlns:p="urn:q" p:x="1"/></b>` +
		`<d xmlns=""><e xmlns="urn:e"/></d><f xmlns="urn:a"/></a>`,
	"attribute order":                    `<r xmlns:z="urn:a" xmlns:a="urn:z"><e b="1" z:b="3" a="4" z:a="5"/><f a:c="1" a:b="2" c="3"/></r>`,
	"escapes in text and attributes":     "<r a=\"&amp;&lt;&gt;&quot;'&#9;&#10;&#13;x\">&amp;&lt;&gt;\"'&#13;\t\n<![CDATA[<&>]]></r>",
	"comments dropped, white space kept": "<r>\n  <!-- a comment -->\n  <e>  x  </e>\n</r>",
	"empty elements written in full":     `<r><e/><f a="1"/></r>`,
	"prefixed root with default below":   `<p:r xmlns:p="urn:p" xmlns:q="urn:q"><e xmlns="urn:d"><q:f/></e></p:r>`,
	"xml attributes on the apex only":    `<r><e xml:lang="es"/></r>`,
	"non-ASCII":                          `<r a="ñandú">Ñ €𝄞</r>`,
}

// TestWriteC14NMatchesGoxmldsig: on every element of every test document,
// the direct canonicalizer writes what goxmldsig's inclusive C14N 1.0 and
// exclusive C14N write; and with a signature left out, what goxmldsig
// writes for the document without it.
func TestWriteC14NMatchesGoxmldsig(t *testing.T) {
	docs := goldenDocs(t, c14nCases)
	elements := 0
	for name, doc := range docs {
		d := etree.NewDocument()
		if err := d.ReadFromBytes(doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var walk func(el *etree.Element)
		walk = func(el *etree.Element) {
			elements++
			compareC14N(t, name, el, nil)
			compareExcC14N(t, name, el, nil)
			for _, c := range el.ChildElements() {
				walk(c)
			}
		}
		walk(d.Root())
		for _, sig := range d.FindElements("//Signature") {
			compareC14N(t, name, d.Root(), sig)
			compareExcC14N(t, name, d.Root(), sig)
		}
	}
	if elements < 500 {
		t.Errorf("compared %d elements; the test documents should give several hundred", elements)
	}
}

func compareC14N(t *testing.T, name string, el, skip *etree.Element) {
	t.Helper()
	compareWriter(t, name, "inclusive", writeC14N, func(el *etree.Element) ([]byte, error) {
		return dsig.MakeC14N10RecCanonicalizer().Canonicalize(el)
	}, el, skip)
}

// compareExcC14N is compareC14N for the exclusive canonicalization.
func compareExcC14N(t *testing.T, name string, el, skip *etree.Element) {
	t.Helper()
	if undoesDefault(el) {
		// goxmldsig writes xmlns="" where no output ancestor rendered a
		// default namespace; exclusive C14N does not (its section 3, and
		// libxml2: TestExcC14NEmptyDefault).
		return
	}
	compareWriter(t, name, "exclusive", writeExcC14N, func(el *etree.Element) ([]byte, error) {
		detached, err := detachedCopy(el)
		if err != nil {
			return nil, err
		}
		return dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("").Canonicalize(detached)
	}, el, skip)
}

// compareWriter checks that write, the direct writer, writes for el (less
// skip) what goxmldsig's canonicalizer want writes for it with skip taken
// out, or refuses it whole with nothing written.
func compareWriter(t *testing.T, name, kind string, write func(*bytes.Buffer, *etree.Element, *etree.Element) error,
	want func(*etree.Element) ([]byte, error), el, skip *etree.Element) {
	t.Helper()
	var got bytes.Buffer
	got.WriteString("kept")
	err := write(&got, el, skip)
	if errors.Is(err, errC14NUnsupported) {
		if got.String() != "kept" {
			t.Errorf("%s <%s> %s: unsupported, yet wrote %q", name, el.FullTag(), kind, got.String())
		}
		return
	}
	if err != nil {
		t.Fatalf("%s <%s> %s: %v", name, el.FullTag(), kind, err)
	}
	restore := detach(skip)
	w, err := want(el)
	restore()
	if err != nil {
		t.Fatalf("%s <%s> %s: goxmldsig: %v", name, el.FullTag(), kind, err)
	}
	if g := got.Bytes()[len("kept"):]; !bytes.Equal(g, w) {
		t.Errorf("%s <%s> %s (skipping %v):\n got %s\nwant %s", name, el.FullTag(), kind, skip != nil, g, w)
	}
}

// undoesDefault reports whether an element of el's subtree declares
// xmlns="".
func undoesDefault(el *etree.Element) bool {
	for _, a := range el.Attr {
		if a.Space == "" && a.Key == "xmlns" && a.Value == "" {
			return true
		}
	}
	for _, c := range el.ChildElements() {
		if undoesDefault(c) {
			return true
		}
	}
	return false
}

// TestExcC14NEmptyDefault: an element in no namespace whose output
// ancestors rendered no default namespace gets no xmlns="", as xmllint
// --exc-c14n (libxml2) writes it.
func TestExcC14NEmptyDefault(t *testing.T) {
	d := etree.NewDocument()
	if err := d.ReadFromString(`<p:D xmlns:p="urn:p"><L xmlns="urn:d">x</L><p:O><s xmlns=""/></p:O><M xmlns="urn:d"><s xmlns=""/></M></p:D>`); err != nil {
		t.Fatal(err)
	}
	got, err := directC14N(d.Root(), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	const want = `<p:D xmlns:p="urn:p"><L xmlns="urn:d">x</L><p:O><s></s></p:O><M xmlns="urn:d"><s xmlns=""></s></M></p:D>`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestWriteC14NRefuses: what the direct canonicalizer leaves to goxmldsig
// is refused whole, with nothing written.
func TestWriteC14NRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"processing instruction":       `<r><?pi data?></r>`,
		"xml attribute above":          `<r xml:lang="es"><e/></r>`,
		"undeclared prefix":            `<r><p:e/></r>`,
		"undeclared attribute":         `<r><e p:a="1"/></r>`,
		"apex declares again":          `<r xmlns:p="urn:p"><e xmlns:p="urn:q"/></r>`,
		"default undone above":         `<r xmlns="urn:a"><d xmlns=""><e/></d></r>`,
		"attributes of two namespaces": `<r xmlns:z="urn:a" xmlns:a="urn:z"><e a:b="2" z:b="3"/></r>`,
		"xml prefix declared":          `<r xmlns:xml="http://www.w3.org/XML/1998/namespace"><e/></r>`,
		"xmlns prefix declared":        `<r xmlns:xmlns="urn:x"><e xmlns="urn:d"/></r>`,
	} {
		d := etree.NewDocument()
		if err := d.ReadFromString(doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		el := d.Root()
		for len(el.ChildElements()) > 0 && !strings.HasPrefix(name, "undeclared") && name != "attributes of two namespaces" {
			el = el.ChildElements()[0]
		}
		var out bytes.Buffer
		if err := writeC14N(&out, el, nil); !errors.Is(err, errC14NUnsupported) || out.Len() != 0 {
			t.Errorf("%s: err %v, wrote %q; want errC14NUnsupported and nothing", name, err, out.String())
		}
	}
}

// TestWriteC14NRefusesCharactersXMLForbids: a tree built in memory with
// characters XML does not allow (a certificate's issuer name may carry
// them into SignedProperties) goes to goxmldsig, which writes them as
// U+FFFD as etree writes the signature: signing such a tree and verifying
// what was written agree.
func TestWriteC14NRefusesCharactersXMLForbids(t *testing.T) {
	for _, v := range []string{"a\x01b", "a\uFFFEb", "a\xffb"} {
		d := etree.NewDocument()
		r := d.CreateElement("r")
		r.CreateElement("e").CreateAttr("a", v)
		r.CreateElement("f").SetText(v)
		for _, el := range []*etree.Element{r, r.ChildElements()[0], r.ChildElements()[1]} {
			var out bytes.Buffer
			if err := writeC14N(&out, el, nil); !errors.Is(err, errC14NUnsupported) {
				t.Errorf("%q in <%s>: err %v, want errC14NUnsupported", v, el.Tag, err)
			}
			got, err := c14n10(el, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := dsig.MakeC14N10RecCanonicalizer().Canonicalize(el)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%q in <%s>: c14n10 %q, goxmldsig %q", v, el.Tag, got, want)
			}
		}
	}
}

// FuzzWriteC14N: whatever etree reads, the direct canonicalizer writes what
// goxmldsig writes for every element, or refuses it.
func FuzzWriteC14N(f *testing.F) {
	for _, doc := range c14nCases {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		d := etree.NewDocument()
		if err := d.ReadFromString(doc); err != nil || d.Root() == nil {
			return
		}
		var walk func(el *etree.Element)
		walk = func(el *etree.Element) {
			compareC14N(t, "fuzz", el, nil)
			for _, c := range el.ChildElements() {
				walk(c)
			}
		}
		walk(d.Root())
	})
}
