package hacienda

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The generated requests of package sample, kept in testdata for this
// package's tests (sample imports hacienda, so these tests cannot import
// it; sample's TestGoldenRequests keeps the file true).
var loadGenerated = sync.OnceValues(func() (generatedFile, error) {
	var g generatedFile
	b, err := os.ReadFile(filepath.Join("testdata", "generated", "requests.json"))
	if err != nil {
		return g, err
	}
	return g, json.Unmarshal(b, &g)
})

type generatedFile struct {
	Issuer   Issuer            `json:"issuer"`
	Requests []json.RawMessage `json:"requests"`
}

// testIssuer is the issuer the generated requests were made for.
func testIssuer(t testing.TB) Issuer {
	t.Helper()
	g, err := loadGenerated()
	if err != nil {
		t.Fatalf("generated requests: %v", err)
	}
	return g.Issuer
}

// generatedRequests decodes the generated requests afresh (callers may
// change them), at most n of them.
func generatedRequests(t testing.TB, n int) []*SendDocumentRequest {
	t.Helper()
	g, err := loadGenerated()
	if err != nil {
		t.Fatalf("generated requests: %v", err)
	}
	out := make([]*SendDocumentRequest, 0, min(n, len(g.Requests)))
	for i, raw := range g.Requests[:min(n, len(g.Requests))] {
		req, err := DecodeSendRequest(raw)
		if err != nil {
			t.Fatalf("generated request %d: %v", i, err)
		}
		out = append(out, req)
	}
	return out
}
