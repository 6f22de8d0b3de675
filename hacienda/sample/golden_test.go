package sample_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/sample"
)

var update = flag.Bool("update", false, "write the generated requests kept for package hacienda's tests")

// goldenFile holds generated requests for the tests of package hacienda,
// which cannot import this package (it imports hacienda).
var goldenFile = filepath.Join("..", "testdata", "generated", "requests.json")

// golden is the file's shape.
type golden struct {
	Seed     int64                           `json:"seed"`
	Issuer   hacienda.Issuer                 `json:"issuer"`
	Requests []*hacienda.SendDocumentRequest `json:"requests"`
}

// TestGoldenRequests: the requests kept for package hacienda's tests are
// what the generator makes today (go test ./hacienda/sample -update writes
// them again after a change of the generator).
func TestGoldenRequests(t *testing.T) {
	g := golden{Seed: 1, Issuer: sample.Issuer(), Requests: sample.Requests(1, 70)}
	want, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile(goldenFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what the generator makes; run go test ./hacienda/sample -update", goldenFile)
	}
}
