package sandbox_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/sample"
	"facturad/hacienda/sandbox"
	"facturad/hacienda/xmlcheck"
)

// TestXSDCheck passes a document the engine builds and rejects one with an
// element out of order, with xmllint's words in a -1 row.
func TestXSDCheck(t *testing.T) {
	xmlcheck.Tool(t, "xmllint") // skips, or fails under TEST_REQUIRE_SERVICES, without it
	c, err := sandbox.NewXSDCheck(xmlcheck.SchemaDir())
	if err != nil {
		t.Fatal(err)
	}
	doc := sample.Documents(7, 1)[0] // a factura
	if doc.Type != hacienda.TypeFE {
		t.Fatalf("the first sample is a %s", doc.Type)
	}
	raw, err := hacienda.MarshalXML(doc)
	if err != nil {
		t.Fatal(err)
	}
	good := xmlcheck.WithPlaceholderSignature(t, raw)
	if got := c.Check(context.Background(), good); len(got) != 0 {
		t.Fatalf("a valid document: %q", got)
	}
	bad := bytes.Replace(good, []byte("<ProveedorSistemas>"), []byte("<Sobrante>x</Sobrante><ProveedorSistemas>"), 1)
	got := c.Check(context.Background(), bad)
	if len(got) == 0 || !strings.HasPrefix(got[0], "-1, ") || !strings.Contains(got[0], "Sobrante") {
		t.Fatalf("an unknown element: %q", got)
	}
	if _, err := sandbox.NewXSDCheck(t.TempDir()); err == nil {
		t.Error("a folder without schemas was accepted")
	}
}
