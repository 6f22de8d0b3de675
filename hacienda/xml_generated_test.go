package hacienda

import (
	"bytes"
	"fmt"
	"testing"
)

// TestGeneratedRequestsValidateAgainstXSD runs the same acceptance on the
// package's request generator (GenerateDocuments: send requests turned
// into documents with NewDocument and calculated), at least 40 documents
// of every type.
func TestGeneratedRequestsValidateAgainstXSD(t *testing.T) {
	xmllint(t)
	const perType = 44
	byType := map[DocumentType]map[string][]byte{}
	for i, d := range generateDocuments(t, 2026, perType*len(DocumentTypes)) {
		b, err := MarshalXML(d)
		if err != nil {
			t.Fatalf("document %d (%s): %v", i, d.Type.Abbrev(), err)
		}
		back, err := ParseXML(b)
		if err != nil {
			t.Fatalf("document %d (%s): parse: %v", i, d.Type.Abbrev(), err)
		}
		if msgs := CheckNumbering(back); len(msgs) > 0 {
			t.Errorf("document %d (%s): numbering: %q", i, d.Type.Abbrev(), msgs)
		}
		if b2, err := MarshalXML(back); err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("document %d (%s): round trip: %v %s", i, d.Type.Abbrev(), err, firstDifference(b2, b))
		}
		if byType[d.Type] == nil {
			byType[d.Type] = map[string][]byte{}
		}
		byType[d.Type][fmt.Sprintf("generated #%d %s", i, d.Type.Abbrev())] = withPlaceholderSignature(t, b)
	}
	for _, typ := range DocumentTypes {
		if n := len(byType[typ]); n < 40 {
			t.Errorf("%s: only %d generated documents", typ.Abbrev(), n)
		}
		requireValid(t, xsdFiles[typ], byType[typ])
	}
}

// generateDocuments calls GenerateDocuments, turning its panic on a
// generated request that does not validate into a test failure.
func generateDocuments(t *testing.T, seed int64, n int) (docs []*Document) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("GenerateDocuments(%d, %d): %v", seed, n, r)
		}
	}()
	return GenerateDocuments(seed, n)
}
