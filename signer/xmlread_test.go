package signer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

// plainCases are documents readPlainXML reads, beside the golden ones.
var plainCases = map[string]string{
	"declaration and white space": "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<r>\n\t<e a=\"1\" b='2'/>\n</r>\n",
	"references":                  `<r a="&amp;&lt;&gt;&quot;&apos;&#9;&#xA;&#x1F600;">x &amp; y &#169; &#xe9;</r>`,
	"prefixes":                    `<p:r xmlns:p="urn:p" xmlns="urn:d"><p:e p:a="1" b = "2" /><f/></p:r>`,
	"non-ASCII text":              `<r a="ñandú">Ñ €𝄞 ></r>`,
	"single quotes with double":   `<r a='say "hi"'/>`,
	"end tag with space":          `<r><e></e ></r >`,
}

// notPlainCases are left to etree, which reads or refuses them itself.
var notPlainCases = []string{
	"<!-- c --><r/>", "<r><!-- c --></r>", "<r><![CDATA[x]]></r>", "<!DOCTYPE r><r/>", "<r><?pi x?></r>",
	"<r>\r\n</r>", "<r a=\"1\" a=\"2\"/>", "<r>&nbsp;</r>", "<r>&#0;</r>", "<r>\x01</r>", "<r>\xff</r>",
	"<r></e>", "<r>", "<r/><r/>", "<r/>x", "<é/>", "<r a:b:c=\"1\"/>", "<1/>", "<r a=1/>", "<r a=\"<\"/>",
	"<?xml version=\"1.1\"?><r/>", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><r/>", " <?xml version=\"1.0\"?><r/>",
	"<r a=\"1\"b=\"2\"/>", "", "x",
}

func TestReadPlainXMLMatchesEtree(t *testing.T) {
	docs := goldenDocs(t, plainCases)
	for name, doc := range docs {
		got, err := readPlainXML(doc)
		if strings.HasPrefix(name, "extra-namespaces") {
			// Comments, a CDATA section and carriage returns: etree's.
			if err == nil {
				t.Errorf("%s: read as plain XML", name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: not read as plain XML: %v", name, err)
			continue
		}
		want := etree.NewDocument()
		if err := want.ReadFromBytes(doc); err != nil {
			t.Fatalf("%s: etree: %v", name, err)
		}
		if diff := treeDiff(&got.Element, &want.Element); diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
	}
}

func TestReadPlainXMLLeavesTheRestToEtree(t *testing.T) {
	for _, doc := range notPlainCases {
		if _, err := readPlainXML([]byte(doc)); err == nil {
			t.Errorf("%q read as plain XML", doc)
		}
	}
}

func FuzzReadPlainXML(f *testing.F) {
	for _, doc := range plainCases {
		f.Add(doc)
	}
	for _, doc := range notPlainCases {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		got, err := readPlainXML([]byte(doc))
		if err != nil {
			return
		}
		want := etree.NewDocument()
		if err := want.ReadFromString(doc); err != nil {
			t.Fatalf("read as plain XML, but etree refuses it: %v", err)
		}
		if diff := treeDiff(&got.Element, &want.Element); diff != "" {
			t.Fatal(diff)
		}
	})
}

// treeDiff describes the first difference between two etree trees, or is
// empty.
func treeDiff(a, b *etree.Element) string {
	if a.Space != b.Space || a.Tag != b.Tag {
		return fmt.Sprintf("element %s, want %s", a.FullTag(), b.FullTag())
	}
	if len(a.Attr) != len(b.Attr) {
		return fmt.Sprintf("<%s> has %d attributes, want %d", a.FullTag(), len(a.Attr), len(b.Attr))
	}
	for i := range a.Attr {
		x, y := a.Attr[i], b.Attr[i]
		if x.Space != y.Space || x.Key != y.Key || x.Value != y.Value {
			return fmt.Sprintf("<%s> attribute %d: %s=%q, want %s=%q", a.FullTag(), i, x.FullKey(), x.Value, y.FullKey(), y.Value)
		}
	}
	if len(a.Child) != len(b.Child) {
		return fmt.Sprintf("<%s> has %d children, want %d", a.FullTag(), len(a.Child), len(b.Child))
	}
	for i := range a.Child {
		switch x := a.Child[i].(type) {
		case *etree.Element:
			y, ok := b.Child[i].(*etree.Element)
			if !ok {
				return fmt.Sprintf("<%s> child %d is an element, want %T", a.FullTag(), i, b.Child[i])
			}
			if x.Parent() != a || x.Index() != i {
				return fmt.Sprintf("<%s> child %d: parent or index not set", a.FullTag(), i)
			}
			if d := treeDiff(x, y); d != "" {
				return d
			}
		case *etree.CharData:
			y, ok := b.Child[i].(*etree.CharData)
			if !ok || x.Data != y.Data || x.IsWhitespace() != y.IsWhitespace() || x.IsCData() != y.IsCData() {
				return fmt.Sprintf("<%s> child %d: text %q (white space %v), want %v", a.FullTag(), i, x.Data, x.IsWhitespace(), b.Child[i])
			}
		case *etree.ProcInst:
			y, ok := b.Child[i].(*etree.ProcInst)
			if !ok || x.Target != y.Target || x.Inst != y.Inst {
				return fmt.Sprintf("<%s> child %d: instruction %q %q, want %v", a.FullTag(), i, x.Target, x.Inst, b.Child[i])
			}
		default:
			return fmt.Sprintf("<%s> child %d: unexpected %T", a.FullTag(), i, x)
		}
	}
	return ""
}
