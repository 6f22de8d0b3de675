package sample_test

import (
	"bytes"
	"fmt"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/sample"
	"facturad/hacienda/xmlcheck"
)

// TestDocumentsValidateAgainstXSD: the generator's documents (send
// requests turned into documents with NewDocument and calculated), at
// least 40 of every type, parse back to themselves, are numbered
// consistently and validate against the official schemas.
func TestDocumentsValidateAgainstXSD(t *testing.T) {
	xmlcheck.Tool(t, "xmllint")
	const perType = 44
	byType := map[hacienda.DocumentType]map[string][]byte{}
	for i, d := range documents(t, 2026, perType*len(hacienda.DocumentTypes)) {
		b, err := hacienda.MarshalXML(d)
		if err != nil {
			t.Fatalf("document %d (%s): %v", i, d.Type.Abbrev(), err)
		}
		back, err := hacienda.ParseXML(b)
		if err != nil {
			t.Fatalf("document %d (%s): parse: %v", i, d.Type.Abbrev(), err)
		}
		if msgs := hacienda.CheckNumbering(back); len(msgs) > 0 {
			t.Errorf("document %d (%s): numbering: %q", i, d.Type.Abbrev(), msgs)
		}
		if b2, err := hacienda.MarshalXML(back); err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("document %d (%s): the round trip changed it: %v", i, d.Type.Abbrev(), err)
		}
		if byType[d.Type] == nil {
			byType[d.Type] = map[string][]byte{}
		}
		byType[d.Type][fmt.Sprintf("generated #%d %s", i, d.Type.Abbrev())] = xmlcheck.WithPlaceholderSignature(t, b)
	}
	for _, typ := range hacienda.DocumentTypes {
		if n := len(byType[typ]); n < 40 {
			t.Errorf("%s: only %d generated documents", typ.Abbrev(), n)
		}
		xmlcheck.RequireValid(t, typ.RootElement()+"_V4.4.xsd", byType[typ])
	}
}

// documents calls sample.Documents, turning its panic on a generated
// request that does not validate into a test failure.
func documents(t *testing.T, seed int64, n int) (docs []*hacienda.Document) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("sample.Documents(%d, %d): %v", seed, n, r)
		}
	}()
	return sample.Documents(seed, n)
}
